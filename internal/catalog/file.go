package catalog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
)

// fileTool is one line of a catalog file (JSON Lines).
type fileTool struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Label       string          `json:"label"`
	Description string          `json:"description"`
	Summary     string          `json:"summary"`
	Source      string          `json:"source"`
	Server      string          `json:"server"`
	MCPToolName string          `json:"mcp_tool_name"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// LineError is a catalog file line that could not be read.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// decodeLineSlow reads a line with the standard decoder, which names what is wrong with it.
func decodeLineSlow(b []byte, ft *fileTool) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(ft); err != nil {
		return lineError(b, err)
	}
	if dec.InputOffset() != int64(len(b)) {
		return fmt.Errorf("not a catalog entry: text after the object")
	}
	return repeatedKey(b)
}

// maxLine is the longest line ReadFile reads, newline excluded: a line of this length or more is
// refused with tooLongError (bufio.ErrTooLong, as the scanner that reads a stream refuses it).
const maxLine = 16 << 20

// ReadFile reads a catalog file: one JSON object a line, blank lines skipped. `source` defaults to
// "mcp"; a tool without a name takes its id. Errors name the line. A UTF-8 byte order mark at the
// very start of the text, as Windows editors write one, is skipped (it counts towards the length
// of line 1); anywhere else it is text, which no line may start with.
//
// A regular file or a reader of memory is read whole and its lines decoded in parallel, one
// stretch of lines per core, then checked for duplicate ids in line order (fileparallel.go);
// anything else (a pipe, a socket) is read a line at a time. Both read and refuse the same lines
// with the same errors, and the first error in line order is the one returned. The strings and
// schemas of the tools are copied into large shared blocks (an arena) rather than allocated one by
// one.
func ReadFile(r io.Reader) ([]Tool, error) {
	return ReadFileWith(r, ReadOptions{})
}

// ReadOptions are the checks of ReadFileWith beyond those of every catalog file.
type ReadOptions struct {
	// ValidNames refuses a line whose model-facing name (its name, or its id when it has none)
	// is not a ValidName: what is sent to a model must be a name every provider accepts. Off,
	// a file of a retrieval set keeps the names it was published with.
	ValidNames bool
	// UniqueNames refuses a line whose model-facing name is that of an earlier line, naming
	// both lines: the catalog a file is loaded into refuses two tools of one name, and only
	// the file knows where they are. Off, a retrieval set may repeat a name.
	UniqueNames bool
}

// ReadFileWith is ReadFile with the checks of opts.
func ReadFileWith(r io.Reader, opts ReadOptions) ([]Tool, error) {
	if data, readErr, ok := readWhole(r); ok {
		return readLines(data, readErr, min(runtime.GOMAXPROCS(0), 1+len(data)/minPart), opts)
	}
	var (
		chunks [][]Tool
		cur    []Tool
		a      arena
		n      int
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	var split lineSplitter
	sc.Split(split.split)
	line := 0
	seen := map[string]int{}
	var names map[string]int // with opts.UniqueNames
	if opts.UniqueNames {
		names = map[string]int{}
	}
	var ft fileTool // one for every line: the slow path makes it escape
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, bom)
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		t, afterDup, err := a.lineTool(b, &ft, opts)
		if err != nil && !afterDup {
			return nil, &LineError{line, err}
		}
		if prev, ok := seen[t.ID]; ok {
			return nil, &LineError{line, dupError(t.ID, prev)}
		}
		if err != nil {
			return nil, &LineError{line, err}
		}
		seen[t.ID] = line
		if err := checkName(names, &t, line); err != nil {
			return nil, err
		}
		if len(cur) == cap(cur) {
			if cur != nil {
				chunks = append(chunks, cur)
			}
			cur = make([]Tool, 0, min(max(2*cap(cur), 64), 2048))
		}
		cur = append(cur, t)
		n++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = tooLongError{}
		}
		return nil, &LineError{line + 1, err}
	}
	if n == 0 {
		return nil, nil
	}
	if chunks == nil {
		return cur, nil
	}
	tools := make([]Tool, 0, n)
	for _, c := range chunks {
		tools = append(tools, c...)
	}
	return append(tools, cur...), nil
}

// lineSplitter is bufio.ScanLines that remembers how much of a line it has searched for its end.
// The scanner calls a split function again with the whole line each time a read adds to it:
// ScanLines searched the line from its start every time, so a long line arriving in small reads
// (a slow pipe) cost the square of its length, minutes for one of 15 MiB read 512 bytes at a time.
type lineSplitter struct {
	searched int // bytes at the start of data known to hold no newline
	scanned  int // bytes searched in all, for tests
}

func (s *lineSplitter) split(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	from := min(s.searched, len(data))
	if i := bytes.IndexByte(data[from:], '\n'); i >= 0 {
		s.scanned += i + 1
		s.searched = 0
		return from + i + 1, dropCR(data[:from+i]), nil
	}
	s.scanned += len(data) - from
	if atEOF {
		s.searched = 0
		return len(data), dropCR(data), nil
	}
	s.searched = len(data)
	return 0, nil, nil // the scanner reads more, keeping data at the start of what it passes next
}

// dropCR drops a terminal \r, as bufio.ScanLines does.
func dropCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

// bom is the UTF-8 byte order mark, which ReadFile skips at the start of the text.
var bom = []byte{0xEF, 0xBB, 0xBF}

func dupError(id string, prev int) error {
	return fmt.Errorf("id: %s is already used on line %d", quoteShort(id), prev)
}

// checkName refuses t, read from line, when its name is in names (with the line it was read
// from), and adds it otherwise. A nil names checks nothing. The check comes after every other
// check of the line, its id's included, whichever way the file is read.
func checkName(names map[string]int, t *Tool, line int) error {
	if names == nil {
		return nil
	}
	if prev, ok := names[t.Name]; ok {
		return &LineError{line, fmt.Errorf("name: %s is already used on line %d", quoteShort(t.Name), prev)}
	}
	names[t.Name] = line
	return nil
}

// lineTool reads one trimmed, non-blank line into a tool, with every check but whether its id is
// new, which depends on the lines before it. afterDup says that the error (if any) comes after
// that check: t then has the line's id, and the line is refused as a duplicate first if it is one.
func (a *arena) lineTool(b []byte, ft *fileTool, opts ReadOptions) (t Tool, afterDup bool, err error) {
	*ft = fileTool{}
	if a.decodeLine(b, ft) {
		switch n := len(ft.InputSchema); {
		case n > 0 && a.inPlace:
			ft.InputSchema = ft.InputSchema[:n:n] // no room to append into the next line
		case n > 0:
			ft.InputSchema = a.bytes(ft.InputSchema)
		}
	} else {
		// Afresh: a schema the fast path set before giving up is a slice of b, which the decoder
		// would append into, writing over the line, and the tool would keep the text of a buffer
		// that the next line is read into.
		*ft = fileTool{}
		if err := decodeLineSlow(b, ft); err != nil {
			return Tool{}, false, err
		}
	}
	if ft.ID == "" {
		return Tool{}, false, fmt.Errorf("id: is required")
	}
	t.ID = ft.ID
	var src Source
	switch ft.Source {
	case "", string(SourceMCP):
		src = SourceMCP
	case "nodmix", string(SourceBuiltin):
		src = SourceBuiltin
	case string(SourcePlugin):
		src = SourcePlugin
	case string(SourceClient):
		src = SourceClient
	default:
		return t, true, fmt.Errorf("source: must be one of mcp, builtin, plugin, client")
	}
	switch {
	case string(ft.InputSchema) == "null":
		ft.InputSchema = nil // as if absent: the tool takes the default object schema
	case len(ft.InputSchema) > 0 && ft.InputSchema[0] != '{':
		// The decoder has checked the JSON; a schema must also be an object.
		return t, true, fmt.Errorf("input_schema: must be a JSON object")
	}
	if ft.Name == "" {
		if opts.ValidNames && !ValidName(ft.ID) {
			return t, true, fmt.Errorf("name: is missing, and the id %s that stands for it must match %s", quoteShort(ft.ID), NamePattern)
		}
		ft.Name = ft.ID
	} else if opts.ValidNames && !ValidName(ft.Name) {
		return t, true, fmt.Errorf("name: %s must match %s", quoteShort(ft.Name), NamePattern)
	}
	owner := ft.Server
	if owner == "" {
		owner = "core"
	}
	return Tool{
		ID:          ft.ID,
		Name:        ft.Name,
		Label:       ft.Label,
		Summary:     ft.Summary,
		Description: ft.Description,
		InputSchema: ft.InputSchema,
		Source:      src,
		Owner:       owner,
		Server:      ft.Server,
		MCPToolName: ft.MCPToolName,
	}, false, nil
}

// arenaBlock is the size of an arena's blocks; a value larger than a quarter of it gets its own.
const arenaBlock = 64 << 10

// arena copies the strings and schemas of catalog lines into shared blocks. A block is only ever
// appended to, so what it handed out never changes; it lives as long as any tool that uses it.
type arena struct {
	strs strings.Builder
	buf  []byte
	// inPlace: the lines are never written again (text read whole), so a schema, most of a
	// catalog's bytes, stays where it is rather than being copied.
	inPlace bool
}

// string returns a copy of b.
func (a *arena) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > arenaBlock/4 {
		return string(b)
	}
	if a.strs.Cap()-a.strs.Len() < len(b) {
		a.strs = strings.Builder{}
		a.strs.Grow(arenaBlock)
	}
	start := a.strs.Len()
	a.strs.Write(b)
	return a.strs.String()[start:]
}

// bytes returns a copy of b, with no room to append into a neighbour.
func (a *arena) bytes(b []byte) []byte {
	if len(b) > arenaBlock/4 {
		return bytes.Clone(b)
	}
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, arenaBlock)
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[start:len(a.buf):len(a.buf)]
}

// unquote is the package's unquote, copying into the arena.
func (a *arena) unquote(v []byte, flags uint8) string {
	return unquoteWith(v, flags, a.string)
}
