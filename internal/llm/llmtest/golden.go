package llmtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
)

// Golden compares got with the file at path, or with update (a test's -update flag) writes it
// there, creating its directory.
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// EncodedJSON is an encoded request as a golden file holds it: path, headers (keys sorted) and
// body, indented for reading. Indenting keeps the body's key order and bytes otherwise, so the
// comparison is exact. The body must be compact JSON, as every dialect writes it.
func EncodedJSON(t testing.TB, enc *llm.Encoded) []byte {
	t.Helper()
	if !json.Valid(enc.Body) {
		t.Fatalf("body is not JSON: %s", enc.Body)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, enc.Body); err != nil || !bytes.Equal(c.Bytes(), enc.Body) {
		t.Errorf("body is not compact JSON (%v):\n%s", err, enc.Body)
	}
	doc := struct {
		Path   string          `json:"path"`
		Header http.Header     `json:"header"`
		Body   json.RawMessage `json:"body"`
	}{enc.Path, enc.Header, enc.Body}
	var out bytes.Buffer
	e := json.NewEncoder(&out)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// CheckEncoded compares enc with the golden file at path (see EncodedJSON and Golden).
func CheckEncoded(t testing.TB, path string, enc *llm.Encoded, update bool) {
	t.Helper()
	Golden(t, path, EncodedJSON(t, enc), update)
}
