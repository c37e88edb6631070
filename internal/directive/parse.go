// Package directive reads the chat directives of a message (/think, /fast, /verbose, /trace,
// /reasoning, /status), resolves the levels a turn runs with, and words the replies to them.
package directive

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/thinking"
)

// Name is a directive's canonical name; its aliases parse to it.
type Name string

// The directives, in the order replies list them.
const (
	Think     Name = "think"
	Verbose   Name = "verbose"
	Trace     Name = "trace"
	Fast      Name = "fast"
	Reasoning Name = "reasoning"
	Status    Name = "status"
)

// D is one directive of a message.
type D struct {
	Name Name
	// Raw is the argument as typed, "" when none was given. A multi-word alias is kept as typed
	// ("extra high").
	Raw string
	// Value is the canonical value Raw names: a thinking.Level for Think; on, off or auto for
	// Fast; on, off or full for Verbose; on, off or raw for Trace; on, off or stream for
	// Reasoning. It is "" for a query, a clear word and an invalid argument.
	Value string
	// Clear is set for the words that drop a session override (thinking.IsClear): default,
	// inherit, inherited, clear, reset, unpin. Only Think and Fast take them.
	Clear bool
	// Query is set when the directive asks for the current value: no argument, or /fast status.
	Query bool
	// Invalid is set when Raw names nothing the directive knows.
	Invalid bool
}

// Applicable reports whether d changes a level: a value or a clear, as opposed to a query, a
// status request or an invalid argument.
func (d D) Applicable() bool { return d.Value != "" || d.Clear }

// Parsed is a message with its directives taken out.
type Parsed struct {
	// Body is the text the model sees: the input with each applied directive and its argument
	// removed (see Parse). It is "" when nothing but blanks is left.
	Body string
	// Directives are the directives found, in the order they appear.
	Directives []D
	// Only is set when the message held directives and nothing else: a directive-only message,
	// which changes the session instead of starting a turn.
	Only bool
}

// Last returns the last directive of the message named n: when a message repeats a directive,
// the later one wins.
func (p Parsed) Last(n Name) (D, bool) {
	for i := len(p.Directives) - 1; i >= 0; i-- {
		if p.Directives[i].Name == n {
			return p.Directives[i], true
		}
	}
	return D{}, false
}

// spec is one directive's grammar: its aliases (a longer alias before its prefixes, so /thinking
// is not read as /think followed by "ing") and the normalizer of its argument.
type spec struct {
	name    Name
	aliases []string
	norm    func(string) (string, bool) // nil: the directive takes no argument
	clear   bool                        // the clear words are accepted
	status  bool                        // "status" is a query
}

var specs = [...]spec{
	{name: Think, aliases: []string{"thinking", "think", "t"}, norm: normThink, clear: true},
	{name: Verbose, aliases: []string{"verbose", "v"}, norm: thinking.NormalizeVerbose},
	{name: Trace, aliases: []string{"trace"}, norm: thinking.NormalizeTrace},
	{name: Fast, aliases: []string{"fast"}, norm: normFast, clear: true, status: true},
	{name: Reasoning, aliases: []string{"reasoning", "reason"}, norm: thinking.NormalizeReasoning},
	{name: Status, aliases: []string{"status"}},
}

func normThink(s string) (string, bool) {
	l, ok := thinking.NormalizeThink(s)
	return string(l), ok
}

func normFast(s string) (string, bool) {
	m, ok := thinking.NormalizeFast(s)
	return string(m), ok
}

// maxWords bounds a multi-word argument ("extra high", "think harder"): the longest alias has
// two words; one more costs a lookup and guards a table that grows.
const maxWords = 3

// mode selects what a scan consumes.
type mode int

const (
	// inline: a message in a chat. An argument is a run of word characters (or a multi-word
	// alias) that names a value; an argument that names nothing is taken only when nothing
	// follows it, so prose after a directive stays prose.
	inline mode = iota
	// applicable: the second scan of a message that is not directive-only. Only directives that
	// change something are removed; a query, /status or an invalid argument is the user's text.
	applicable
	// command: a native command, where the whole text is the command: an argument is any run of
	// non-blanks, and one that names nothing is rejected rather than left in the body.
	command
)

// Parse takes the directives out of a chat message.
//
// A directive is a slash, one of its names (case-insensitive) and then the end of the text, a
// blank or a colon; it must start the text or follow a blank, so "foo/think high" and
// "/thinkhigh" are text. An optional colon and blanks may come before the argument, which stays
// on the directive's line: a run of letters, digits, '_', '-' and '+', or two or three such words
// that together are one alias ("/think extra high" is xhigh, "/think think hard" is low).
//
// Every occurrence of every directive is read, in text order; Parsed.Last gives the one that
// wins. Removing a directive removes its whole line when nothing else is on it (the line's
// newline with it), else one blank after it, or one before it at the end of a line.
//
// A message that is only directives (Parsed.Only) is answered by Apply. In any other message
// only the directives that set or clear a level are removed; a bare /think, /status or an
// argument that names nothing is left in Body as the user typed it, since it does nothing there.
func Parse(text string) Parsed {
	body, ds := scan(text, inline)
	if len(ds) == 0 {
		return Parsed{Body: text}
	}
	if body == "" {
		return Parsed{Directives: ds, Only: true}
	}
	body, ds = scan(text, applicable)
	return Parsed{Body: body, Directives: ds}
}

// ParseCommand takes the directives out of a native command (a chat platform's own slash
// command), where the whole text is meant as the command: "/think big" there is an invalid level
// to reject even when text follows, and an argument is any run of non-blanks.
func ParseCommand(text string) Parsed {
	body, ds := scan(text, command)
	if len(ds) == 0 {
		return Parsed{Body: text}
	}
	return Parsed{Body: body, Directives: ds, Only: body == ""}
}

// scan makes one pass over text, consuming the directives m takes. Each removal looks left at
// the text already cleaned and right at the text not yet read, so one pass leaves no directive
// behind that a second pass of the same mode would find.
func scan(text string, m mode) (string, []D) {
	var (
		out  []byte
		ds   []D
		i    int               // text[:i] is settled: copied to out or removed
		tail = blankTail(text) // text[tail:] is all blanks
	)
	for pos := 0; pos < len(text); {
		k := strings.IndexByte(text[pos:], '/')
		if k < 0 {
			break
		}
		at := pos + k
		pos = at + 1
		if !boundaryBefore(out, text[i:at]) {
			continue
		}
		sp, nameEnd := matchName(text, at+1)
		if sp == nil {
			continue
		}
		d, end, ok := sp.argument(text, nameEnd, m, tail)
		if !ok {
			continue
		}
		out = append(out, text[i:at]...)
		out, i = remove(out, text, end)
		pos = i
		ds = append(ds, d)
	}
	if len(ds) == 0 {
		return text, nil
	}
	out = append(out, text[i:]...)
	if isBlank(out) {
		return "", ds
	}
	return string(out), ds
}

// boundaryBefore reports whether a directive may start after out+pending: at the start, or after
// a blank.
func boundaryBefore(out []byte, pending string) bool {
	var r rune
	switch {
	case pending != "":
		r, _ = utf8.DecodeLastRuneInString(pending)
	case len(out) > 0:
		r, _ = utf8.DecodeLastRune(out)
	default:
		return true
	}
	return unicode.IsSpace(r)
}

// matchName finds the directive named at text[from:] and returns the index after its name. The
// name must be followed by the end, a blank or a colon.
func matchName(text string, from int) (*spec, int) {
	for k := range specs {
		for _, a := range specs[k].aliases {
			end := from + len(a)
			if end > len(text) || !asciiEqualFold(text[from:end], a) {
				continue
			}
			if end == len(text) || text[end] == ':' {
				return &specs[k], end
			}
			if r, _ := utf8.DecodeRuneInString(text[end:]); unicode.IsSpace(r) {
				return &specs[k], end
			}
		}
	}
	return nil, 0
}

// asciiEqualFold reports whether s equals the lowercase ASCII name a, folding only ASCII
// letters, so no Unicode look-alike (the Kelvin sign for k) spells a directive.
func asciiEqualFold(s, a string) bool {
	if len(s) != len(a) {
		return false
	}
	for k := 0; k < len(a); k++ {
		c := s[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != a[k] {
			return false
		}
	}
	return true
}

// argument reads the argument after a directive's name and returns the directive, the index
// where its text ends, and whether m consumes it.
func (sp *spec) argument(text string, nameEnd int, m mode, tail int) (D, int, bool) {
	d := D{Name: sp.name}
	// An optional colon, with blanks before it; then blanks, on the same line.
	j := skipHBlank(text, nameEnd)
	end := nameEnd
	if j < len(text) && text[j] == ':' {
		end = j + 1
		j = skipHBlank(text, j+1)
	} else {
		j = skipHBlank(text, nameEnd)
	}
	if sp.norm == nil {
		d.Query = true
		return d, end, m != applicable
	}

	// The words of a multi-word alias, separated by blanks on the line.
	var ends [maxWords]int
	n := 0
	for k := j; n < maxWords; {
		e := wordEnd(text, k)
		if e == k {
			break
		}
		ends[n] = e
		n++
		k = skipHBlank(text, e)
	}
	for w := n; w > 0; w-- {
		raw := text[j:ends[w-1]]
		if v, ok := sp.norm(raw); ok {
			d.Raw, d.Value = raw, v
			return d, ends[w-1], true
		}
		if sp.clear && thinking.IsClear(raw) {
			d.Raw, d.Clear = raw, true
			return d, ends[w-1], true
		}
		if sp.status && len(raw) == len("status") && asciiEqualFold(raw, "status") {
			d.Raw, d.Query = raw, true
			return d, ends[w-1], m != applicable
		}
	}

	switch m {
	case command:
		if e := nonBlankEnd(text, j); e > j {
			d.Raw, d.Invalid = text[j:e], true
			return d, e, true
		}
	case inline:
		if n > 0 && ends[0] >= tail {
			d.Raw, d.Invalid = text[j:ends[0]], true
			return d, ends[0], true
		}
	case applicable:
		return d, 0, false
	}
	d.Query = true
	return d, end, m != applicable
}

// remove drops a directive that ends at text[end] (out holds everything before it) with the
// blank or the line around it, and returns out and the index to resume copying from.
func remove(out []byte, text string, end int) ([]byte, int) {
	// Alone on its line: drop the line, leading blanks and newline included. The rest of the
	// line is looked at first: the blanks before the directive are then scanned only for the
	// one directive that ends its line, not again for each of many on a long line of blanks.
	k := end
	for k < len(text) && (isHBlank(text[k]) || text[k] == '\r') {
		k++
	}
	if k == len(text) || text[k] == '\n' {
		lineStart := len(out)
		for lineStart > 0 && isHBlank(out[lineStart-1]) {
			lineStart--
		}
		if lineStart == 0 || out[lineStart-1] == '\n' {
			out = out[:lineStart]
			if k < len(text) {
				return out, k + 1
			}
			// The last line has no newline of its own: take the one before it, so the body
			// does not end in a newline the user did not leave there.
			if n := len(out); n > 0 && out[n-1] == '\n' {
				out = out[:n-1]
				if n := len(out); n > 0 && out[n-1] == '\r' {
					out = out[:n-1]
				}
			}
			return out, k
		}
	}
	if end < len(text) && isHBlank(text[end]) {
		return out, end + 1
	}
	atEOL := end == len(text) || text[end] == '\n' || text[end] == '\r'
	if n := len(out); atEOL && n > 0 && isHBlank(out[n-1]) {
		return out[:n-1], end
	}
	return out, end
}

func isHBlank(c byte) bool { return c == ' ' || c == '\t' }

// skipHBlank skips the blanks at s[k:] that keep to the line: tabs and Unicode space separators
// (an input method's ideographic space, a no-break space), which end a directive's name too.
func skipHBlank(s string, k int) int {
	for k < len(s) {
		if isHBlank(s[k]) {
			k++
			continue
		}
		if s[k] < utf8.RuneSelf {
			break
		}
		r, size := utf8.DecodeRuneInString(s[k:])
		if !unicode.Is(unicode.Zs, r) {
			break
		}
		k += size
	}
	return k
}

// wordEnd returns the end of the run of argument characters at s[k:].
func wordEnd(s string, k int) int {
	for k < len(s) {
		c := s[k]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '_' || c == '-' || c == '+') {
			break
		}
		k++
	}
	return k
}

// nonBlankEnd returns the end of the run of non-blank runes at s[k:].
func nonBlankEnd(s string, k int) int {
	for k < len(s) {
		r, size := utf8.DecodeRuneInString(s[k:])
		if unicode.IsSpace(r) {
			break
		}
		k += size
	}
	return k
}

// blankTail returns where the blanks that end s begin (len(s) when it ends in none).
func blankTail(s string) int {
	k := len(s)
	for k > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:k])
		if !unicode.IsSpace(r) {
			break
		}
		k -= size
	}
	return k
}

func isBlank(b []byte) bool {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if !unicode.IsSpace(r) {
			return false
		}
		b = b[size:]
	}
	return true
}
