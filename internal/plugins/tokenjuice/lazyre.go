package tokenjuice

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled on its first use. tokenjuice has about ninety of
// them, and most processes that link the package never reduce an output: a code-mode sandbox
// child, most CLI commands. Compiled at package initialization they cost every such process
// about 2 ms and 1.4 MB before main. An invalid expression still panics, at its first use.
type lazyRegexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// lazyRE returns the expression, to be compiled when it is first used.
func lazyRE(expr string) *lazyRegexp { return &lazyRegexp{expr: expr} }

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

func (l *lazyRegexp) Match(b []byte) bool              { return l.get().Match(b) }
func (l *lazyRegexp) MatchString(s string) bool        { return l.get().MatchString(s) }
func (l *lazyRegexp) FindIndex(b []byte) []int         { return l.get().FindIndex(b) }
func (l *lazyRegexp) FindSubmatchIndex(b []byte) []int { return l.get().FindSubmatchIndex(b) }
func (l *lazyRegexp) FindStringSubmatch(s string) []string {
	return l.get().FindStringSubmatch(s)
}
func (l *lazyRegexp) ReplaceAllString(src, repl string) string {
	return l.get().ReplaceAllString(src, repl)
}
func (l *lazyRegexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return l.get().ReplaceAllStringFunc(src, repl)
}
func (l *lazyRegexp) Split(s string, n int) []string { return l.get().Split(s, n) }
