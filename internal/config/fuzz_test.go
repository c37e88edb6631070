package config

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// FuzzParse checks that any input yields either a Config whose resolved values respect their
// bounds, or errors that are all *SyntaxError or *Error; never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{tools: {toolSearch: {mode: "tools", maxSearchLimit: 3, searchDefaultLimit: 9}}}`))
	f.Add([]byte(`{mcp: {servers: {x: {url: "https://h", headers: {A: {"$env": "B"}}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		if err != nil {
			var se *SyntaxError
			if errors.As(err, &se) {
				return
			}
			errs := Errors(err)
			joined, ok := err.(interface{ Unwrap() []error })
			if len(errs) == 0 || !ok || len(joined.Unwrap()) != len(errs) {
				t.Fatalf("error is neither a syntax error nor joined *Errors: %v", err)
			}
			for i := 1; i < len(errs); i++ {
				if errs[i-1].Path > errs[i].Path {
					t.Fatalf("errors not sorted by path: %v", err)
				}
			}
			return
		}
		_ = fmt.Sprintf("%+v", cfg)
		ts := cfg.ToolSearch()
		if ts.MaxSearchLimit < 1 || ts.MaxSearchLimit > 50 || ts.SearchDefaultLimit < 1 || ts.SearchDefaultLimit > ts.MaxSearchLimit ||
			ts.CodeTimeout < time.Second || ts.CodeTimeout > time.Minute || (ts.Mode != "code" && ts.Mode != "tools") {
			t.Fatalf("ToolSearch out of bounds: %+v", ts)
		}
		for name, s := range cfg.MCP.Servers {
			if (s.Command == "") == (s.URL == "") {
				t.Fatalf("server %s has neither or both of command and url", name)
			}
		}
		// Every name the exec tools withhold is one a SecretRef could have named.
		for _, name := range cfg.SecretEnv() {
			if !envName().MatchString(name) {
				t.Fatalf("SecretEnv holds %q, not a variable name", name)
			}
		}
	})
}
