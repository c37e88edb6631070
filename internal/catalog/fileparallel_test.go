package catalog

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// checkWays: reading text whole, in one stretch or several, gives what reading it a line at a
// time gives: the same tools, or the same error, with and without the name checks. readErr ends
// the text as a failed read would.
func checkWays(t *testing.T, text string, readErr error) {
	t.Helper()
	for _, opts := range []ReadOptions{{}, {ValidNames: true}, {ValidNames: true, UniqueNames: true}} {
		var r io.Reader = iotest.OneByteReader(strings.NewReader(text)) // not read whole
		if readErr != nil {
			r = io.MultiReader(r, iotest.ErrReader(readErr))
		}
		want, wantErr := ReadFileWith(r, opts)
		for workers := 1; workers <= 5; workers++ {
			got, err := readLines([]byte(text), readErr, workers, opts)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%q in %d stretches, %+v: err = %v, a line at a time %v", text, workers, opts, err, wantErr)
			}
			var le *LineError
			if err != nil && !errors.As(err, &le) {
				t.Fatalf("%q: %v is not a LineError", text, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%q in %d stretches, %+v (-a line at a time +whole):\n%s", text, workers, opts, diff)
			}
		}
	}
}

func TestReadFileWays(t *testing.T) {
	lines := []string{
		`{"id":"a"}`, `{"id":"b","name":"nb","source":"builtin","input_schema":{"properties":{"x":{}}}}`,
		``, `  `, `{"id":"a","source":"web"}`, `{"id":"c","source":"web"}`, `{"id":"d","input_schema":[1]}`,
		`{"id":"b","input_schema":"x"}`, `{"id": nope}`, `{"name":"x"}`, `{"id":"e"} x`, `{"id":"f","extra":1}`,
		`{"id":"g","input_schema":null,"server":"s","mcp_tool_name":"t"}`, `{"ID":"h"}`, "{\"id\":\"i\"}\r",
		`{"id":"j\u00e9","description":"caf\u00e9 ☕"}`, "\ufeff" + `{"id":"k"}`, `{"id":"l","name":"a b"}`,
		`{"id":"m","name":"nb"}`, `{"id":"nb"}`,
	}
	checkWays(t, "", nil)
	checkWays(t, "\n\n", nil)
	checkWays(t, "", io.ErrUnexpectedEOF)
	for i, a := range lines {
		for j, b := range lines {
			for _, sep := range []string{"\n", "\n\n", "\r\n"} {
				text := a + sep + b + sep + lines[(i+j)%len(lines)]
				checkWays(t, text, nil)
				checkWays(t, text+"\n", nil)
				checkWays(t, "\ufeff"+text, nil)
				if i%3 == 0 {
					checkWays(t, text, io.ErrUnexpectedEOF)
				}
			}
		}
	}
}

// TestReadFileLongLines: a line of maxLine bytes or more is refused as the line scanner refuses
// it, whichever way the text is read, and one byte shorter is read.
func TestReadFileLongLines(t *testing.T) {
	if testing.Short() {
		t.Skip("reads lines of 16 MiB")
	}
	for _, n := range []int{maxLine - 1, maxLine} {
		long := `{"id":"long","description":"` + strings.Repeat("x", n-len(`{"id":"long","description":""}`)) + `"}`
		for _, text := range []string{long, long + "\n", `{"id":"a"}` + "\n" + long + "\n" + `{"id":"b"}`, `{"id":"a"}` + "\n" + `{"id":"a"}` + "\n" + long} {
			want, wantErr := ReadFile(struct{ io.Reader }{strings.NewReader(text)}) // not read whole
			got, err := ReadFile(strings.NewReader(text))
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || len(got) != len(want) {
				t.Errorf("line of %d: whole: %d tools, %v; a line at a time: %d tools, %v", n, len(got), err, len(want), wantErr)
			}
		}
	}
}

func FuzzReadFileWays(f *testing.F) {
	f.Add("{\"id\":\"a\"}\n\n{\"id\":\"b\",\"source\":\"client\"}\n{\"id\":\"a\",\"source\":\"x\"}", false)
	f.Add("{\"id\":\"a\"}\r\n{\"name\":\"b\"}\n", true)
	f.Fuzz(func(t *testing.T, text string, failRead bool) {
		var readErr error
		if failRead {
			readErr = io.ErrUnexpectedEOF
		}
		checkWays(t, text, readErr)
	})
}

// TestReadFileBlankLinesCostNoTools: text read whole holds a place for a tool per line that could
// be one, not per line: a megabyte of blank lines is not a million tools' worth of memory
// (176 MB), whichever way it is cut. A place is 176 bytes, and a line that can be a tool at
// least 10: no text costs much more than 18 times its length.
func TestReadFileBlankLinesCostNoTools(t *testing.T) {
	var interleaved strings.Builder
	for i := range 1 << 14 {
		fmt.Fprintf(&interleaved, `{"id":"t%d"}`+"%s", i, strings.Repeat("\n", 64))
	}
	texts := []struct {
		name  string
		text  string
		tools int
	}{
		{"newlines", strings.Repeat("\n", 1<<20) + `{"id":"a"}`, 1},
		{"spaces", strings.Repeat(" \r\n", 1<<18) + `{"id":"a"}` + "\n\t\n", 1},
		{"interleaved", interleaved.String(), 1 << 14},
	}
	for _, tt := range texts {
		for _, workers := range []int{1, 3} {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			tools, err := readLines([]byte(tt.text), nil, workers, ReadOptions{})
			runtime.ReadMemStats(&after)
			if err != nil || len(tools) != tt.tools {
				t.Errorf("%s in %d stretches: %d tools, %v; want %d", tt.name, workers, len(tools), err, tt.tools)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 24*uint64(len(tt.text)) {
				t.Errorf("%s in %d stretches: %d bytes allocated for %d of text", tt.name, workers, alloc, len(tt.text))
			}
		}
	}
}
