package catalog

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
)

// minPart is the least text a core is given to decode: below it, starting one costs more than it
// saves.
const minPart = 256 << 10

// readWhole reads r to its end when it is a regular file or a reader of memory, which cannot
// block; ok is false for anything else, which ReadFile reads a line at a time so that a line is
// decoded (or refused) as soon as it arrives. readErr is an error that ended the reading early:
// the lines before it are still read, as the line scanner reads them.
func readWhole(r io.Reader) (data []byte, readErr error, ok bool) {
	size := 0
	switch r := r.(type) {
	case *os.File:
		fi, err := r.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return nil, nil, false
		}
		size = int(min(fi.Size(), 256<<20)) // a hint: the file may change, or be read from its middle
	case *bytes.Reader:
		size = r.Len()
	case *strings.Reader:
		size = r.Len()
	case *bytes.Buffer:
		size = r.Len()
	default:
		return nil, nil, false
	}
	data = make([]byte, 0, size+1) // +1: the end is found without growing
	for {
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil, true
		}
		if err != nil {
			return data, err, true
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// partResult is what decoding one stretch of lines found.
type partResult struct {
	n     int   // tools, from tools[at] on
	lines []int // the line of each tool, counted from 1 at the stretch's first line
	count int   // the stretch's lines, when err is nil
	// The first refused line, where decoding stopped: its line, its error, whether that comes
	// after the duplicate id check (see lineTool) and then the line's id.
	errLine  int
	err      error
	afterDup bool
	errID    string
}

// readLines is ReadFile of text read whole, decoded in up to workers stretches of whole lines at
// once into one slice, each stretch into the places after those of the stretches before. The
// ids are then checked in line order, so that the error returned is the first in line order, as
// reading a line at a time finds it. The schemas are slices of data, which is never written again.
func readLines(data []byte, readErr error, workers int, opts ReadOptions) ([]Tool, error) {
	parts := splitLines(data, max(1, workers))
	at := make([]int, len(parts)+1) // the first slot of each stretch's tools
	for i, p := range parts {
		at[i+1] = at[i] + maxTools(p)
	}
	tools := make([]Tool, at[len(parts)])
	results := make([]partResult, len(parts))
	if len(parts) == 1 {
		results[0] = decodePart(parts[0], tools, true, opts)
	} else {
		var wg sync.WaitGroup
		for i, p := range parts {
			wg.Go(func() { results[i] = decodePart(p, tools[at[i]:at[i+1]:at[i+1]], i == 0, opts) })
		}
		wg.Wait()
	}
	total := 0
	for _, r := range results {
		total += r.n
	}
	seen := make(map[string]int, total)
	var names map[string]int // with opts.UniqueNames
	if opts.UniqueNames {
		names = make(map[string]int, total)
	}
	first := 0 // lines before the stretch
	n := 0     // tools kept, moved down over the slots of blank lines
	for i, r := range results {
		for k := range r.n {
			t := &tools[at[i]+k]
			line := first + r.lines[k]
			if prev, ok := seen[t.ID]; ok {
				return nil, &LineError{line, dupError(t.ID, prev)}
			}
			seen[t.ID] = line
			if err := checkName(names, t, line); err != nil {
				return nil, err
			}
		}
		if r.err != nil {
			line := first + r.errLine
			if prev, ok := seen[r.errID]; ok && r.afterDup {
				return nil, &LineError{line, dupError(r.errID, prev)}
			}
			return nil, &LineError{line, r.err}
		}
		if n != at[i] {
			copy(tools[n:], tools[at[i]:at[i]+r.n])
		}
		n += r.n
		first += r.count
	}
	if readErr != nil {
		return nil, &LineError{first + 1, readErr}
	}
	if n == 0 {
		return nil, nil
	}
	clear(tools[n:])
	return tools[:n], nil
}

// splitLines cuts data into n stretches of about the same length, each ending after a newline
// but the last.
func splitLines(data []byte, n int) [][]byte {
	parts := make([][]byte, 0, n)
	for k := n; k > 1; k-- {
		cut := len(data) / k
		i := bytes.IndexByte(data[cut:], '\n')
		if i < 0 {
			break
		}
		parts = append(parts, data[:cut+i+1])
		data = data[cut+i+1:]
	}
	return append(parts, data)
}

// minToolLine is the length of the shortest line that is a tool, {"id":"x"}.
const minToolLine = 10

// maxTools is the most tools a stretch can hold: one a line, and no more than its lines of
// minToolLine bytes. Blank lines hold no place: a file of newlines is not a tool's memory each.
func maxTools(part []byte) int {
	return min(countLines(part), len(part)/minToolLine)
}

// countLines is the number of lines of a stretch.
func countLines(part []byte) int {
	n := bytes.Count(part, []byte{'\n'})
	if len(part) > 0 && part[len(part)-1] != '\n' {
		n++ // the last line has no newline
	}
	return n
}

// decodePart decodes the lines of one stretch into tools until the first it refuses. tools has
// room for maxTools(part). first says that the stretch starts the text, where a byte order mark
// is skipped.
func decodePart(part []byte, tools []Tool, first bool, opts ReadOptions) (res partResult) {
	a := arena{inPlace: true}
	var ft fileTool
	res.lines = make([]int, 0, len(tools))
	line := 0
	for len(part) > 0 {
		content := part
		if i := bytes.IndexByte(part, '\n'); i >= 0 {
			content, part = part[:i], part[i+1:]
		} else {
			part = nil
		}
		line++
		if len(content) >= maxLine {
			res.errLine, res.err = line, tooLongError{}
			return res
		}
		if first && line == 1 {
			content = bytes.TrimPrefix(content, bom)
		}
		b := bytes.TrimSpace(content)
		if len(b) == 0 {
			continue
		}
		t, afterDup, err := a.lineTool(b, &ft, opts)
		if err != nil {
			res.errLine, res.err, res.afterDup, res.errID = line, err, afterDup, t.ID
			return res
		}
		tools[res.n] = t
		res.n++
		res.lines = append(res.lines, line)
	}
	res.count = line
	return res
}
