package catalog

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkLine: whenever the fast path takes a line, the standard decoder accepts it with the same
// result.
func checkLine(t *testing.T, line []byte) {
	t.Helper()
	var fast, slow fileTool
	if !decodeLine(line, &fast) {
		return
	}
	if err := decodeLineSlow(line, &slow); err != nil {
		t.Fatalf("fast path took %q, which the decoder refuses: %v", line, err)
	}
	if diff := cmp.Diff(slow, fast); diff != "" {
		t.Fatalf("%q (-decoder +fast):\n%s", line, diff)
	}
}

func TestDecodeLine(t *testing.T) {
	taken := 0
	for _, l := range []string{
		`{}`, `{ }`, `{"id":"a"}`, `{"id":"a","id":null}`, `{"id":"\u00e9\n"}`, "{\"id\":\"\xff\"}",
		`{"id":"a","input_schema":null}`, `{"id":"a","input_schema": {"properties":{"x":{"description":"}"}}} }`,
		`{"id":"a","input_schema":[1,2]}`, `{"ID":"a"}`, `{"id":1}`, `{"id":"a",}`, `{"id":"a"} x`,
	} {
		checkLine(t, []byte(l))
		var ft fileTool
		if decodeLine([]byte(l), &ft) {
			taken++
		}
	}
	// Not {"id":"a","id":null}: a repeated key is the decoder's to refuse.
	if taken != 8 {
		t.Errorf("fast path took %d lines, want 8", taken)
	}
	for _, path := range []string{"../../testdata/bench/retrieval/sealtools/tools.jsonl", "../../testdata/bench/retrieval/metatool/tools.jsonl"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var ft fileTool
			line := bytes.TrimSpace(sc.Bytes())
			if !decodeLine(line, &ft) {
				t.Fatalf("%s: fast path refused %q", path, line)
			}
			checkLine(t, line)
		}
		f.Close()
	}
}

func FuzzDecodeLine(f *testing.F) {
	f.Add([]byte(`{"id":"a","name":"b","input_schema":{"type":"object"},"source":"mcp"}`))
	f.Add([]byte(`{"id":"a\u0062","label":null,"server":"s"}`))
	f.Fuzz(func(t *testing.T, line []byte) { checkLine(t, line) })
}

// TestValidName: the hand-written check agrees with the expression it replaces.
func TestValidName(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	for _, s := range []string{"", "a", "A-z_09", "a b", "a\n", "é", strings.Repeat("x", 64), strings.Repeat("x", 65), "a.b", "mcp__s__t"} {
		if got, want := ValidName(s), re.MatchString(s); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", s, got, want)
		}
	}
}

// checkSchemaKeys: whenever rawSchemaKeys answers, it answers what the decoder does.
func checkSchemaKeys(t *testing.T, schema []byte) {
	t.Helper()
	got, ok := rawSchemaKeys(schema)
	if !ok {
		return
	}
	if diff := cmp.Diff(decodedSchemaKeys(schema), got); diff != "" {
		t.Fatalf("%q (-decoder +raw):\n%s", schema, diff)
	}
}

func TestRawSchemaKeys(t *testing.T) {
	for _, s := range []string{
		``, `null`, `[1]`, `3`, `{}`, `{"properties":null}`, `{"properties":{}}`, `{"properties":[]}`,
		`{"properties":{"b":1,"a":2,"b":3}}`, `{"properties":{"a":1},"properties":{"b":1}}`,
		`{"properties":{"a":1},"properties":null,"properties":{"c":1}}`, `{"properties":{"a":1},"properties":"x"}`,
		`{"Properties":{"a":1}}`, `{"propertieſ":{"a":1}}`, `{"prop\u0065rties":{"\u00e9":1}}`, `{"properties":{"a":1}} x`,
		"{\"properties\":{\"\xff\":1}}",
	} {
		checkSchemaKeys(t, []byte(s))
	}
	if _, ok := rawSchemaKeys([]byte(`{"Properties":{"a":1}}`)); ok {
		t.Error("a key in another case must go to the decoder")
	}
}

func FuzzRawSchemaKeys(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"q":{"type":"string"},"n":{}}}`))
	f.Add([]byte(`{"properties":{"a":1},"properties":null,"PROPERTIES":{}}`))
	f.Fuzz(func(t *testing.T, schema []byte) { checkSchemaKeys(t, schema) })
}
