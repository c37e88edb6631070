package llm

import (
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
	// ID is the last event ID as of this event: an `id` field sets it and it carries over to
	// the events that follow, as in the WHATWG model.
	ID string
}

// Done reports whether the event is OpenAI's `data: [DONE]` terminator.
func (e *SSE) Done() bool { return bytes.Equal(e.Data, []byte("[DONE]")) }

// ReadSSE reads server-sent events from r (the WHATWG framing): lines end in LF, CRLF or CR;
// a leading byte order mark is dropped; lines starting with ':' are comments; a line with no
// colon is a field with an empty value; `data` fields accumulate with "\n"; a blank line
// dispatches the event; an event with no data field is skipped. A line longer than maxLine
// (MaxLine when 0), or an event whose data grows past it, ends the sequence with
// ErrLineTooLong. The sequence ends at EOF: whether the stream was complete is the dialect's
// call (it knows its terminal event), so an unterminated last event is still delivered.
// Event.Data is valid only until the next iteration.
func ReadSSE(r io.Reader, maxLine int) iter.Seq2[SSE, error] {
	return func(yield func(SSE, error) bool) {
		lr := newLineReader(r, maxLine)
		var (
			data    []byte
			hasData bool
			event   string
			lastID  string
			names   nameCache
			first   = true
		)
		dispatch := func() bool {
			if !hasData {
				event = ""
				return true
			}
			ev := SSE{Event: event, Data: data, ID: lastID}
			data, hasData, event = data[:0], false, ""
			return yield(ev, nil)
		}
		for {
			line, err := lr.next()
			if err != nil && !errors.Is(err, io.EOF) {
				yield(SSE{}, err)
				return
			}
			eof := err != nil
			if first {
				first = false
				line = bytes.TrimPrefix(line, bom)
			}
			switch {
			case len(line) == 0:
				if !eof {
					if !dispatch() {
						return
					}
					continue
				}
			case line[0] == ':': // a comment
			default:
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
						data = append(data, '\n')
					}
					if len(data)+len(value) > lr.max {
						yield(SSE{}, fmt.Errorf("%w (an event's data past %d bytes)", ErrLineTooLong, lr.max))
						return
					}
					data = append(data, value...)
					hasData = true
				case "event":
					event = names.intern(value)
				case "id":
					if bytes.IndexByte(value, 0) < 0 {
						lastID = string(value)
					}
				}
			}
			if eof {
				dispatch()
				return
			}
		}
	}
}

var bom = []byte("\xEF\xBB\xBF")

// nameCache keeps the few distinct event names of a stream, so that a stream of many events
// with an `event:` line each does not allocate a string per event.
type nameCache []string

func (c *nameCache) intern(b []byte) string {
	for _, s := range *c {
		if s == string(b) {
			return s
		}
	}
	s := string(b)
	if len(*c) < 32 {
		*c = append(*c, s)
	}
	return s
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

// lineReader splits on LF, CRLF or a lone CR, with a cap on line length. It reads into one
// buffer and returns lines as slices of it, so a line costs no copy; the buffer grows only for
// a line longer than it, up to the cap.
type lineReader struct {
	r          io.Reader
	max        int
	buf        []byte
	start, end int   // unread bytes are buf[start:end]
	err        error // the reader's error, returned once the buffer is drained
	skipLF     bool  // the last line ended in CR: a following LF belongs to it
}

func newLineReader(r io.Reader, max int) *lineReader {
	if max <= 0 {
		max = MaxLine
	}
	return &lineReader{r: r, max: max, buf: make([]byte, min(32<<10, max+1))}
}

// next returns the next line without its terminator, valid until the next call. At the end it
// returns the last unterminated line (nil when there is none) with io.EOF.
func (l *lineReader) next() ([]byte, error) {
	scanned := 0 // bytes at the start of buf[start:end] known to hold no terminator
	for {
		if l.skipLF && l.start < l.end {
			l.skipLF = false
			if l.buf[l.start] == '\n' {
				l.start++
			}
		}
		if l.skipLF && l.err != nil {
			l.skipLF = false
		}
		if !l.skipLF {
			if i := indexEOL(l.buf[l.start+scanned : l.end]); i >= 0 {
				n := scanned + i
				if n > l.max {
					return nil, l.tooLong()
				}
				line := l.buf[l.start : l.start+n]
				l.skipLF = l.buf[l.start+n] == '\r'
				l.start += n + 1
				return line, nil
			}
			scanned = l.end - l.start
			if scanned > l.max {
				return nil, l.tooLong()
			}
		}
		if l.err != nil {
			if !errors.Is(l.err, io.EOF) {
				return nil, fmt.Errorf("read stream: %w", l.err)
			}
			if l.start == l.end {
				return nil, io.EOF
			}
			line := l.buf[l.start:l.end]
			l.start = l.end
			return line, io.EOF
		}
		l.fill()
	}
}

func (l *lineReader) tooLong() error {
	return fmt.Errorf("%w (more than %d bytes)", ErrLineTooLong, l.max)
}

// fill reads more input after the unread bytes, moving them to the front or growing the buffer
// (never past the cap plus one terminator) when there is no room.
func (l *lineReader) fill() {
	if l.start > 0 && l.end == len(l.buf) {
		l.end = copy(l.buf, l.buf[l.start:l.end])
		l.start = 0
	}
	if l.end == len(l.buf) {
		nb := make([]byte, min(2*len(l.buf), l.max+1))
		l.end = copy(nb, l.buf[l.start:l.end])
		l.start = 0
		l.buf = nb
	}
	for range 100 {
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		if err != nil {
			l.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	l.err = io.ErrNoProgress
}

// indexEOL returns the index of the first CR or LF in b, or -1.
func indexEOL(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.IndexByte(b, '\r')
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	return i
}
