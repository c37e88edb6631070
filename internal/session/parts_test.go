package session_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestStoredPartsGolden pins the stored form: provider bytes verbatim where they are valid JSON,
// base64 only where they cannot be.
func TestStoredPartsGolden(t *testing.T) {
	var out []byte
	for _, m := range sessiontest.Transcript() {
		out = append(session.EncodeParts(out, m.Parts), '\n')
	}
	path := filepath.Join("testdata", "parts.golden")
	if *update {
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(out)); diff != "" {
		t.Errorf("stored parts (-want +got):\n%s", diff)
	}
}

func TestPartsRoundTrip(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name  string
		parts []llm.Part
	}{
		{"none", nil},
		{"empty text part", []llm.Part{{Kind: llm.KindText}}},
		{"escapes", []llm.Part{{Kind: llm.KindText, Text: "\"\\/\b\f\n\r\t\x00\x1f\x7f<>&\u2028"}}},
		{"invalid UTF-8 everywhere", []llm.Part{{Kind: "\xff", Text: "\xfe", ImageURL: "\xc3", CallID: "\x80", Name: "a\xffb", Dialect: "\xed\xa0\x80", Provider: "\xff"}}},
		{"raw json kinds", []llm.Part{
			{Kind: llm.KindReasoning, Raw: raw(`null`), Meta: raw(`true`), Args: raw(`-1.5e3`)},
			{Kind: llm.KindReasoning, Raw: raw(`"s<&>"`), Meta: raw(`[ 1 ,2 ]`), Args: raw(`{}`)},
		}},
		{"raw not one value", []llm.Part{
			{Kind: llm.KindToolCall, Args: raw(`{"a":1} {"b":2}`), Raw: raw(" 1"), Meta: raw("1\n")},
			{Kind: llm.KindToolCall, Args: raw(`{`), Raw: raw(`'single'`), Meta: raw("\x00")},
		}},
		{"b64 key in text", []llm.Part{{Kind: llm.KindText, Text: `"text_b64":"AAAA"`}}},
		{"is_error alone", []llm.Part{{Kind: llm.KindToolResult, IsError: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := session.EncodeParts(nil, tt.parts)
			if !utf8.Valid(enc) || !json.Valid(enc) {
				t.Fatalf("stored form is not valid UTF-8 JSON: %q", enc)
			}
			got, err := session.DecodeParts(enc)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.parts, got); diff != "" {
				t.Errorf("round trip of %s (-want +got):\n%s", enc, diff)
			}
		})
	}
}

func TestDecodePartsRefusesGarbage(t *testing.T) {
	for _, in := range []string{"", "{}", `[{"kind":1}]`, `[{"raw_b64":"!!"}]`, "[", "null x"} {
		if _, err := session.DecodeParts([]byte(in)); err == nil {
			t.Errorf("DecodeParts(%q) succeeded", in)
		}
	}
}

// FuzzPartsRoundTrip: whatever a part holds comes back exactly, in a valid UTF-8 JSON form.
func FuzzPartsRoundTrip(f *testing.F) {
	f.Add("text", "hi <&>", []byte(`{"q": 1}`), []byte(`{"type":"thinking", "signature":"a<b&c"}`), []byte(nil), false)
	f.Add("tool_call", "\xff", []byte(`{"broken`), []byte(" 1"), []byte("null"), true)
	f.Add("", "", []byte{}, []byte{0xff}, []byte("\t"), false)
	f.Fuzz(func(t *testing.T, kind, text string, args, rawb, meta []byte, isErr bool) {
		norm := func(b []byte) json.RawMessage {
			if len(b) == 0 {
				return nil
			}
			return b
		}
		parts := []llm.Part{{Kind: llm.Kind(kind), Text: text, Name: text, Args: norm(args), IsError: isErr, Raw: norm(rawb), Meta: norm(meta)}}
		enc := session.EncodeParts(nil, parts)
		if !utf8.Valid(enc) || !json.Valid(enc) {
			t.Fatalf("stored form is not valid UTF-8 JSON: %q", enc)
		}
		got, err := session.DecodeParts(enc)
		if err != nil {
			t.Fatalf("decode %q: %v", enc, err)
		}
		if diff := cmp.Diff(parts, got); diff != "" {
			t.Errorf("round trip of %q (-want +got):\n%s", enc, diff)
		}
	})
}

// FuzzDecodeParts: a damaged row is an error, never a panic, and what decodes re-encodes to
// something that decodes the same.
func FuzzDecodeParts(f *testing.F) {
	for _, m := range sessiontest.Transcript() {
		f.Add(session.EncodeParts(nil, m.Parts))
	}
	f.Add([]byte(`[{"kind":"text","text_b64":"/w=="}]`))
	f.Add([]byte(`[{"KIND":"x","Raw":{"a":[1,2]}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		parts, err := session.DecodeParts(data)
		if err != nil {
			return
		}
		again, err := session.DecodeParts(session.EncodeParts(nil, parts))
		if err != nil {
			t.Fatalf("re-encoded parts do not decode: %v", err)
		}
		if diff := cmp.Diff(parts, again); diff != "" {
			t.Errorf("(-first +second):\n%s", diff)
		}
	})
}

// BenchmarkDecodeParts decodes the rows of the transcript a turn reads at 100 messages.
func BenchmarkDecodeParts(b *testing.B) {
	var rows [][]byte
	for _, m := range sessiontest.Long(100) {
		rows = append(rows, session.EncodeParts(nil, m.Parts))
	}
	for _, bc := range []struct {
		name   string
		decode func([]byte) ([]llm.Part, error)
	}{
		{"reference", session.DecodePartsReference},
		{"fast", session.DecodeParts},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, row := range rows {
					if _, err := bc.decode(row); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
