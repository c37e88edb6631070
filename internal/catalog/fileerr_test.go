package catalog

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readBothWays reads text a line at a time and whole, in one stretch and in three, and fails
// the test unless all say the same; it returns the error they say.
func readBothWays(t *testing.T, text string) error {
	t.Helper()
	_, serial := ReadFile(struct{ io.Reader }{strings.NewReader(text)}) // not read whole
	for _, workers := range []int{1, 3} {
		_, whole := readLines([]byte(text), nil, workers, ReadOptions{})
		if diff := cmp.Diff(errText(serial), errText(whole)); diff != "" {
			t.Fatalf("%.80q in %d stretches (-a line at a time +whole):\n%s", text, workers, diff)
		}
	}
	return serial
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestReadFileErrorWords: a refused line is named with its field and the rule it breaks, in the
// words of the other errors, not with the Go type the decoder was filling or the scanner's.
func TestReadFileErrorWords(t *testing.T) {
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	tests := []struct{ name, text, want string }{
		{"id a number", `{"id":1}`, "line 1: id: must be a string"},
		{"name an object", `{"id":"a","name":{"x":1}}`, "line 1: name: must be a string"},
		{"id spelled otherwise", `{"ID":true}`, "line 1: id: must be a string"},
		{"on line 2", "{\"id\":\"a\"}\n{\"id\":\"b\",\"mcp_tool_name\":[]}", "line 2: mcp_tool_name: must be a string"},
		{"an array", `[]`, "line 1: must be a JSON object"},
		{"a string", `"x"`, "line 1: must be a JSON object"},
		{"a number", `7`, "line 1: must be a JSON object"},
		{"deep schema", `{"id":"a","input_schema":` + deep(maxDepth) + `}`, "line 1: input_schema: nested deeper than the 10000 levels a line may hold"},
		{"deep unknown key", `{"id":"a","x y":[` + deep(maxDepth) + `]}`, `line 1: "x y": nested deeper than the 10000 levels a line may hold`},
		{"deep array", strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), "line 1: nested deeper than the 10000 levels a line may hold"},
		{"repeated id", `{"id":"a","name":"a","id":"b"}`, `line 1: "id" appears twice`},
		{"repeated null", `{"id":"a","label":"x","label":null}`, `line 1: "label" appears twice`},
		{"repeated schema", `{"id":"a","input_schema":{},"input_schema":{"type":"object"}}`, `line 1: "input_schema" appears twice`},
		{"repeated in another case", `{"id":"a","Id":"b"}`, `line 1: id: set twice, as "id" and as "Id"`},
		{"repeated escaped", `{"id":"a","\u0069d":"b"}`, `line 1: "id" appears twice`},
		{"repeated on line 3", "{\"id\":\"a\"}\n\n{\"id\":\"b\",\"source\":\"mcp\",\"source\":\"client\"}", `line 3: "source" appears twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, errText(readBothWays(t, tt.text))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// One level less is a schema like any other.
	if err := readBothWays(t, `{"id":"a","input_schema":`+deep(maxDepth-1)+`}`); err != nil {
		t.Errorf("a schema at the depth limit: %v", err)
	}
}

// TestReadFileTooLongWords: a line the scanner cannot hold names the limit, whichever way the
// text is read, and is still bufio.ErrTooLong to a caller that asks.
func TestReadFileTooLongWords(t *testing.T) {
	if testing.Short() {
		t.Skip("reads lines of 16 MiB")
	}
	long := `{"id":"long","description":"` + strings.Repeat("x", maxLine) + `"}`
	for _, tt := range []struct{ name, text, want string }{
		{"line 1", long, "line 1: longer than the 16 MiB a line may hold"},
		{"line 2", "{\"id\":\"a\"}\n" + long + "\n", "line 2: longer than the 16 MiB a line may hold"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := readBothWays(t, tt.text)
			if diff := cmp.Diff(tt.want, errText(err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !errors.Is(err, bufio.ErrTooLong) {
				t.Errorf("%v is not bufio.ErrTooLong", err)
			}
		})
	}
}

// TestFieldOfKey: the field a key sets is the one the decoder fills from it, case folding and
// all, so that a key repeated in another spelling is found.
func TestFieldOfKey(t *testing.T) {
	for _, key := range []string{
		"id", "ID", "Id", "ıd", "İD", "name", "NAME", "label", "Description", "summary", "ſource", "SOURCE",
		"server", "Server", "mcp_tool_name", "MCP_TOOL_NAME", "mcp-tool-name", "input_schema", "Input_Schema",
		"inputschema", "x", "", "idd", "K", "ﬁd",
	} {
		line, _ := json.Marshal(map[string]string{key: "v"})
		var ft fileTool
		got, ok := fieldOfKey(key)
		if err := json.Unmarshal(line, &ft); err != nil {
			t.Fatal(err)
		}
		set := map[string]string{"id": ft.ID, "name": ft.Name, "label": ft.Label, "description": ft.Description,
			"summary": ft.Summary, "source": ft.Source, "server": ft.Server, "mcp_tool_name": ft.MCPToolName}
		want := -1
		for i, f := range fileFields[:8] {
			if set[f] == "v" {
				want = i
			}
		}
		if key == "input_schema" || key == "Input_Schema" {
			want = 8
		}
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("%q: field %d, the decoder fills %d", key, got, want)
		}
	}
}

// TestReadFileSlowLineKeepsItsSchema: a line the fast path gives up on after its schema keeps the
// schema it was read with when a later line is read into the scanner's buffer.
func TestReadFileSlowLineKeepsItsSchema(t *testing.T) {
	var text strings.Builder
	text.WriteString(`{"id":"a","input_schema":{"properties":{"x":{}}},"Name":"a"}` + "\n")
	for i := range 5000 {
		text.WriteString(`{"id":"t` + strconv.Itoa(i) + `","input_schema":{"properties":{"zzzzzzzzzz":{}}}}` + "\n")
	}
	for _, r := range []io.Reader{struct{ io.Reader }{strings.NewReader(text.String())}, strings.NewReader(text.String())} {
		tools, err := ReadFile(r)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(`{"properties":{"x":{}}}`, string(tools[0].InputSchema)); diff != "" {
			t.Errorf("%T: schema of line 1 (-want +got):\n%s", r, diff)
		}
	}
}
