package exec

import (
	"encoding/json"
	"testing"
	"time"
)

func FuzzParseArgs(f *testing.F) {
	f.Add([]byte(`{"command":["git","status"]}`), false)
	f.Add([]byte(`{"command":"ls -la | head","cwd":"/srv","env":{"A":"b"},"timeout":1.5}`), true)
	f.Add([]byte(`{"command":null}`), true)
	f.Add([]byte(`{"command":[""],"timeout":1e308}`), false)
	f.Fuzz(func(t *testing.T, raw []byte, shell bool) {
		r, err := parseArgs(json.RawMessage(raw), shell, time.Minute, time.Hour)
		if err != nil {
			if _, ok := err.(*argsError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if len(r.argv) == 0 || r.argv[0] == "" || r.command == "" {
			t.Fatalf("accepted an empty command: %+v", r)
		}
		if r.timeout <= 0 || r.timeout > time.Hour {
			t.Fatalf("timeout %v out of range", r.timeout)
		}
		if shell && (len(r.argv) != 3 || r.argv[2] != r.command) {
			t.Fatalf("bash argv %q does not run the script", r.argv)
		}
	})
}
