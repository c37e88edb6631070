package toolsearch

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
)

// TestPrettySize: the size counted is that of the text marshalJS indents.
func TestPrettySize(t *testing.T) {
	values := []string{
		`1`, `"a"`, `[]`, `{}`, `[[]]`, `[{}]`, `{"a":{}}`, `[1,2,[3,[4,{}]]]`,
		`{"a":1,"b":[true,null,{"c":"d"}],"e":{"f":[[],{}]}}`,
		`["]","[","{\"x\":[1,2]}","\\","\\\"]"]`, `{"k:[":"v,{"}`,
		strings.Repeat("[", 300) + "1" + strings.Repeat("]", 300),
	}
	for _, v := range values {
		compact, err := marshalJS(json.RawMessage(v), false)
		if err != nil {
			t.Fatal(err)
		}
		pretty, err := marshalJS(json.RawMessage(v), true)
		if err != nil {
			t.Fatal(err)
		}
		if got := prettySize(compact, 1<<30); got != len(pretty) {
			t.Errorf("prettySize(%.60s) = %d, want %d", v, got, len(pretty))
		}
		readable, err := marshalReadable(json.RawMessage(v))
		if err != nil || string(readable) != string(pretty) {
			t.Errorf("marshalReadable(%.60s) = %s, %v; want %s", v, readable, err, pretty)
		}
	}
}

// TestCodeDeepResultStaysBounded: a tool_search_code value within the sandbox's bounds (1 MiB,
// 512 levels) but nested 500 levels deep a thousand times over reaches the model as a text of
// about its own size, not as half a gigabyte of indentation built in nodmix's memory.
func TestCodeDeepResultStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox children")
	}
	pool := newPool(t)
	rt := codeFixture(t, goldenEntries(), nil, pool, 30*time.Second) // a megabyte of nesting under -race, on a loaded machine
	res, err := rt.RunCode(context.Background(), `let v = 1;
for (let i = 0; i < 499; i++) v = [v];
return Array(1040).fill(v);`)
	if err != nil || res.IsError {
		t.Fatalf("%v %.300q", err, res.Text())
	}
	if n := len(res.Text()); n > maxPrettyBytes {
		t.Fatalf("result text of %d bytes for a value of about 1 MB", n)
	}
	var out struct {
		OK    bool            `json:"ok"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal([]byte(res.Text()), &out); err != nil {
		t.Fatal(err)
	}
	one := strings.Repeat("[", 499) + "1" + strings.Repeat("]", 499)
	want := "[" + strings.Repeat(one+",", 1039) + one + "]"
	if diff := cmp.Diff(want, string(out.Value)); !out.OK || diff != "" {
		t.Errorf("ok %v, value (-want +got):\n%.500s", out.OK, diff)
	}
}

// TestCallDeepDetailsStayBounded: tool_call shows a tool's details, JSON nodmix did not write,
// with the same bound: a deep value repeated comes back compact, not indented a thousandfold.
func TestCallDeepDetailsStayBounded(t *testing.T) {
	one := strings.Repeat("[", 499) + "1" + strings.Repeat("]", 499)
	deep := "[" + strings.Repeat(one+",", 1039) + one + "]"
	e := builtin("deep_report", "Report deeply", `{"type":"object"}`)
	e.Exec = catalog.ExecutorFunc(func(context.Context, catalog.Call) (*catalog.Result, error) {
		res := catalog.TextResult("deep")
		res.Structured = json.RawMessage(deep)
		return res, nil
	})
	f := newFixture(t, append(goldenEntries(), e), nil, Options{Mode: ModeTools})
	res := f.control(t, ToolCall, `{"id":"deep_report","args":{}}`)
	if n := len(res.Text()); res.IsError || n > maxPrettyBytes {
		t.Fatalf("tool_call result: error %v, %d bytes of text for details of about 1 MB", res.IsError, n)
	}
	if !strings.Contains(res.Text(), deep) {
		t.Errorf("the text does not hold the details as the tool gave them: %.300s", res.Text())
	}
}
