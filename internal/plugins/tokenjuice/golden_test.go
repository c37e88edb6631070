package tokenjuice

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden/*/want.txt")

// TestGolden compacts real outputs recorded on a development machine (testdata/golden/record.sh)
// and compares them with reviewed golden files. Each golden file starts with the rule and the
// sizes, so that a reader sees at a glance what happened.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/golden/*/output.txt")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, p := range dirs {
		dir := filepath.Dir(p)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			read := func(name string) string {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			exit, err := strconv.Atoi(strings.TrimSpace(read("exit_code.txt")))
			if err != nil {
				t.Fatal(err)
			}
			in := Input{Command: strings.TrimRight(read("cmd.txt"), "\n"), ExitCode: exit, Output: []byte(read("output.txt")), Handle: "tj_000000000000"}
			out := Compact(in)
			if out.Err != nil {
				t.Fatalf("rule error: %v", out.Err)
			}
			got := fmt.Sprintf("rule: %s | raw: %v | reason: %s | chars: %d -> %d | exit: %d\n----\n%s",
				out.Rule, out.Raw, out.Reason, out.RawChars, out.CompactChars, exit, out.Text)
			want := filepath.Join(dir, "want.txt")
			if *update {
				if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			w, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(w), got); diff != "" {
				t.Errorf("compacted text differs from %s (-want +got):\n%s", want, diff)
			}
		})
	}
}
