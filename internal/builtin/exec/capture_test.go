package exec

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// naive is the obvious model of capture: keep everything, cut afterwards.
func naive(data []byte, limit int) (head, tail []byte, dropped int64) {
	h := limit / 2
	t := limit - h
	if len(data) <= limit {
		return data, nil, 0
	}
	return data[:h], data[len(data)-t:], int64(len(data) - limit)
}

func writeChunks(c *capture, data []byte, chunk int) {
	for len(data) > 0 {
		n := min(chunk, len(data))
		c.Write(data[:n])
		data = data[n:]
	}
}

func TestCaptureKeepsHeadAndTail(t *testing.T) {
	data := []byte(strings.Repeat("0123456789", 100)) // 1000 bytes, no newlines
	tests := []struct {
		name  string
		limit int
		chunk int
	}{
		{"fits", 2000, 7},
		{"exact", 1000, 1000},
		{"one write", 100, 1000},
		{"byte by byte", 100, 1},
		{"chunks larger than tail", 64, 50},
		{"chunks smaller than tail", 64, 3},
		{"odd limit", 33, 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapture(tt.limit)
			writeChunks(c, data, tt.chunk)
			wantHead, wantTail, wantDropped := naive(data, tt.limit)
			got := append(append([]byte(nil), c.head...), c.tail()...)
			want := append(append([]byte(nil), wantHead...), wantTail...)
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("kept bytes (-want +got):\n%s", diff)
			}
			if c.total != int64(len(data)) {
				t.Errorf("total = %d, want %d", c.total, len(data))
			}
			if d := c.total - int64(len(c.head)+len(c.tail())); d != wantDropped {
				t.Errorf("dropped = %d, want %d", d, wantDropped)
			}
		})
	}
}

func TestCaptureResultCutsAtLines(t *testing.T) {
	var b bytes.Buffer
	for i := range 1000 {
		b.WriteString(strings.Repeat("x", i%17))
		b.WriteString("\n")
	}
	data := b.Bytes()
	c := newCapture(200)
	writeChunks(c, data, 13)
	s := c.result()
	if len(s.head) == 0 || s.head[len(s.head)-1] != '\n' {
		t.Errorf("head does not end at a line boundary: %q", s.head)
	}
	if !bytes.HasPrefix(data, s.head) || !bytes.HasSuffix(data, s.tail) {
		t.Fatalf("head/tail are not the stream's ends")
	}
	if got := int64(len(s.head)+len(s.tail)) + s.omittedBytes; got != int64(len(data)) {
		t.Errorf("head+tail+omitted = %d, want %d", got, len(data))
	}
	wantLines := int64(bytes.Count(data, []byte{'\n'}) - bytes.Count(s.head, []byte{'\n'}) - bytes.Count(s.tail, []byte{'\n'}))
	if s.omittedLines != wantLines {
		t.Errorf("omittedLines = %d, want %d", s.omittedLines, wantLines)
	}
}

func TestCaptureResultKeepsRunes(t *testing.T) {
	data := []byte(strings.Repeat("é", 5000)) // 2-byte runes, no newlines
	c := newCapture(101)
	writeChunks(c, data, 999)
	s := c.result()
	for name, part := range map[string][]byte{"head": s.head, "tail": s.tail} {
		if !bytes.Equal(bytes.ToValidUTF8(part, nil), part) {
			t.Errorf("%s splits a rune: % x", name, part[:4])
		}
	}
}

func FuzzCapture(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), uint16(4), uint8(3))
	f.Add([]byte(strings.Repeat("ab\n", 300)), uint16(50), uint8(7))
	f.Add([]byte{0xff, 0xfe, 'a', '\n', 0xc3, 0xa9}, uint16(3), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, limit uint16, chunk uint8) {
		lim := int(limit)%4096 + 2
		c := newCapture(lim)
		writeChunks(c, data, int(chunk)+1)
		wantHead, wantTail, _ := naive(data, lim)
		got := append(append([]byte(nil), c.head...), c.tail()...)
		if !bytes.Equal(got, append(append([]byte(nil), wantHead...), wantTail...)) {
			t.Fatalf("kept bytes differ from the model")
		}
		s := c.result()
		if int64(len(s.head)+len(s.tail))+s.omittedBytes != int64(len(data)) {
			t.Fatalf("head+tail+omitted != total")
		}
		if !bytes.HasPrefix(data, s.head) || !bytes.HasSuffix(data, s.tail) {
			t.Fatalf("result is not the stream's ends")
		}
	})
}
