package llm

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func TestCallArgs(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{` {"a": 1} `, ` {"a": 1} `},
		{``, `{}`},
		{`   `, `{}`},
		{`{"a":`, `"{\"a\":"`},
		{`[1,2]`, `"[1,2]"`},
		{`"s"`, `"\"s\""`},
		{`null`, `"null"`},
		{`{"a":1}{"b":2}`, `"{\"a\":1}{\"b\":2}"`},
	}
	for _, tt := range tests {
		got := CallArgs(tt.in)
		if string(got) != tt.want {
			t.Errorf("CallArgs(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if !json.Valid(got) {
			t.Errorf("CallArgs(%q) = %s, not JSON", tt.in, got)
		}
		// Sent back, the provider sees what the model wrote (empty becomes {}).
		if back := ArgsText(got); back != tt.in && strings.TrimSpace(tt.in) != "" {
			t.Errorf("ArgsText(CallArgs(%q)) = %q", tt.in, back)
		}
	}
}

func TestObjectArgs(t *testing.T) {
	for in, want := range map[string]string{
		``:            `{}`,
		` null `:      `{}`,
		`{"a":1}`:     `{"a":1}`,
		` {"a": 1} `:  `{"a": 1}`,
		`"{\"a\":"`:   `{}`,
		`[1,2]`:       `{}`,
		`{"a":`:       `{}`,
		`not json <>`: `{}`,
	} {
		if got := string(ObjectArgs(json.RawMessage(in))); got != want {
			t.Errorf("ObjectArgs(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestDataURL(t *testing.T) {
	tests := []struct {
		url, mediaType, b64, err string
	}{
		{url: "data:image/png;base64,iVBORw0KGgo=", mediaType: "image/png", b64: "iVBORw0KGgo="},
		{url: "data:image/png;name=a.png;base64,AAAA", mediaType: "image/png", b64: "AAAA"},
		{url: "data:;base64,AAAA", mediaType: "", b64: "AAAA"},
		{url: "data:text/plain,hi%20there", mediaType: "text/plain", b64: base64.StdEncoding.EncodeToString([]byte("hi there"))},
		{url: "data:text/plain;charset=utf-8,%3C%3E", mediaType: "text/plain", b64: base64.StdEncoding.EncodeToString([]byte("<>"))},
		{url: "data:,", mediaType: "", b64: ""},
		// A ;base64 payload goes on as written: the provider judges it.
		{url: "data:image/png;base64,not base64!", mediaType: "image/png", b64: "not base64!"},
		{url: "data:image/png;base64", err: "data URL has no data"},
		{url: "data:image/png,%zz", err: "data URL is not valid percent-encoding"},
		{url: "https://example.com/a.png", err: "not a data URL"},
		{url: "", err: "not a data URL"},
	}
	for _, tt := range tests {
		mt, b64, err := DataURL(tt.url)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("DataURL(%q) error %v, want %q", tt.url, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("DataURL(%q): %v", tt.url, err)
			continue
		}
		if mt != tt.mediaType || b64 != tt.b64 {
			t.Errorf("DataURL(%q) = %q, %q; want %q, %q", tt.url, mt, b64, tt.mediaType, tt.b64)
		}
	}
}

func FuzzDataURL(f *testing.F) {
	for _, s := range []string{"data:image/png;base64,AAAA", "data:text/plain,a%20b", "data:,", "data:%zz", "data:;base64", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		mt, b64, err := DataURL(u)
		if err != nil {
			if mt != "" || b64 != "" {
				t.Fatalf("DataURL(%q) = %q, %q with error %v", u, mt, b64, err)
			}
			return
		}
		if !strings.HasPrefix(u, "data:") || strings.Contains(mt, ";") || strings.Contains(mt, ",") {
			t.Fatalf("DataURL(%q) = media type %q", u, mt)
		}
		if !strings.Contains(u, ";base64,") {
			if _, err := base64.StdEncoding.DecodeString(b64); err != nil {
				t.Fatalf("DataURL(%q): payload %q is not base64: %v", u, b64, err)
			}
		}
	})
}

func TestPassThrough(t *testing.T) {
	owned := []string{"model", "tools"}
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name      string
		extra     map[string]json.RawMessage
		member    string
		ours      json.RawMessage
		wantExtra map[string]json.RawMessage
		wantOurs  string
	}{
		{name: "nothing", member: "options", ours: raw(`{"num_predict":5}`), wantOurs: `{"num_predict":5}`},
		{
			name:      "owned dropped",
			extra:     map[string]json.RawMessage{"model": raw(`"x"`), "seed": raw(`1`), "tools": raw(`[]`)},
			wantExtra: map[string]json.RawMessage{"seed": raw(`1`)},
		},
		{
			name:      "member merged, ours winning",
			extra:     map[string]json.RawMessage{"options": raw(`{"num_ctx":8192,"num_predict":1}`), "seed": raw(`1`)},
			member:    "options",
			ours:      raw(`{"num_predict":5}`),
			wantExtra: map[string]json.RawMessage{"seed": raw(`1`)},
			wantOurs:  `{"num_ctx":8192,"num_predict":5}`,
		},
		{
			name:      "member without ours passes through",
			extra:     map[string]json.RawMessage{"options": raw(`{"num_ctx":8192}`)},
			member:    "options",
			wantExtra: map[string]json.RawMessage{"options": raw(`{"num_ctx":8192}`)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := maps.Clone(tt.extra)
			extra, ours, err := PassThrough(tt.extra, owned, tt.member, tt.ours)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantExtra, extra); diff != "" {
				t.Errorf("extra (-want +got):\n%s", diff)
			}
			if string(ours) != tt.wantOurs {
				t.Errorf("member %s, want %s", ours, tt.wantOurs)
			}
			if diff := cmp.Diff(before, tt.extra); diff != "" {
				t.Errorf("extra modified (-before +after):\n%s", diff)
			}
		})
	}
	_, _, err := PassThrough(map[string]json.RawMessage{"options": raw(`{"a":`)}, nil, "options", raw(`{}`))
	if err == nil || !strings.HasPrefix(err.Error(), `pass-through field "options": `) {
		t.Errorf("a broken member: error %v", err)
	}
}

func TestMarshalKeepsHTML(t *testing.T) {
	b, err := Marshal(map[string]string{"d": "a <b> & c"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"d":"a <b> & c"}`; string(b) != want {
		t.Errorf("Marshal = %s, want %s", b, want)
	}
}

func TestSetHeaders(t *testing.T) {
	vs := []string{"on"}
	p := Patch{Header: http.Header{"x-fast-mode": vs}}
	h := http.Header{"Content-Type": {"application/json"}, "X-Fast-Mode": {"off"}}
	p.SetHeaders(h)
	want := http.Header{"Content-Type": {"application/json"}, "X-Fast-Mode": {"on"}}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	h["X-Fast-Mode"][0] = "changed"
	if vs[0] != "on" {
		t.Error("the headers share the patch's values")
	}
}

func TestReadBody(t *testing.T) {
	if b, err := ReadBody(strings.NewReader("12345"), 5); err != nil || string(b) != "12345" {
		t.Errorf("ReadBody at the cap = %q, %v", b, err)
	}
	if _, err := ReadBody(strings.NewReader("123456"), 5); err == nil || err.Error() != "response larger than 5 bytes" {
		t.Errorf("ReadBody past the cap: error %v", err)
	}
	_, err := ReadBody(iotest.ErrReader(io.ErrClosedPipe), 5)
	if !errors.Is(err, io.ErrClosedPipe) || !strings.HasPrefix(err.Error(), "read response: ") {
		t.Errorf("ReadBody read error: %v", err)
	}
}

func TestCutShort(t *testing.T) {
	for in, want := range map[string]bool{`{"a":`: true, `{"a":1`: true, `{"a":x, "b":2}`: false, `<html>`: false} {
		var v any
		err := json.Unmarshal([]byte(in), &v)
		if got := CutShort(err, []byte(in)); got != want {
			t.Errorf("CutShort(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestUnmarshalLoose(t *testing.T) {
	var v struct {
		N int    `json:"n"`
		S string `json:"s"`
	}
	if err := UnmarshalLoose([]byte(`{"n":"seven","s":"kept"}`), &v); err != nil || v.S != "kept" {
		t.Errorf("UnmarshalLoose = %+v, %v", v, err)
	}
	if err := UnmarshalLoose([]byte(`{"n":`), &v); err == nil {
		t.Error("UnmarshalLoose of broken JSON: no error")
	}
}

func TestUserContent(t *testing.T) {
	tag := func(p *Part) string { return string(p.Kind) + ":" + p.Text + p.ImageURL }
	text := func(s string) Part { return Part{Kind: KindText, Text: s} }
	img := Part{Kind: KindImage, ImageURL: "https://x/a.png"}
	tests := []struct {
		name  string
		parts []Part
		want  any
	}{
		{"one text", []Part{text("hi")}, "hi"},
		{"one empty text", []Part{text("")}, ""},
		{"text and image", []Part{text("look"), img}, []string{"text:look", "image:https://x/a.png"}},
		{"empty texts left out", []Part{text(""), img, text("")}, []string{"image:https://x/a.png"}},
		{"nothing left", []Part{text(""), {Kind: KindToolCall, Name: "f"}}, ""},
		{"none", nil, ""},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, UserContent(tt.parts, tag)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestSplitToolResults(t *testing.T) {
	parts := []Part{
		{Kind: KindToolResult, CallID: "a", Text: "1"},
		{Kind: KindImage, ImageURL: "data:image/png;base64,AA=="},
		{Kind: KindReasoning, Text: "dropped"},
		{Kind: KindToolResult, CallID: "b", Text: "2"},
		{Kind: KindText, Text: "note"},
	}
	results, rest := SplitToolResults(parts)
	if diff := cmp.Diff([]Part{parts[0], parts[3]}, results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Part{parts[1], parts[4]}, rest); diff != "" {
		t.Errorf("rest (-want +got):\n%s", diff)
	}
}
