package toolsearch

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	goldenFile     = "../../testdata/reference/golden/toolsearch-golden.txt"
	codeGoldenFile = "../../testdata/reference/golden/toolsearch-code-golden.txt"
)

// goldenLines returns the lines of a golden file, with the reference's name read as nodmix.
func goldenLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, nodmixify(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// goldenValue returns the text after "prefix" on the one golden line that starts with it.
func goldenValue(t *testing.T, lines []string, prefix string) string {
	t.Helper()
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return rest
		}
	}
	t.Fatalf("golden has no line %q", prefix)
	return ""
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := marshalJS(v, false)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGoldenDescriptorAndDescribe(t *testing.T) {
	lines := goldenLines(t, goldenFile)
	f := newFixture(t, goldenEntries(), nil, Options{})

	i, err := f.ix.find("issue_create")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(goldenValue(t, lines, "compact entry: "), mustJSON(t, f.ix.descriptor(i))); diff != "" {
		t.Errorf("compact entry (-golden +got):\n%s", diff)
	}
	d, err := f.rt.Describe("issue_create")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(goldenValue(t, lines, "describe: "), mustJSON(t, d)); diff != "" {
		t.Errorf("describe (-golden +got):\n%s", diff)
	}
	_, err = f.rt.Describe("isue_create")
	if got, want := errText(err), goldenValue(t, lines, "describe-unknown: "); got != want {
		t.Errorf("describe unknown:\n got %q\nwant %q", got, want)
	}
	if !errors.Is(err, ErrUnknownTool) {
		t.Errorf("describe unknown: %v is not ErrUnknownTool", err)
	}
	res := f.control(t, ToolSearch, `{"query":"issue","limit":0}`)
	if got, want := res.Text(), goldenValue(t, lines, "limit0: "); got != want || !res.IsError {
		t.Errorf("limit 0: %q (error %v), want %q", got, res.IsError, want)
	}
	call, err := f.rt.Call(context.Background(), "issue_create", json.RawMessage(`{"repository":"a/b","title":"t"}`))
	if err != nil {
		t.Fatal(err)
	}
	got := mustJSON(t, struct {
		Tool   Descriptor `json:"tool"`
		Result resultJSON `json:"result"`
	}{call.Tool, toResultJSON(call.Result)})
	if diff := cmp.Diff(goldenValue(t, lines, "call: "), got); diff != "" {
		t.Errorf("call (-golden +got):\n%s", diff)
	}
}

// TestGoldenControlTools replays the golden tool_search and tool_call lines through the control
// tools, as a model would call them.
func TestGoldenControlTools(t *testing.T) {
	lines := goldenLines(t, goldenFile)
	n := 0
	for _, l := range lines {
		name, rest, ok := strings.Cut(l, " ")
		if !ok || (name != ToolSearch && name != ToolCall) {
			continue
		}
		args, want, throws := "", "", false
		if a, w, ok := strings.Cut(rest, " THROWS "); ok {
			args, want, throws = a, w, true
		} else if a, w, ok := strings.Cut(rest, " => "); ok {
			args, want = a, w
		} else {
			t.Fatalf("unreadable golden line %q", l)
		}
		n++
		t.Run(name+" "+args, func(t *testing.T) {
			f := newFixture(t, goldenEntries(), nil, Options{})
			res := f.control(t, name, args)
			got := collapse(res.Text())
			if res.IsError != throws {
				t.Fatalf("error = %v, want %v; text %q", res.IsError, throws, got)
			}
			// The reference's golden writer cut long results; compare what it kept.
			if !balanced(want) && len(want) < len(got) {
				got = got[:len(want)]
			}
			if got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
	if n < 11 {
		t.Fatalf("only %d golden control lines", n)
	}
}

// TestGoldenInputErrors checks the validation messages of the code-mode golden file.
func TestGoldenInputErrors(t *testing.T) {
	lines := goldenLines(t, codeGoldenFile)
	entries := goldenEntries()
	entries[2] = builtin("issue_create", "Open a new issue",
		`{"type":"object","properties":{"repository":{"type":"string"},"title":{"type":"string"}},"required":["repository","title"],"additionalProperties":false}`)
	tests := []struct{ prefix, args string }{
		{"tool_call invalid args: ", `{"repositry":"a/b","title":"x"}`},
		{"tool_call missing required: ", `{"title":"x"}`},
	}
	for _, tt := range tests {
		f := newFixture(t, entries, nil, Options{})
		_, err := f.rt.Call(context.Background(), "nodmix:core:issue_create", json.RawMessage(tt.args))
		if got, want := errText(err), goldenValue(t, lines, tt.prefix); got != want {
			t.Errorf("%s\n got %q\nwant %q", tt.prefix, got, want)
		}
		if !errors.Is(err, ErrInvalidArgs) {
			t.Errorf("%s: %v is not ErrInvalidArgs", tt.prefix, err)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// balanced reports whether the brackets of a JSON text outside its strings balance.
func balanced(s string) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range s {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	return depth == 0
}
