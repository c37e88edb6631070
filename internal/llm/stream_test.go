package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ev is an SSE with its data as a string, for comparing what a sequence yielded.
type ev struct {
	Event, Data, ID string
}

func collectSSE(r io.Reader, max int) ([]ev, error) {
	var out []ev
	for e, err := range ReadSSE(r, max) {
		if err != nil {
			return out, err
		}
		out = append(out, ev{e.Event, string(e.Data), e.ID})
	}
	return out, nil
}

func TestReadSSE(t *testing.T) {
	long := strings.Repeat("x", 64)
	tests := []struct {
		name    string
		in      string
		max     int
		want    []ev
		wantErr error
	}{
		{name: "empty"},
		{name: "one event", in: "data: a\n\n", want: []ev{{Data: "a"}}},
		{name: "two events", in: "data: a\n\ndata: b\n\n", want: []ev{{Data: "a"}, {Data: "b"}}},
		{name: "CRLF", in: "event: x\r\ndata: a\r\n\r\ndata: b\r\n\r\n", want: []ev{{"x", "a", ""}, {Data: "b"}}},
		{name: "lone CR", in: "event: x\rdata: a\r\rdata: b\r\r", want: []ev{{"x", "a", ""}, {Data: "b"}}},
		{name: "mixed line ends", in: "data: a\r\n\rdata: b\n\r\ndata: c\r\r", want: []ev{{Data: "a"}, {Data: "b"}, {Data: "c"}}},
		{name: "CR LF split is one terminator, LF CR is two", in: "data: a\n\rdata: b\n\n", want: []ev{{Data: "a"}, {Data: "b"}}},
		{name: "comments", in: ": ping\ndata: a\n: more\n\n:\n\n", want: []ev{{Data: "a"}}},
		{name: "comment only stream", in: ": keep-alive\n\n: keep-alive\n\n"},
		{name: "multi-line data", in: "data: a\ndata: b\ndata:\ndata: c\n\n", want: []ev{{Data: "a\nb\n\nc"}}},
		{name: "one space stripped, not two", in: "data:  a\ndata:b\n\n", want: []ev{{Data: " a\nb"}}},
		{name: "tab is not stripped", in: "data:\ta\n\n", want: []ev{{Data: "\ta"}}},
		{name: "colon in value", in: "data: {\"a\":\"b: c\"}\n\n", want: []ev{{Data: `{"a":"b: c"}`}}},
		{name: "field with no colon is an empty value", in: "data\n\n", want: []ev{{Data: ""}}},
		{name: "field with no colon joins", in: "data: a\ndata\n\n", want: []ev{{Data: "a\n"}}},
		{name: "event with no data is skipped", in: "event: ping\n\ndata: a\n\n", want: []ev{{Data: "a"}}},
		{name: "event name resets after dispatch", in: "event: x\ndata: a\n\ndata: b\n\n", want: []ev{{"x", "a", ""}, {Data: "b"}}},
		{name: "last event name wins", in: "event: x\nevent: y\ndata: a\n\n", want: []ev{{"y", "a", ""}}},
		{name: "id carries over", in: "id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", want: []ev{{"", "a", "1"}, {"", "b", "1"}, {"", "c", ""}}},
		{name: "id with NUL is ignored", in: "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", want: []ev{{"", "a", "1"}, {"", "b", "1"}}},
		{name: "unknown fields ignored", in: "retry: 10\nfoo: bar\ndata: a\nDATA: b\n\n", want: []ev{{Data: "a"}}},
		{name: "DONE", in: "data: {}\n\ndata: [DONE]\n\n", want: []ev{{Data: "{}"}, {Data: "[DONE]"}}},
		{name: "BOM dropped", in: "\xEF\xBB\xBFdata: a\n\n", want: []ev{{Data: "a"}}},
		{name: "BOM only at start", in: "data: a\n\n\xEF\xBB\xBFdata: b\n\n", want: []ev{{Data: "a"}}},
		{name: "last event without blank line", in: "data: a\n\ndata: b\n", want: []ev{{Data: "a"}, {Data: "b"}}},
		{name: "last line without terminator", in: "data: a\n\ndata: b", want: []ev{{Data: "a"}, {Data: "b"}}},
		{name: "last line unterminated CR", in: "data: b\r", want: []ev{{Data: "b"}}},
		{name: "trailing field without data", in: "data: a\n\nevent: x", want: []ev{{Data: "a"}}},
		{name: "blank lines only", in: "\n\r\n\r\n\n"},
		{name: "line at the cap", in: "data: " + long[:4] + "\n\n", max: 10, want: []ev{{Data: long[:4]}}},
		{name: "line past the cap", in: "data: a\n\ndata: " + long[:5] + "\n\n", max: 10, want: []ev{{Data: "a"}}, wantErr: ErrLineTooLong},
		{name: "unterminated line past the cap", in: "data: " + long, max: 10, wantErr: ErrLineTooLong},
		{name: "comment past the cap", in: ": " + long + "\n", max: 10, wantErr: ErrLineTooLong},
		{name: "data of one event past the cap", in: "data: 123\ndata: 456\ndata: 789\n\n", max: 10, wantErr: ErrLineTooLong},
		{name: "data at the cap over lines", in: "data: 1234\ndata: 5\n\n", max: 10, want: []ev{{Data: "1234\n5"}}},
		{name: "NUL and invalid UTF-8 pass through", in: "data: a\x00\xff\n\n", want: []ev{{Data: "a\x00\xff"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The same input read whole and a byte at a time: line ends split across reads
			// must not change the result.
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in)), iotest.HalfReader(strings.NewReader(tt.in))} {
				got, err := collectSSE(r, tt.max)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestReadSSEDataValidUntilNext(t *testing.T) {
	// Data is reused between events: a caller that keeps it must copy, and the event it
	// holds is intact until it asks for the next.
	var kept [][]byte
	for e, err := range ReadSSE(strings.NewReader("data: first\n\ndata: second\n\n"), 0) {
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, bytes.Clone(e.Data))
	}
	if diff := cmp.Diff([][]byte{[]byte("first"), []byte("second")}, kept); diff != "" {
		t.Error(diff)
	}
}

func TestReadSSEStopEarly(t *testing.T) {
	n := 0
	for _, err := range ReadSSE(strings.NewReader("data: a\n\ndata: b\n\ndata: c\n\n"), 0) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("ranged over %d events, want 2", n)
	}
}

var errBoom = errors.New("boom")

func TestReadSSEReadError(t *testing.T) {
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(errBoom))
	got, err := collectSSE(r, 0)
	if !errors.Is(err, errBoom) {
		t.Fatalf("err = %v, want %v", err, errBoom)
	}
	// The complete first event was delivered; the half-read second one was not.
	if diff := cmp.Diff([]ev{{Data: "a"}}, got); diff != "" {
		t.Error(diff)
	}
}

// stuckReader returns no bytes and no error, forever.
type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }

func TestReadSSENoProgress(t *testing.T) {
	_, err := collectSSE(stuckReader{}, 0)
	if !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}

func TestReadSSEDataWithError(t *testing.T) {
	// A reader may return its last bytes together with io.EOF.
	got, err := collectSSE(iotest.DataErrReader(strings.NewReader("data: a\n\ndata: b")), 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]ev{{Data: "a"}, {Data: "b"}}, got); diff != "" {
		t.Error(diff)
	}
}

func TestReadSSELongLines(t *testing.T) {
	// Lines longer than the reader's first buffer grow it, up to the cap.
	big := strings.Repeat("y", 100<<10)
	in := "data: " + big + "\n\ndata: small\n\n" + "data: " + big + "\n\n"
	got, err := collectSSE(strings.NewReader(in), 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]ev{{Data: big}, {Data: "small"}, {Data: big}}, got); diff != "" {
		t.Error(diff)
	}
	if _, err := collectSSE(strings.NewReader(in), 64<<10); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("err = %v, want ErrLineTooLong", err)
	}
}

func collectNDJSON(r io.Reader, max int) ([]string, error) {
	var out []string
	for line, err := range ReadNDJSON(r, max) {
		if err != nil {
			return out, err
		}
		out = append(out, string(line))
	}
	return out, nil
}

func TestReadNDJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		max     int
		want    []string
		wantErr error
	}{
		{name: "empty"},
		{name: "lines", in: "{\"a\":1}\n{\"b\":2}\n", want: []string{`{"a":1}`, `{"b":2}`}},
		{name: "CRLF", in: "{\"a\":1}\r\n{\"b\":2}\r\n", want: []string{`{"a":1}`, `{"b":2}`}},
		{name: "lone CR", in: "{\"a\":1}\r{\"b\":2}\r", want: []string{`{"a":1}`, `{"b":2}`}},
		{name: "blank and space lines skipped", in: "\n  \n{\"a\":1}\n\t\n\n", want: []string{`{"a":1}`}},
		{name: "surrounding space trimmed", in: "  {\"a\":1} \t\n", want: []string{`{"a":1}`}},
		{name: "last line unterminated", in: "{\"a\":1}\n{\"b\":2}", want: []string{`{"a":1}`, `{"b":2}`}},
		{name: "not parsed", in: "not json\n", want: []string{"not json"}},
		{name: "at the cap", in: "0123456789\n", max: 10, want: []string{"0123456789"}},
		{name: "past the cap", in: "{}\n01234567890\n{}\n", max: 10, want: []string{"{}"}, wantErr: ErrLineTooLong},
		{name: "unterminated past the cap", in: "01234567890", max: 10, wantErr: ErrLineTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				got, err := collectNDJSON(r, tt.max)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("lines (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestReadNDJSONReadError(t *testing.T) {
	got, err := collectNDJSON(io.MultiReader(strings.NewReader("{}\n{\"half"), iotest.ErrReader(errBoom)), 0)
	if !errors.Is(err, errBoom) {
		t.Fatalf("err = %v, want %v", err, errBoom)
	}
	if diff := cmp.Diff([]string{"{}"}, got); diff != "" {
		t.Error(diff)
	}
}

// refSSE is a plain reading of the WHATWG rules over a whole string, the model the fuzz
// target holds ReadSSE to.
func refSSE(in string, max int) ([]ev, bool) {
	var lines []string
	for len(in) > 0 {
		i := strings.IndexAny(in, "\r\n")
		if i < 0 {
			lines = append(lines, in)
			break
		}
		lines = append(lines, in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
	}
	var out []ev
	var data []string
	var event, id string
	has := false
	flush := func() {
		if has {
			out = append(out, ev{event, strings.Join(data, "\n"), id})
		}
		data, event, has = nil, "", false
	}
	for i, l := range lines {
		if len(l) > max {
			return out, false
		}
		if i == 0 {
			l = strings.TrimPrefix(l, "\xEF\xBB\xBF") // the cap counts the mark
		}
		if l == "" {
			flush()
			continue
		}
		if l[0] == ':' {
			continue
		}
		f, v, _ := strings.Cut(l, ":")
		v = strings.TrimPrefix(v, " ")
		switch f {
		case "data":
			data = append(data, v)
			has = true
			if len(strings.Join(data, "\n")) > max {
				return out, false
			}
		case "event":
			event = v
		case "id":
			if !strings.Contains(v, "\x00") {
				id = v
			}
		}
	}
	flush()
	return out, true
}

func FuzzReadSSE(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "event: x\r\ndata: a\r\n\r\n", "data: a\rdata: b\r\r", ": c\ndata\n\n",
		"id: 1\ndata: a\n\ndata: b", "\xEF\xBB\xBFdata: [DONE]\n\n", "data: 0123456789abcdef\n\n",
	} {
		f.Add([]byte(s), uint8(16))
	}
	f.Fuzz(func(t *testing.T, in []byte, max uint8) {
		m := int(max) + 1
		want, ok := refSSE(string(in), m)
		for _, r := range []io.Reader{bytes.NewReader(in), iotest.OneByteReader(bytes.NewReader(in))} {
			got, err := collectSSE(r, m)
			if ok != (err == nil) || err != nil && !errors.Is(err, ErrLineTooLong) {
				t.Fatalf("err = %v, reference ok = %v", err, ok)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("events differ from the reference (-want +got):\n%s", diff)
			}
		}
	})
}

func FuzzReadNDJSON(f *testing.F) {
	for _, s := range []string{"{}\n{\"a\":1}\r\n", "  x  \r\ry", "\n\n", "0123456789abcdef"} {
		f.Add([]byte(s), uint8(8))
	}
	f.Fuzz(func(t *testing.T, in []byte, max uint8) {
		m := int(max) + 1
		var want []string
		ok := true
		for l := range strings.FieldsFuncSeq(strings.ReplaceAll(string(in), "\r\n", "\n"), func(r rune) bool { return r == '\n' || r == '\r' }) {
			if len(l) > m {
				ok = false
				break
			}
			if t := strings.TrimSpace(l); t != "" {
				want = append(want, t)
			}
		}
		got, err := collectNDJSON(bytes.NewReader(in), m)
		if ok != (err == nil) || err != nil && !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("err = %v, reference ok = %v", err, ok)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("lines differ from the reference (-want +got):\n%s", diff)
		}
	})
}

func sseBody(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"token %d \"},\"finish_reason\":null}]}\n\n", i)
	}
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

func BenchmarkReadSSE(b *testing.B) {
	body := sseBody(1000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for ev, err := range ReadSSE(bytes.NewReader(body), 0) {
			if err != nil {
				b.Fatal(err)
			}
			n += len(ev.Data)
		}
	}
}
