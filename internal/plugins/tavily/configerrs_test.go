package tavily

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/plugin"
)

// TestStartReportsEveryError: a section with several bad values reports each, with its whole
// path, as the rest of the config file does; a value of the wrong type stops only itself.
func TestStartReportsEveryError(t *testing.T) {
	const section = "plugins.entries.tavily.config."
	tests := []struct {
		name, raw string
		want      []string
	}{
		{"a type and a range", `{"webSearch":{"baseUrl":5,"searchTimeoutSeconds":-1}}`, []string{
			section + "webSearch.baseUrl: must be a string",
			section + "webSearch.searchTimeoutSeconds: must be from 1 to 600 seconds"}},
		{"two ranges", `{"webSearch":{"baseUrl":"ftp://x","extractTimeoutSeconds":0.5}}`, []string{
			section + "webSearch.baseUrl: must be an absolute http(s) URL like https://api.tavily.com",
			section + "webSearch.extractTimeoutSeconds: must be from 1 to 600 seconds"}},
		{"two types", `{"webSearch":{"apiKey":5,"searchTimeoutSeconds":"30"}}`, []string{
			section + `webSearch.apiKey: must be a string or a SecretRef: {"$env": "NAME"} or {"$file": "/path"}`,
			section + "webSearch.searchTimeoutSeconds: must be a number of seconds"}},
		{"unknown keys and a value", `{"webSearch":{"colour":1,"apiKye":"x","baseUrl":"x"},"extra":{}}`, []string{
			section + "extra: unknown field",
			section + "webSearch.apiKye: unknown field",
			section + "webSearch.baseUrl: must be an absolute http(s) URL like https://api.tavily.com",
			section + "webSearch.colour: unknown field"}},
		{"a relative file and a range", `{"webSearch":{"apiKey":{"$file":"k"},"searchTimeoutSeconds":601,"baseUrl":null}}`, []string{
			section + "webSearch.apiKey.$file: must be an absolute path (or start with ~/)",
			section + "webSearch.searchTimeoutSeconds: must be from 1 to 600 seconds"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := plugin.Start(context.Background(), Factory, json.RawMessage(tt.raw), plugin.Host{})
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
