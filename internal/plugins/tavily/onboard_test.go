package tavily

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConfigureEdits(t *testing.T) {
	base := []Edit{
		{Path: "plugins.entries.tavily.enabled", Value: "true"},
		{Path: "tools.web.search.provider", Value: `"tavily"`},
	}
	tests := []struct {
		name                     string
		provider, apiKeyEnv, key string
		want                     []Edit
		wantErr                  string
		hidden                   string // what the error must not show
	}{
		{name: "key from the environment at run time", provider: "tavily", want: base},
		{name: "env ref", provider: "Tavily", apiKeyEnv: "TAVILY_API_KEY",
			want: append(base[:2:2], Edit{Path: "plugins.entries.tavily.config.webSearch.apiKey", Value: `{"$env":"TAVILY_API_KEY"}`})},
		{name: "literal key", provider: "tavily", key: " tvly-abc\"123 ",
			want: append(base[:2:2], Edit{Path: "plugins.entries.tavily.config.webSearch.apiKey", Value: `"tvly-abc\"123"`, Secret: true})},
		{name: "unknown provider", provider: "brave", wantErr: `provider: "brave" is not a web search provider (supported: tavily)`},
		{name: "no provider", provider: "", wantErr: `provider: "" is not a web search provider`},
		{name: "both", provider: "tavily", apiKeyEnv: "A", key: "tvly-x", wantErr: "api-key-env and api-key: give one or the other, not both"},
		{name: "bad env name", provider: "tavily", apiKeyEnv: "MY-KEY", wantErr: `api-key-env: "MY-KEY" is not a valid environment variable name`},
		{name: "key pasted as the provider", provider: "tvly-dev-0123456789abcdefghijklmnopqrstuv",
			wantErr: "provider: the value given (41 characters, not shown: it may be a key) is not a web search provider", hidden: "0123456789"},
		{name: "key pasted as the env name", provider: "tavily", apiKeyEnv: "tvly-dev-0123456789abcdefghijklmnopqrstuv",
			wantErr: "api-key-env: the value given (41 characters, not shown: it may be a key) is not a valid environment variable name", hidden: "0123456789"},
		{name: "key with a space", provider: "tavily", key: "tvly-a b", wantErr: "api-key: must not contain spaces or control characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConfigureEdits(tt.provider, tt.apiKeyEnv, tt.key)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if tt.key != "" && strings.Contains(err.Error(), tt.key) || tt.hidden != "" && strings.Contains(err.Error(), tt.hidden) {
					t.Errorf("the error shows the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("edits (-want +got):\n%s", d)
			}
			for _, e := range got {
				if !json.Valid([]byte(e.Value)) {
					t.Errorf("%s: value %s is not JSON (so not JSON5)", e.Path, e.Value)
				}
			}
		})
	}
}

// The edits, applied to an empty config, give a config this plugin accepts.
func TestConfigureEditsDecode(t *testing.T) {
	edits, err := ConfigureEdits("tavily", "MY_TAVILY", "")
	if err != nil {
		t.Fatal(err)
	}
	var ref json.RawMessage
	for _, e := range edits {
		if e.Path == PathAPIKey {
			ref = json.RawMessage(e.Value)
		}
	}
	p := New()
	if err := p.Decode(json.RawMessage(`{"webSearch":{"apiKey":` + string(ref) + `}}`)); err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil || viewOf(p.cfg).KeyRef != "$env MY_TAVILY" {
		t.Errorf("validate: %v, key %v", err, p.cfg.apiKey)
	}
}
