package config

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// referenceGolden holds the reference implementation's resolved tools.toolSearch, one
// "config <input> => <resolved>" line per case.
const referenceGolden = "../../testdata/reference/golden/toolsearch-golden.txt"

// TestToolSearchReferenceGolden resolves every config line of the reference golden file. nodmix
// departs from the reference on purpose in two places, checked here explicitly: an unset
// toolSearch is off (the reference turns on tools mode), and mode "directory" is not offered,
// so it is a validation error.
func TestToolSearchReferenceGolden(t *testing.T) {
	f, err := os.Open(referenceGolden)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type resolved struct {
		Enabled            bool   `json:"enabled"`
		Mode               string `json:"mode"`
		CodeTimeoutMs      int    `json:"codeTimeoutMs"`
		SearchDefaultLimit int    `json:"searchDefaultLimit"`
		MaxSearchLimit     int    `json:"maxSearchLimit"`
	}
	cases := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "config ")
		if !ok {
			continue
		}
		input, output, ok := strings.Cut(rest, " => ")
		if !ok {
			t.Fatalf("malformed golden line %q", sc.Text())
		}
		cases++
		var want resolved
		if err := json.Unmarshal([]byte(output), &want); err != nil {
			t.Fatalf("golden output %q: %v", output, err)
		}
		doc := `{tools: {toolSearch: ` + input + `}}`
		switch {
		case input == "undefined":
			doc = `{}`
			// nodmix: unset means off, resolved exactly as the golden's false.
			want.Enabled, want.Mode = false, "code"
		case strings.Contains(input, `"directory"`):
			_, err := Parse([]byte(doc))
			if got := messages(err); !cmp.Equal(got, []string{"tools.toolSearch.mode: must be one of code, tools"}) {
				t.Errorf("%s: errors %v, want the mode rule", input, got)
			}
			continue
		}
		cfg, err := Parse([]byte(doc))
		if err != nil {
			t.Errorf("%s: %v", input, err)
			continue
		}
		ts := cfg.ToolSearch()
		got := resolved{ts.Enabled, ts.Mode, int(ts.CodeTimeout / time.Millisecond), ts.SearchDefaultLimit, ts.MaxSearchLimit}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("toolSearch %s (-want +got):\n%s", input, diff)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cases < 7 {
		t.Fatalf("read only %d config lines from the golden file", cases)
	}
}

func TestToolSearchClamps(t *testing.T) {
	tests := []struct {
		in   string
		want ToolSearch
	}{
		{`false`, ToolSearch{false, "code", 10 * time.Second, 8, 20}},
		{`{}`, ToolSearch{false, "code", 10 * time.Second, 8, 20}},
		{`{enabled: true}`, ToolSearch{true, "code", 10 * time.Second, 8, 20}},
		{`{mode: "tools"}`, ToolSearch{true, "tools", 10 * time.Second, 8, 20}},
		{`{codeTimeoutMs: 1}`, ToolSearch{true, "code", time.Second, 8, 20}},
		{`{codeTimeoutMs: 1500.5}`, ToolSearch{true, "code", 10 * time.Second, 8, 20}},
		{`{codeTimeoutMs: -5}`, ToolSearch{true, "code", 10 * time.Second, 8, 20}},
		{`{codeTimeoutMs: 1e300}`, ToolSearch{true, "code", time.Minute, 8, 20}},
		{`{maxSearchLimit: 0.5, searchDefaultLimit: 30}`, ToolSearch{true, "code", 10 * time.Second, 20, 20}},
		{`{maxSearchLimit: 51, searchDefaultLimit: 50}`, ToolSearch{true, "code", 10 * time.Second, 50, 50}},
		{`{maxSearchLimit: 1, searchDefaultLimit: 1}`, ToolSearch{true, "code", 10 * time.Second, 1, 1}},
		{`{searchDefaultLimit: 0x10}`, ToolSearch{true, "code", 10 * time.Second, 16, 20}},
	}
	for _, tt := range tests {
		cfg, err := Parse([]byte(`{tools: {toolSearch: ` + tt.in + `}}`))
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, cfg.ToolSearch()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.in, diff)
		}
	}
}
