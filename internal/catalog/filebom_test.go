package catalog

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// readAllWays reads text as a regular file is read (whole, in one stretch and in three) and as a
// pipe is (a line at a time), and fails unless they agree; it returns the ids read, or the error.
func readAllWays(t *testing.T, text string, opts ReadOptions) (ids []string, err string) {
	t.Helper()
	tools, e := ReadFileWith(iotest.OneByteReader(strings.NewReader(text)), opts)
	for _, workers := range []int{1, 3} {
		whole, we := readLines([]byte(text), nil, workers, opts)
		if fmt.Sprint(we) != fmt.Sprint(e) || len(whole) != len(tools) {
			t.Fatalf("%q in %d stretches: %d tools, %v; a line at a time %d tools, %v", text, workers, len(whole), we, len(tools), e)
		}
	}
	if std, se := ReadFileWith(strings.NewReader(text), opts); fmt.Sprint(se) != fmt.Sprint(e) || len(std) != len(tools) {
		t.Fatalf("%q read whole: %d tools, %v; a line at a time %d tools, %v", text, len(std), se, len(tools), e)
	}
	if e != nil {
		return nil, e.Error()
	}
	for _, tl := range tools {
		ids = append(ids, tl.ID)
	}
	return ids, ""
}

// TestReadFileBOM: a byte order mark at the very start of a catalog file, as Windows editors
// write one, is skipped whichever way the file is read; anywhere else it is refused, as before.
func TestReadFileBOM(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	// Lines after the first make the text long enough to be cut into stretches.
	var tail strings.Builder
	for i := range 40 {
		fmt.Fprintf(&tail, "{\"id\":\"t%d\"}\n", i)
	}
	tests := []struct {
		name, text string
		ids        int    // tools read, when err is ""
		err        string // the error, if any
	}{
		{"at the start", bom + `{"id":"a","name":"a"}` + "\n", 1, ""},
		{"at the start, crlf", bom + `{"id":"a"}` + "\r\n" + `{"id":"b"}` + "\r\n", 2, ""},
		{"then space", bom + "  \t" + `{"id":"a"}`, 1, ""},
		{"then a blank line", bom + "\n\n" + `{"id":"a"}`, 1, ""},
		{"alone", bom, 0, ""},
		{"alone, then a line", bom + "\n" + `{"id":"a"}`, 1, ""},
		{"before many lines", bom + tail.String(), 40, ""},
		{"twice", bom + bom + `{"id":"a"}`, 0, "line 1: not a catalog entry: invalid character 'ï' looking for beginning of value"},
		{"on line 2", `{"id":"a"}` + "\n" + bom + `{"id":"b"}`, 0, "line 2: not a catalog entry: invalid character 'ï' looking for beginning of value"},
		{"after space", " " + bom + `{"id":"a"}`, 0, "line 1: not a catalog entry: invalid character 'ï' looking for beginning of value"},
		{"inside a line", `{"id":"a",` + bom + `"name":"b"}`, 0, "line 1: not a catalog entry: invalid character 'ï' looking for beginning of object key string"},
		{"mid-file, long", tail.String() + bom + `{"id":"z"}`, 0, "line 41: not a catalog entry: invalid character 'ï' looking for beginning of value"},
	}
	for _, tt := range tests {
		ids, err := readAllWays(t, tt.text, ReadOptions{})
		if diff := cmp.Diff(tt.err, err); diff != "" {
			t.Errorf("%s: error (-want +got):\n%s", tt.name, diff)
		}
		if len(ids) != tt.ids {
			t.Errorf("%s: %d tools, want %d", tt.name, len(ids), tt.ids)
		}
	}
}

// TestReadFileBOMCountsToLineOne: the mark counts towards the length of line 1 whichever way
// the file is read, as the line scanner of a pipe counts it.
func TestReadFileBOMCountsToLineOne(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a line of 16 MiB")
	}
	long := "\xef\xbb\xbf" + `{"id":"long","description":"` + strings.Repeat("x", maxLine-3-len(`{"id":"long","description":""}`)) + `"}`
	for _, text := range []string{long, long[:len(long)-3] + `x"}`} {
		want, wantErr := ReadFile(struct{ io.Reader }{strings.NewReader(text)}) // a line at a time
		got, err := ReadFile(strings.NewReader(text))
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || len(got) != len(want) {
			t.Errorf("line of %d: whole: %d tools, %v; a line at a time: %d tools, %v", len(text), len(got), err, len(want), wantErr)
		}
	}
}

// TestReadFileValidNames: with ValidNames, a line whose model-facing name is not one a provider
// accepts is refused with its line, the field and the rule, whichever way the file is read;
// without it the name is kept, as a retrieval set publishes it.
func TestReadFileValidNames(t *testing.T) {
	const rule = "must match ^[A-Za-z0-9_-]{1,64}$"
	tests := []struct {
		name, text string
		err        string
	}{
		{"valid", `{"id":"mcp:s:t","name":"mcp__s__t"}` + "\n" + `{"id":"plain_id-2"}`, ""},
		{"a dot", `{"id":"a","name":"a"}` + "\n" + `{"id":"b","name":"b.c"}`, `line 2: name: "b.c" ` + rule},
		{"a space", `{"id":"b","name":"do it"}`, `line 1: name: "do it" ` + rule},
		{"the id stands for it", "\n" + `{"id":"mcp:s:t"}`, `line 2: name: is missing, and the id "mcp:s:t" that stands for it ` + rule},
		{"null name", `{"id":"x y","name":null}`, `line 1: name: is missing, and the id "x y" that stands for it ` + rule},
		{"64 bytes", `{"id":"a","name":"` + strings.Repeat("n", 64) + `"}`, ""},
		{"65 bytes", `{"id":"a","name":"` + strings.Repeat("n", 65) + `"}`, `line 1: name: "` + strings.Repeat("n", 65) + `" ` + rule},
		{"a megabyte, cut", `{"id":"a","name":"` + strings.Repeat("n", 1<<20) + `"}`, `line 1: name: "` + strings.Repeat("n", 256) + `"… (1048576 bytes) ` + rule},
		{"cut on a rune", `{"id":"a","name":"` + strings.Repeat("n", 255) + `ééé"}`, `line 1: name: "` + strings.Repeat("n", 255) + `"… (261 bytes) ` + rule},
		{"a long duplicate id, cut", `{"name":"a","id":"` + strings.Repeat("i", 300) + `"}` + "\n" + `{"name":"b","id":"` + strings.Repeat("i", 300) + `"}`, `line 2: id: "` + strings.Repeat("i", 256) + `"… (300 bytes) is already used on line 1`},
		{"control character", `{"id":"a","name":"a\u001b[2J"}`, `line 1: name: "a\x1b[2J" ` + rule},
		{"a duplicate id is named first", `{"id":"a"}` + "\n" + `{"id":"a","name":"b.c"}`, `line 2: id: "a" is already used on line 1`},
		{"a bad source is named first", `{"id":"a","name":"b.c","source":"web"}`, "line 1: source: must be one of mcp, builtin, plugin, client"},
	}
	for _, tt := range tests {
		_, err := readAllWays(t, tt.text, ReadOptions{ValidNames: true})
		if diff := cmp.Diff(tt.err, err); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
		if _, err := readAllWays(t, tt.text, ReadOptions{}); err != "" && !strings.Contains(tt.err, "source") && !strings.Contains(tt.err, "already") {
			t.Errorf("%s: without the name check: %s", tt.name, err)
		}
	}
}

// slowReader passes at most n bytes a read, as a slow pipe does.
type slowReader struct {
	r io.Reader
	n int
}

func (s slowReader) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

// TestLineSplitterSearchesOnce: a line read a little at a time is searched for its end once, not
// once a read (which cost the square of its length), and the lines are those of bufio.ScanLines.
func TestLineSplitterSearchesOnce(t *testing.T) {
	text := "a\r\n\n" + strings.Repeat("x", 1<<20) + "\r\nb\nlast\r"
	for _, chunk := range []int{1, 7, 512, 1 << 16} {
		var s lineSplitter
		sc := bufio.NewScanner(slowReader{strings.NewReader(text), chunk})
		sc.Buffer(nil, maxLine)
		sc.Split(s.split)
		var got []string
		for sc.Scan() {
			got = append(got, sc.Text())
		}
		want := []string{"a", "", strings.Repeat("x", 1<<20), "b", "last"}
		if sc.Err() != nil || !cmp.Equal(want, got) {
			t.Errorf("reads of %d: %d lines, %v", chunk, len(got), sc.Err())
		}
		if s.scanned > len(text) {
			t.Errorf("reads of %d: %d bytes searched for %d of text", chunk, s.scanned, len(text))
		}
	}
}

// BenchmarkReadFileLongLineSlowPipe is a catalog of one 4 MiB line arriving 512 bytes a read:
// linear in the line's length since the line splitter remembers what it searched.
func BenchmarkReadFileLongLineSlowPipe(b *testing.B) {
	long := `{"id":"long","description":"` + strings.Repeat("x", 4<<20) + `"}`
	b.SetBytes(int64(len(long)))
	for b.Loop() {
		if tools, err := ReadFile(slowReader{strings.NewReader(long), 512}); err != nil || len(tools) != 1 {
			b.Fatal(len(tools), err)
		}
	}
}

// TestReadFileUniqueNames: with UniqueNames, a line whose model-facing name (its name, or its id
// when it has none) is that of an earlier line is refused with both lines, whichever way the file
// is read, after every other check of the line; without it the names are kept.
func TestReadFileUniqueNames(t *testing.T) {
	tests := []struct {
		name, text string
		err        string
	}{
		{"unique", `{"id":"a","name":"x"}` + "\n" + `{"id":"b","name":"y"}`, ""},
		{"repeated", `{"id":"a","name":"x"}` + "\n\n" + `{"id":"b","name":"y"}` + "\n" + `{"id":"c","name":"x"}`,
			`line 4: name: "x" is already used on line 1`},
		{"an id standing for the name", `{"id":"a","name":"x"}` + "\n" + `{"id":"x"}`, `line 2: name: "x" is already used on line 1`},
		{"a name equal to an earlier id", `{"id":"x"}` + "\n" + `{"id":"b","name":"x"}`, `line 2: name: "x" is already used on line 1`},
		{"the id is named first", `{"id":"a","name":"x"}` + "\n" + `{"id":"a","name":"x"}`, `line 2: id: "a" is already used on line 1`},
		{"a bad line is named first", `{"id":"a","name":"x"}` + "\n" + `{"id":"b","name":"x","source":"web"}`,
			"line 2: source: must be one of mcp, builtin, plugin, client"},
		{"a long name, cut", `{"id":"a","name":"` + strings.Repeat("n", 300) + `"}` + "\n" + `{"id":"b","name":"` + strings.Repeat("n", 300) + `"}`,
			`line 2: name: "` + strings.Repeat("n", 256) + `"… (300 bytes) is already used on line 1`},
	}
	for _, tt := range tests {
		_, err := readAllWays(t, tt.text, ReadOptions{UniqueNames: true})
		if diff := cmp.Diff(tt.err, err); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
		if _, err := readAllWays(t, tt.text, ReadOptions{}); err != "" && !strings.Contains(tt.err, "source") && !strings.Contains(tt.err, "id:") {
			t.Errorf("%s: without the name check: %s", tt.name, err)
		}
	}
	// The lines are counted across the stretches a file read whole is cut into.
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, `{"id":"t%d","name":"n%d","description":"a tool of a large catalog"}`+"\n", i, i)
	}
	b.WriteString(`{"id":"last","name":"n7"}` + "\n")
	if _, err := readAllWays(t, b.String(), ReadOptions{UniqueNames: true}); err != `line 2001: name: "n7" is already used on line 8` {
		t.Errorf("a large catalog: %s", err)
	}
}
