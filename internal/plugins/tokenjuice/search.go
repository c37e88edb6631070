package tokenjuice

import (
	"bytes"
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"unicode/utf8"
)

// Search results (grep, rg, ag, git grep). A match's text is cut around the pattern; matches whose
// text repeats (boilerplate, a call made in many places) collapse to one line that counts them and
// names where they are; the other matches are sampled; the files with most matches are listed.

const (
	grepTextChars    = 80  // a match's text is cut around the pattern to this many characters
	grepRepeatChars  = 60  // and a repeated text to this many
	grepRepeatLocs   = 2   // locations named of a repeated text
	grepRepeatBudget = 600 // for the lines of repeated texts
	grepBudget       = 600 // for a sample of the other matches
	// grepMaxTracked bounds the distinct texts and the files tracked, so that memory stays bounded
	// on any output: texts beyond it are not grouped, files beyond it are not counted one by one.
	grepMaxTracked = 1 << 16
	// The program's own messages (files it could not read) are sampled within a budget of their
	// own, each cut to grepMessageChars.
	grepMessageBudget = 600
	grepMessageChars  = 200
)

// parseGrepLine splits "file:line:text" (or "file-line-text" for context lines, or "file:text")
// into views of l; name and loc are nil when the line has no file prefix. The file is the shortest
// prefix that fits, as grep's own output is read by people: a name holding ":12:" is misread.
func parseGrepLine(l []byte) (name, loc, text []byte) {
	for i := 1; i < len(l); i++ {
		c := l[i]
		if c != ':' && c != '-' {
			continue
		}
		j := i + 1
		for j < len(l) && l[j] >= '0' && l[j] <= '9' {
			j++
		}
		if j > i+1 && j < len(l) && l[j] == c {
			return l[:i], l[:j+1], l[j+1:]
		}
	}
	if i := bytes.IndexByte(l, ':'); i >= 1 && !bytes.ContainsAny(l[:i], " \t") {
		return l[:i], l[:i+1], l[i+1:]
	}
	return nil, nil, l
}

type grepFile struct {
	name string
	n    int
}

// grepRepeat is a text found by several matches: the first locations and how many there are.
type grepRepeat struct {
	text string
	locs []string
	n    int
	seq  int
}

// reduceGrep reads the output twice, line by line: first to count texts and files, then to group
// repeated texts and sample the others. What it holds is bounded by grepMaxTracked and the budgets.
func reduceGrep(d *doc) (string, bool) {
	pattern := strings.ToLower(grepPattern(d.src))
	seed := maphash.MakeSeed()
	counts := map[uint64]int32{}
	files := map[string]*grepFile{}
	var order []*grepFile
	matches, untracked, messages := 0, 0, 0
	prog := d.src.name()
	s := newLineScanner(d.raw)
	for {
		l, _, ok := s.next()
		if !ok {
			break
		}
		if isSearchMessage(l, prog) {
			messages++
			continue
		}
		matches++
		name, _, text := parseGrepLine(l)
		key := maphash.Bytes(seed, bytes.TrimSpace(text))
		if c, ok := counts[key]; ok {
			counts[key] = c + 1
		} else if len(counts) < grepMaxTracked {
			counts[key] = 1
		}
		if name == nil {
			continue
		}
		f := files[string(name)]
		if f == nil {
			if len(files) >= grepMaxTracked {
				untracked++
				continue
			}
			f = &grepFile{name: string(name)}
			files[f.name] = f
			order = append(order, f)
		}
		f.n++
	}
	if matches == 0 {
		return "", false
	}
	var msgSel *selector
	if messages > 0 {
		msgSel = newSelector(len(d.raw)/2, grepMessageBudget, nil, 0, "messages")
	}

	repeats := map[uint64]*grepRepeat{}
	sel := newSelector(len(d.raw)/2, grepBudget, nil, 0, "matches")
	var buf, low []byte
	s = newLineScanner(d.raw)
	for {
		l, off, ok := s.next()
		if !ok {
			break
		}
		if msgSel != nil && isSearchMessage(l, prog) {
			buf, low = clipAround(buf[:0], low, l, "", grepMessageChars)
			msgSel.line(buf, off)
			continue
		}
		_, loc, text := parseGrepLine(l)
		text = bytes.TrimSpace(text)
		key := maphash.Bytes(seed, text)
		if counts[key] < 2 {
			buf = append(buf[:0], loc...)
			buf, low = clipAround(buf, low, text, pattern, grepTextChars)
			sel.line(buf, off)
			continue
		}
		r := repeats[key]
		if r == nil {
			buf, low = clipAround(buf[:0], low, text, pattern, grepRepeatChars)
			r = &grepRepeat{text: string(buf), seq: len(repeats)}
			repeats[key] = r
		}
		r.n++
		if len(r.locs) < grepRepeatLocs && loc != nil {
			r.locs = append(r.locs, string(loc))
		}
	}
	sel.end()

	var out []string
	if len(order) > 1 {
		head := fmt.Sprintf("%s in %s", plural(matches, "match"), plural(len(order)+untracked, "file"))
		out = append(out, head)
		top := slices.Clone(order)
		slices.SortStableFunc(top, func(a, b *grepFile) int { return cmp.Compare(b.n, a.n) })
		top = top[:min(len(top), 3)]
		if top[0].n > 1 && len(d.raw) > sampleBudget {
			var most []string
			for _, f := range top {
				if f.n > 1 {
					most = append(most, fmt.Sprintf("%s (%d)", f.name, f.n))
				}
			}
			out = append(out, "most matches: "+strings.Join(most, ", "))
		}
	}
	if len(repeats) > 0 {
		rs := make([]*grepRepeat, 0, len(repeats))
		for _, r := range repeats {
			rs = append(rs, r)
		}
		slices.SortFunc(rs, func(a, b *grepRepeat) int { return a.seq - b.seq })
		lines := make([]string, len(rs))
		for i, r := range rs {
			lines[i] = r.line()
		}
		out = append(out, sample(lines, grepRepeatBudget, "repeated texts")...)
	}
	out = append(out, sel.out...)
	if msgSel != nil {
		// What grep says about files it could not read is not a match: counted as one, its
		// messages made "306 matches" of one match and the reasons it could not search.
		msgSel.end()
		out = append(out, fmt.Sprintf("%s from %s:", plural(messages, "message"), prog))
		out = append(out, msgSel.out...)
	}
	return strings.Join(out, "\n"), true
}

// isSearchMessage reports whether l is a message of the search program itself ("grep: x:
// Permission denied", "rg: x: ... (os error 13)", git's "fatal: ..."), not a match.
func isSearchMessage(l []byte, prog string) bool {
	if len(l) < len(prog)+2 || len(l) > maxLineChars {
		return false
	}
	if prog == "git" {
		return isGitMessage(string(l))
	}
	return l[len(prog)] == ':' && l[len(prog)+1] == ' ' && string(l[:len(prog)]) == prog ||
		bytes.IndexByte(l, '/') == 0 && isOwnMessage(string(l), prog)
}

// line renders a repeated text: the text, how many matches have it, and where the first are.
func (r *grepRepeat) line() string {
	s := fmt.Sprintf("%s ×%d:", r.text, r.n)
	if len(r.locs) > 0 {
		s += " " + strings.Join(r.locs, " ")
	}
	if more := r.n - len(r.locs); more > 0 && len(r.locs) > 0 {
		s += fmt.Sprintf(" +%d more", more)
	}
	return s
}

// grepPattern returns the literal pattern of a grep or rg command, or "".
func grepPattern(s *simple) string {
	for i := 1; i < len(s.argv); i++ {
		a := s.argv[i]
		if a == "-e" || a == "--regexp" {
			if i+1 < len(s.argv) {
				return s.argv[i+1]
			}
		}
		if !strings.HasPrefix(a, "-") {
			if s.name() == "git" { // git grep PATTERN
				continue
			}
			return a
		}
	}
	return ""
}

// clipAround appends to dst the text cut to about limit runes around the first case-insensitive
// occurrence of pattern (lower case, taken literally), or its start. low is scratch space; both
// are returned for reuse.
func clipAround(dst, low, text []byte, pattern string, limit int) ([]byte, []byte) {
	n := utf8.RuneCount(text)
	if n <= limit {
		return append(dst, text...), low
	}
	at := -1
	if pattern != "" {
		low = append(low[:0], text...)
		for i, c := range low {
			if c >= 'A' && c <= 'Z' {
				low[i] = c + 'a' - 'A'
			}
		}
		if i := bytes.Index(low, []byte(pattern)); i >= 0 {
			at = utf8.RuneCount(text[:i])
		}
	}
	if at < 0 {
		return append(append(dst, runePrefix(text, limit-1)...), "…"...), low
	}
	start := max(0, at-limit/3)
	end := min(n, start+limit)
	from := len(runePrefix(text, start))
	to := len(runePrefix(text, end))
	if start > 0 {
		dst = append(dst, "…"...)
	}
	dst = append(dst, text[from:to]...)
	if end < n {
		dst = append(dst, "…"...)
	}
	return dst, low
}

// runePrefix returns the first n runes of b.
func runePrefix(b []byte, n int) []byte {
	i := 0
	for ; n > 0 && i < len(b); n-- {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return b[:i]
}
