package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/llm"
)

// DecodePartsReference lets the external tests' benchmark compare the two decoders.
var DecodePartsReference = decodePartsReference

// storedForms are parts that exercise every field of the stored form: verbatim and base64,
// escapes, unicode, null-ish raw values.
func storedForms() [][]llm.Part {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	return [][]llm.Part{
		nil,
		{{Kind: llm.KindText}},
		{{Kind: llm.KindText, Text: "question 1: <what> & why?"}},
		{{Kind: llm.KindText, Text: "\"\\/\b\f\n\r\t\x00\x1f\x7f<>&\u2028 🦫 é"}},
		{{Kind: llm.KindImage, ImageURL: "data:image/png;base64,iVBORw0KGgo="}},
		{
			{Kind: llm.KindReasoning, Text: "thinking", Dialect: "anthropic-messages", Provider: "minimax",
				Raw: raw(`{"type":"thinking", "thinking":"step 1","signature":"s<1>&\u00e9\ud83e\udd2b"}`)},
			{Kind: llm.KindToolCall, CallID: "call_1", Name: "exec", Args: raw(`{"command": "echo 1", "n": [-1.5e3, 0, true, false, null, {}]}`), Meta: raw(`"sig"`)},
		},
		{{Kind: llm.KindToolResult, CallID: "call_1", Name: "exec", Text: strings.Repeat("line of output\n", 50), IsError: true}},
		{{Kind: "\xff", Text: "\xfe", ImageURL: "\xc3", CallID: "\x80", Name: "a\xffb", Dialect: "\xed\xa0\x80", Provider: "\xff"}},
		{
			{Kind: llm.KindReasoning, Raw: raw(`null`), Meta: raw(`true`), Args: raw(`-1.5e3`)},
			{Kind: llm.KindToolCall, Args: raw(`{"a":1} {"b":2}`), Raw: raw(" 1"), Meta: raw("1\n")},
			{Kind: llm.KindToolCall, Args: raw(`{`), Raw: raw(`'single'`), Meta: raw("\x00")},
		},
		{{Kind: llm.KindText, Text: `"text_b64":"AAAA"`}},
	}
}

// oddForms are inputs EncodeParts does not write, each meaning something to encoding/json, or
// nothing: the fast path must either leave them to the reference or agree with it.
var oddForms = []string{
	``, `null`, `[]`, ` []`, `[] `, `[{}]`, `[null]`, `[{},{}]`, `{}`, `[`, `[{`, `[{]`, `[1]`, `[{}]x`, `[{}],`,
	`[{"kind":null,"text":null,"is_error":null,"raw":null,"args":null,"meta":null,"name_b64":null}]`,
	`[{"kind":"a","kind_b64":""}]`, `[{"raw":"x","raw_b64":""}]`, `[{"text_b64":"aGk=\n"}]`, `[{"text_b64":"aGk\n="}]`, `[{"text_b64":"aGk\\n="}]`,
	`[{"text_b64":"!!"}]`, `[{"text_b64":"aGk"}]`, `[{"text_b64":1}]`, `[{"text_b64":[104,105]}]`,
	`[{"kind":"a","kind":"b"}]`, `[{"KIND":"a"}]`, `[{"Kind":"a","kind":"b"}]`, `[{"other":1,"kind":"a"}]`, `[{"kin\u0064":"a"}]`,
	`[{"kind" :"a"}]`, `[{"kind": "a"}]`, `[{"kind":"a" }]`, `[ {"kind":"a"}]`, `[{"kind":"a"} ]`,
	`[{"kind":1}]`, `[{"kind":true}]`, `[{"is_error":false}]`, `[{"is_error":"true"}]`, `[{"is_error":1}]`, `[{"is_error":nul}]`,
	`[{"text":"\ud83e\udd2b \ud83e x \udd2b \ud83e\u0041 \ud83e\ud83e\udd2b"}]`, `[{"text":"\u00"}]`, `[{"text":"\'"}]`, `[{"text":"\x"}]`,
	"[{\"text\":\"a\xffb\xed\xa0\x80c\"}]", "[{\"text\":\"a\tb\"}]", "[{\"text\":\"a\\\xffb\"}]", `[{"text":"\u0000\u001F\u2028"}]`,
	`[{"raw":{"a" : [1 , 2] }}]`, `[{"raw": {}}]`, `[{"raw":{} }]`, `[{"raw":01}]`, `[{"raw":1.}]`, `[{"raw":-}]`, `[{"raw":1e}]`,
	`[{"raw":1E+2}]`, `[{"raw":-0.5e-7}]`, `[{"raw":.5}]`, `[{"raw":truex}]`, `[{"raw":[1,]}]`, `[{"raw":{"a":1,}}]`, `[{"raw":{1:2}}]`,
	"[{\"raw\":\"\xff\"}]", `[{"raw":"\'"}]`, `[{"raw":"\uZZZZ"}]`, `[{"raw":[[[[]]]]}]`, `[{"raw":{"a":{"b":[{"c":"\"}"}]}}}]`,
	`[{"raw":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}]`,
}

func fuzzSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, parts := range storedForms() {
		seeds = append(seeds, EncodeParts(nil, parts))
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "parts.golden"))
	if err != nil {
		t.Fatal(err)
	}
	seeds = append(seeds, bytes.Split(bytes.TrimSuffix(golden, []byte("\n")), []byte("\n"))...)
	for _, s := range oddForms {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// checkSameAsReference: DecodeParts means what the reference means, error text included.
func checkSameAsReference(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := decodePartsReference(data)
	got, err := DecodeParts(data)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("DecodeParts(%q): error %v, the reference's %v", data, err, wantErr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DecodeParts(%q) (-reference +got):\n%s", data, diff)
	}
}

// TestDecodePartsFastTakesStoredForm: what EncodeParts writes never needs the reference, so
// the transcript a turn reads is all on the fast path.
func TestDecodePartsFastTakesStoredForm(t *testing.T) {
	for i, parts := range storedForms() {
		enc := EncodeParts(nil, parts)
		got, ok := decodePartsFast(enc)
		if !ok {
			t.Errorf("form %d: the fast path left %q to the reference", i, enc)
			continue
		}
		if diff := cmp.Diff(parts, got); diff != "" {
			t.Errorf("form %d: %q (-want +got):\n%s", i, enc, diff)
		}
	}
}

// TestDecodePartsFastKnowsStoredPartNames holds the fast path's key names to storedPart's tags.
func TestDecodePartsFastKnowsStoredPartNames(t *testing.T) {
	typ := reflect.TypeFor[storedPart]()
	for i := range typ.NumField() {
		name := typ.Field(i).Tag.Get("json")
		in := fmt.Sprintf(`[{%q:null}]`, name)
		if _, ok := decodePartsFast([]byte(in)); !ok {
			t.Errorf("the fast path does not read %s", in)
		}
	}
}

func TestDecodePartsOddFormsAsReference(t *testing.T) {
	for _, in := range oddForms {
		checkSameAsReference(t, []byte(in))
	}
	// These are handled on the fast path, not merely passed on; the check above proves them.
	for _, in := range []string{
		`[{"kind":null,"text":null,"is_error":null,"raw":null,"args":null,"meta":null,"name_b64":null}]`,
		`[{"kind":"a","kind_b64":""}]`, `[{"text_b64":"aGk=\n"}]`, `[{"text_b64":"aGk\n="}]`, `[{}]`,
		`[{"text":"\ud83e\udd2b \ud83e x \udd2b \ud83e\u0041 \ud83e\ud83e\udd2b"}]`, "[{\"text\":\"a\xffb\xed\xa0\x80c\"}]",
		`[{"raw":{"a" : [1 , 2] }}]`, `[{"raw":-0.5e-7}]`, "[{\"raw\":\"\xff\"}]",
	} {
		if _, ok := decodePartsFast([]byte(in)); !ok {
			t.Errorf("the fast path left %q to the reference", in)
		}
	}
}

// TestDecodePartsOwnsResult: sqlite lends the row's bytes only until the next row, so nothing
// decoded may point into them.
func TestDecodePartsOwnsResult(t *testing.T) {
	for _, parts := range storedForms() {
		enc := EncodeParts(nil, parts)
		got, err := DecodeParts(enc)
		if err != nil {
			t.Fatal(err)
		}
		for i := range enc {
			enc[i] = 'X'
		}
		if diff := cmp.Diff(parts, got); diff != "" {
			t.Errorf("after the input was overwritten (-want +got):\n%s", diff)
		}
	}
}

// FuzzDecodePartsFast: the fast path gives the reference's parts, and DecodeParts its errors.
func FuzzDecodePartsFast(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := decodePartsReference(data)
		if got, ok := decodePartsFast(data); ok {
			if wantErr != nil {
				t.Fatalf("the fast path took %q, which the reference refuses: %v", data, wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("decodePartsFast(%q) (-reference +fast):\n%s", data, diff)
			}
		}
		checkSameAsReference(t, data)
	})
}
