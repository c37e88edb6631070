package thinking

import (
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
)

// word is the form every normalizer looks words up in: lowercased, trimmed, and with each run of
// blanks, '_' and '-' made one space, so "x_high", "x-high", "X  High" and "extra_high" meet the
// same table row. Only separator runs are folded — "h-i-g-h" stays "h i g h" and names nothing.
func word(s string) string {
	s = strings.TrimSpace(s)
	var b strings.Builder
	b.Grow(len(s))
	sep := false
	for _, r := range s {
		if unicode.IsSpace(r) || r == '_' || r == '-' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte(' ')
		}
		sep = false
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// thinkWords is every word /think accepts, keyed by its folded form. The multi-word forms are
// the page's own aliases ("think hard" is low, "extra high" is xhigh); both spellings of each
// are listed because the folded form keeps a space where the user typed a separator.
var thinkWords = map[string]Level{
	"off": Off, "none": Off,

	"min": Minimal, "minimal": Minimal, "think": Minimal,

	"on": Low, "enable": Low, "enabled": Low,
	"low": Low, "think hard": Low, "thinkhard": Low,

	"mid": Medium, "med": Medium, "medium": Medium,
	"think harder": Medium, "thinkharder": Medium, "harder": Medium,

	"high": High, "highest": High, "ultrathink": High, "ultra think": High,
	"think hardest": High, "thinkhardest": High,

	"xhigh": XHigh, "x high": XHigh, "extrahigh": XHigh, "extra high": XHigh,
	"ultrathink+": XHigh, "ultra think+": XHigh,

	"adaptive": Adaptive, "auto": Adaptive,

	// The reference runtime has a level above max ("ultra"); nodmix's canonical set ends at
	// max, and every provider that knows an "ultra" effort treats it as its max.
	"max": Max, "maximum": Max, "ultra": Max,
}

// NormalizeThink maps a word of a /think directive (or a thinkingDefault value) to its canonical
// level: the eight level names; off/none; on/enable/enabled (low: binary providers label low
// "on"); min, mid, med; the page's phrases think (minimal), think hard (low), think harder
// (medium), ultrathink and highest (high), ultrathink+ and x-high / x_high / extra high /
// extra_high (xhigh); auto (adaptive); maximum and ultra (max). Case, surrounding blanks and the
// separator between words (space, '_', '-') do not matter. ok is false for anything else,
// including the clear words (see IsClear) and "disabled".
func NormalizeThink(s string) (l Level, ok bool) {
	l, ok = thinkWords[word(s)]
	return l, ok
}

// IsClear reports whether s is one of the words that clear a session override and inherit the
// configured or provider default: default, inherit, inherited, clear, reset, unpin. They apply to
// /think and /fast (and to the other directives where the caller allows a clear).
func IsClear(s string) bool {
	switch word(s) {
	case "default", "inherit", "inherited", "clear", "reset", "unpin":
		return true
	}
	return false
}

// FastMode is a fast-mode setting. FastAuto is fast for the calls that start early in a run and
// normal after that; the agent decides which, and Map receives the resulting bool.
type FastMode string

// The fast-mode settings.
const (
	FastOff  FastMode = "off"
	FastOn   FastMode = "on"
	FastAuto FastMode = "auto"
)

// DefaultFastAutoWindow is how long after a run starts /fast auto keeps starting model calls fast.
const DefaultFastAutoWindow = 60 * time.Second

// fastAutoKeys are the model params that set the window of /fast auto, in seconds; the first
// present wins.
var fastAutoKeys = [...]string{"fastAutoOnSeconds", "fast_auto_on_seconds", "fastSeconds", "fast_seconds"}

// FastAutoKeys returns the model params that set the window of /fast auto, in the order they are
// read.
func FastAutoKeys() []string { return slices.Clone(fastAutoKeys[:]) }

// FastAutoWindow is the window of /fast auto that model params set: the calls of a run that start
// within it of the run's start are fast, later calls are not. Without a (non-negative number)
// entry it is DefaultFastAutoWindow.
func FastAutoWindow(params map[string]any) time.Duration {
	for _, k := range fastAutoKeys {
		v, ok := params[k].(float64)
		if !ok || !(v >= 0) {
			continue
		}
		if v > 1e9 { // over thirty years: longer than any run, and no overflow
			return math.MaxInt64
		}
		return time.Duration(v * float64(time.Second))
	}
	return DefaultFastAutoWindow
}

// NormalizeFast maps a word of a /fast directive to its setting: off, false, no, 0, disable,
// disabled, normal → off; on, true, yes, 1, enable, enabled, fast → on; auto, automatic → auto.
// "status" and the clear words are not settings (ok is false); the directive parser handles them.
func NormalizeFast(s string) (m FastMode, ok bool) {
	switch word(s) {
	case "off", "false", "no", "0", "disable", "disabled", "normal":
		return FastOff, true
	case "on", "true", "yes", "1", "enable", "enabled", "fast":
		return FastOn, true
	case "auto", "automatic":
		return FastAuto, true
	}
	return "", false
}

// NormalizeVerbose maps a word of a /verbose directive to "off", "on" or "full": off, false, no, 0
// → off; on, minimal, true, yes, 1 → on; full, all, everything → full.
func NormalizeVerbose(s string) (string, bool) {
	switch word(s) {
	case "off", "false", "no", "0":
		return "off", true
	case "on", "minimal", "true", "yes", "1":
		return "on", true
	case "full", "all", "everything":
		return "full", true
	}
	return "", false
}

// NormalizeTrace maps a word of a /trace directive to "off", "on" or "raw": off, false, no, 0 →
// off; on, true, yes, 1 → on; raw, unfiltered → raw (unfiltered plugin trace lines).
func NormalizeTrace(s string) (string, bool) {
	switch word(s) {
	case "off", "false", "no", "0":
		return "off", true
	case "on", "true", "yes", "1":
		return "on", true
	case "raw", "unfiltered":
		return "raw", true
	}
	return "", false
}

// NormalizeReasoning maps a word of a /reasoning directive to "off", "on" or "stream": off, false,
// no, 0, hide, hidden, disable, disabled → off; on, true, yes, 1, show, visible, enable, enabled
// → on; stream, streaming, draft, live → stream.
func NormalizeReasoning(s string) (string, bool) {
	switch word(s) {
	case "off", "false", "no", "0", "hide", "hidden", "disable", "disabled":
		return "off", true
	case "on", "true", "yes", "1", "show", "visible", "enable", "enabled":
		return "on", true
	case "stream", "streaming", "draft", "live":
		return "stream", true
	}
	return "", false
}
