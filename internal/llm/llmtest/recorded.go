package llmtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
)

// CheckRecorded decodes every recorded response matching glob (streams when stream is set),
// each in a subtest named after the file, with the dialect dialect returns for that name, and
// compares the events (see Render) with the golden file beside it: the recording's path with
// its extension replaced by .events. A stream decodes to the same events read a byte at a time,
// and its deltas add up to its EventDone (see CheckDeltas); a whole response decodes to one
// EventDone or an error. It fails when nothing matches glob.
func CheckRecorded(t *testing.T, glob string, stream bool, dialect func(name string) llm.Dialect, update bool) {
	t.Helper()
	files, _ := filepath.Glob(glob)
	if len(files) == 0 {
		t.Fatalf("no recordings match %s", glob)
	}
	for _, f := range files {
		base := strings.TrimSuffix(f, filepath.Ext(f))
		name := filepath.Base(base)
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			d := dialect(name)
			evs, err := Collect(t, d.Decode(bytes.NewReader(in), stream))
			got := Render(evs, err)
			Golden(t, base+".events", []byte(got), update)
			if !stream {
				if err == nil && len(evs) != 1 {
					t.Errorf("a whole response decodes to %d events, want one EventDone", len(evs))
				}
				return
			}
			evs2, err2 := Collect(t, d.Decode(iotest.OneByteReader(bytes.NewReader(in)), true))
			if diff := cmp.Diff(got, Render(evs2, err2)); diff != "" {
				t.Errorf("read a byte at a time (-whole +bytes):\n%s", diff)
			}
			CheckDeltas(t, evs)
		})
	}
}

// AddRecorded adds the recorded responses matching each glob to f's seed corpus.
func AddRecorded(f *testing.F, globs ...string) {
	f.Helper()
	for _, glob := range globs {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
}
