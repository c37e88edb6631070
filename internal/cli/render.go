package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/nodmix/nodmix/internal/discovery"
	"golang.org/x/text/width"
)

// Renderer limits, as the documented discovery renderer has them.
const (
	collapsedMatchLimit = 5
	matchLabelLen       = 72
	matchDescriptionLen = 96
)

// renderDiscovery prints a search the way the documented renderer shows it: a title, a status line,
// at most five matches with label, server, score and description, then how many more there are.
// It never prints the tool's wire name.
func renderDiscovery(w io.Writer, d *discovery.Details) {
	fmt.Fprintf(w, "Tool Discovery  %s  limit:%d\n", orEmpty(sanitize(d.Query)), d.Limit)
	if len(d.Tools) == 0 {
		if d.TotalTools == 0 {
			fmt.Fprintln(w, "No discoverable tools are currently loaded.")
		} else {
			fmt.Fprintln(w, "No matching tools found.")
		}
		return
	}
	word := "matches"
	if len(d.Tools) == 1 {
		word = "match"
	}
	fmt.Fprintf(w, "%d %s · %d active · %d total · limit:%d\n", len(d.Tools), word, len(d.ActiveSelectedTools), d.TotalTools, d.Limit)
	for i, m := range d.Tools {
		if i == collapsedMatchLimit {
			break
		}
		line := "  " + truncate(sanitize(m.Label), matchLabelLen)
		if m.ServerName != "" {
			line += "  (" + sanitize(m.ServerName) + ")"
		}
		fmt.Fprintf(w, "%s  %.3f\n", line, m.Score)
		if m.Description != "" {
			fmt.Fprintf(w, "    %s\n", truncate(sanitize(m.Description), matchDescriptionLen))
		}
	}
	if more := len(d.Tools) - collapsedMatchLimit; more > 0 {
		word := "tools"
		if more == 1 {
			word = "tool"
		}
		fmt.Fprintf(w, "  %d more %s\n", more, word)
	}
}

func orEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(empty query)"
	}
	return fmt.Sprintf("%q", s)
}

// sanitize keeps one line: tabs become three spaces, newlines and other control characters a
// space, the C1 ones (U+0080–U+009F) too: a terminal takes U+009B as the start of an escape.
func sanitize(s string) string {
	s = strings.ReplaceAll(s, "\t", "   ")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// sanitizeStream is sanitize for text printed as it streams (a model's answer, its reasoning, a
// tool's output under /verbose full): it keeps line breaks and tabs, drops carriage returns, and
// blanks every other control character, so that an answer cannot retitle, clear or rewrite the
// terminal with escape sequences a web page or a tool result talked the model into.
func sanitizeStream(s string) string {
	clean := true
	for _, r := range s {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r':
			return -1
		case unicode.IsControl(r):
			return ' '
		}
		return r
	}, s)
}

// sanitizeLines is sanitize for text of several lines, which it keeps.
func sanitizeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = sanitize(strings.TrimSuffix(l, "\r"))
	}
	return strings.Join(lines, "\n")
}

// truncate cuts s to at most n terminal columns (East Asian wide characters count two), ending
// with "…" when it cut.
func truncate(s string, n int) string {
	total := 0
	for _, r := range s {
		total += runeWidth(r)
	}
	if total <= n {
		return s
	}
	cols := 0
	for i, r := range s {
		if cols+runeWidth(r) > n-1 {
			return s[:i] + "…"
		}
		cols += runeWidth(r)
	}
	return s
}

func runeWidth(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}
