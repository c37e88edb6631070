package llm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
)

// MaxLine is the default cap on one stream line (an SSE field or an NDJSON document). Providers
// send whole tool-call arguments in one line at most; 8 MiB is far above any real one and bounds
// what a broken or hostile upstream can make nodmix buffer.
const MaxLine = 8 << 20

// SSE is one server-sent event: its `event` field ("" when absent) and its data lines joined
// with "\n".
type SSE struct {
	Event string
	Data  []byte
	ID    string
}

// Done reports whether the event is OpenAI's `data: [DONE]` terminator.
func (e *SSE) Done() bool { return bytes.Equal(e.Data, []byte("[DONE]")) }

// ReadSSE reads server-sent events from r (the WHATWG framing): lines end in LF, CRLF or CR;
// lines starting with ':' are comments; `data` fields accumulate with "\n"; a blank line
// dispatches the event; an event with no data is skipped. A line longer than maxLine (MaxLine
// when 0) ends the sequence with ErrLineTooLong. The sequence ends at EOF: whether the stream
// was complete is the dialect's call (it knows its terminal event), so an unterminated last
// event is still delivered. Event.Data is valid only until the next iteration.
func ReadSSE(r io.Reader, maxLine int) iter.Seq2[SSE, error] {
	return func(yield func(SSE, error) bool) {
		lr := newLineReader(r, maxLine)
		var ev SSE
		var data bytes.Buffer
		hasData := false
		for {
			line, err := lr.next()
			if err != nil && !errors.Is(err, io.EOF) {
				yield(SSE{}, err)
				return
			}
			eof := errors.Is(err, io.EOF)
			if line == nil && eof || len(line) == 0 && !eof {
				// Blank line (or EOF): dispatch.
				if hasData {
					ev.Data = data.Bytes()
					if !yield(ev, nil) {
						return
					}
				}
				ev, hasData = SSE{}, false
				data.Reset()
				if eof {
					return
				}
				continue
			}
			if line[0] != ':' {
				field, value := line, []byte(nil)
				if i := bytes.IndexByte(line, ':'); i >= 0 {
					field, value = line[:i], line[i+1:]
					if len(value) > 0 && value[0] == ' ' {
						value = value[1:]
					}
				}
				switch string(field) {
				case "data":
					if hasData {
						data.WriteByte('\n')
					}
					data.Write(value)
					hasData = true
				case "event":
					ev.Event = string(value)
				case "id":
					ev.ID = string(value)
				}
			}
			if eof {
				if hasData {
					ev.Data = data.Bytes()
					yield(ev, nil)
				}
				return
			}
		}
	}
}

// ReadNDJSON reads newline-delimited JSON documents from r: one per line, blank lines skipped,
// CRLF accepted. A line longer than maxLine (MaxLine when 0) ends the sequence with
// ErrLineTooLong. The line is valid only until the next iteration; the sequence does not parse it.
func ReadNDJSON(r io.Reader, maxLine int) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		lr := newLineReader(r, maxLine)
		for {
			line, err := lr.next()
			if err != nil && !errors.Is(err, io.EOF) {
				yield(nil, err)
				return
			}
			if t := bytes.TrimSpace(line); len(t) > 0 {
				if !yield(t, nil) {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
}

// lineReader splits on LF, CRLF or a lone CR, with a cap on line length.
type lineReader struct {
	br     *bufio.Reader
	max    int
	buf    []byte
	skipLF bool // the last line ended in CR: a following LF belongs to it
}

func newLineReader(r io.Reader, max int) *lineReader {
	if max <= 0 {
		max = MaxLine
	}
	return &lineReader{br: bufio.NewReaderSize(r, 32<<10), max: max}
}

// next returns the next line without its terminator. At the end it returns the last
// unterminated line (possibly nil) with io.EOF.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		b, err := l.br.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if len(l.buf) == 0 {
					return nil, io.EOF
				}
				return l.buf, io.EOF
			}
			return nil, fmt.Errorf("read stream: %w", err)
		}
		if l.skipLF {
			l.skipLF = false
			if b == '\n' {
				continue
			}
		}
		switch b {
		case '\n':
			return l.buf, nil
		case '\r':
			l.skipLF = true
			return l.buf, nil
		}
		if len(l.buf) >= l.max {
			return nil, fmt.Errorf("%w (more than %d bytes)", ErrLineTooLong, l.max)
		}
		l.buf = append(l.buf, b)
	}
}
