package tokenjuice

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/plugin"
)

// TestStartReportsEveryError: a section with several bad values reports each, with its whole
// path, as the rest of the config file does.
func TestStartReportsEveryError(t *testing.T) {
	const section = "plugins.entries.tokenjuice.config."
	tests := []struct {
		name, raw string
		want      []string
	}{
		{"a type and a range", `{"minSavings":"x","maxRawBytes":-5}`, []string{
			section + "maxRawBytes: must be a positive integer (bytes)",
			section + "minSavings: must be a number between 0 and 1 (exclusive)"}},
		{"all three and an unknown key", `{"minSavedChars":-1,"minSavings":1,"maxRawBytes":1.5,"maxRawByte":1}`, []string{
			section + "maxRawByte: unknown field (allowed: maxRawBytes, minSavings, minSavedChars)",
			section + "maxRawBytes: must be a positive integer (bytes)",
			section + "minSavedChars: must be a non-negative integer",
			section + "minSavings: must be a number between 0 and 1 (exclusive)"}},
		{"good values beside two bad ones", `{"minSavings":0.3,"zz":1,"maxRawBytes":64,"minSavedChars":"x"}`, []string{
			section + "minSavedChars: must be a non-negative integer",
			section + "zz: unknown field (allowed: maxRawBytes, minSavings, minSavedChars)"}},
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
