package tokenjuice

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/catalog"
)

// TestMiddlewareWritesNoFiles: the reference tokenjuice leaves a metadata file with the
// command line in ~/.tokenjuice/artifacts on every command, which would leak what the
// agent ran onto disk; nodmix keeps raw outputs in memory only. Every recorded output
// goes through the middleware and tokenjuice_raw with the home, XDG, temp and working
// directories all empty and fresh, and none of them may gain an entry.
func TestMiddlewareWritesNoFiles(t *testing.T) {
	cases := loadCorpus(t) // before Chdir: the corpus is found relative to the package
	const marker = "nodmixnofilesmarker7c41e9"
	watched := map[string]string{}
	for _, env := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "TMPDIR"} {
		dir := t.TempDir()
		t.Setenv(env, dir)
		watched[env] = dir
	}
	watched["working directory"] = t.TempDir()
	t.Chdir(watched["working directory"])

	p := startPlugin(t, "")
	mw := p.Middleware()
	raw := p.Tools()[0]
	compacted := 0
	for _, c := range cases {
		in := execResult(c.cmd+" # "+marker, c.exit, string(c.raw))
		got, err := mw.Process(context.Background(), catalog.Call{Tool: bashTool, Session: "s1"}, in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got == in {
			continue
		}
		compacted++
		var st struct {
			Tokenjuice struct {
				Handle string `json:"handle"`
			} `json:"tokenjuice"`
		}
		if err := json.Unmarshal(got.Structured, &st); err != nil || st.Tokenjuice.Handle == "" {
			t.Fatalf("%s: no handle in %s (%v)", c.name, got.Structured, err)
		}
		args, _ := json.Marshal(map[string]string{"handle": st.Tokenjuice.Handle})
		if res, err := raw.Exec.Execute(context.Background(), catalog.Call{Tool: &raw.Tool, Args: args}); err != nil || res.IsError {
			t.Fatalf("%s: tokenjuice_raw: %v %v", c.name, err, res)
		}
	}
	// Otherwise the code path that stores and reports raw outputs never ran.
	if compacted < len(cases)/2 {
		t.Fatalf("only %d of %d recorded outputs were compacted", compacted, len(cases))
	}
	for what, dir := range watched {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || path == dir {
				return err
			}
			leak := ""
			if !d.IsDir() {
				if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), marker) {
					leak = " (it holds the command line)"
				}
			}
			t.Errorf("%s: %s appeared%s", what, path, leak)
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
}
