package llmtest

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// CheckEncode encodes req with p on d and holds the result to what every dialect promises: the
// request is left as it was, encoding it again gives the same body, no header the dialect sets
// carries a credential (those are the provider layer's), and the request matches the golden
// file at path (see CheckEncoded). It returns the encoded request.
func CheckEncode(t testing.TB, d llm.Dialect, req *llm.Request, p llm.Patch, path string, update bool) *llm.Encoded {
	t.Helper()
	before := snapshot(req)
	enc, err := d.Encode(req, p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, snapshot(req)); diff != "" {
		t.Errorf("Encode modified the request (-before +after):\n%s", diff)
	}
	for range 5 {
		if again, _ := d.Encode(req, p); again == nil || !bytes.Equal(again.Body, enc.Body) {
			t.Fatalf("two encodings of one request differ:\n%s\n%v", enc.Body, again)
		}
	}
	for k := range enc.Header {
		if k == "Authorization" || strings.Contains(strings.ToLower(k), "key") {
			t.Errorf("header %s", k)
		}
	}
	CheckEncoded(t, path, enc, update)
	return enc
}

// snapshot is a deep copy of r, to tell whether Encode wrote into it.
func snapshot(r *llm.Request) *llm.Request {
	c := *r
	c.Messages = slices.Clone(r.Messages)
	for i := range c.Messages {
		c.Messages[i].Parts = slices.Clone(r.Messages[i].Parts)
		for j := range c.Messages[i].Parts {
			p := &c.Messages[i].Parts[j]
			p.Args, p.Raw, p.Meta = bytes.Clone(p.Args), bytes.Clone(p.Raw), bytes.Clone(p.Meta)
		}
	}
	c.Tools = slices.Clone(r.Tools)
	for i := range c.Tools {
		c.Tools[i].Parameters = bytes.Clone(r.Tools[i].Parameters)
	}
	if r.Temperature != nil {
		v := *r.Temperature
		c.Temperature = &v
	}
	c.Extra = maps.Clone(r.Extra)
	for k, v := range c.Extra {
		c.Extra[k] = bytes.Clone(v)
	}
	return &c
}
