package search

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenize splits s into the seed's search tokens. The pipeline is the seed's contract,
// known flaws included (getURLs → get, ur, ls):
//
//  1. NFKD, then drop every \p{M} (accents);
//  2. split an upper-case run before its last letter when a lower-case letter follows
//     (HTTPServer → HTTP Server), one left-to-right non-overlapping pass;
//  3. split between a lower-case letter or number and an upper-case letter (fooBar, v2Beta);
//  4. anything that is not \p{L} or \p{N} separates tokens;
//  5. lowercase as JavaScript's toLowerCase does (final sigma included).
//
// Letters followed by digits are not split (iPhone15Pro → i, phone15, pro), and no
// stop words or stemming apply. Duplicates are kept: they count as term frequency.
func Tokenize(s string) []string {
	return AppendTokens(nil, s)
}

// AppendTokens appends the tokens of s to dst and returns the extended slice. The tokens
// share one backing string, so a call costs at most one string allocation plus dst's growth.
func AppendTokens(dst []string, s string) []string {
	// Stack buffers keep short inputs free of scratch allocations.
	var outBuf [256]byte
	var endsBuf [32]int32
	var sc tokenScanner
	out, ends := sc.appendTokens(outBuf[:0], endsBuf[:0], s)
	if len(ends) == 0 {
		return dst
	}
	all := string(out)
	start := int32(0)
	for _, end := range ends {
		dst = append(dst, all[start:end])
		start = end
	}
	return dst
}

// Rune classes the tokenizer cares about. Everything that is not a letter or a number
// separates tokens.
const (
	clsSep   uint8 = iota // not \p{L}, not \p{N}
	clsUpper              // \p{Lu}
	clsLower              // \p{Ll}
	clsOther              // other letters: \p{Lt}, \p{Lm}, \p{Lo}
	clsDigit              // \p{N}
	clsMulti              // a byte of a multi-byte sequence: not ASCII
)

// asciiClass classifies bytes; every byte at or above utf8.RuneSelf is clsMulti.
var asciiClass = func() (t [256]uint8) {
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = clsMulti
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = clsUpper
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = clsLower
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = clsDigit
	}
	return t
}()

func classOf(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case unicode.IsUpper(r):
		return clsUpper
	case unicode.IsLower(r):
		return clsLower
	case unicode.IsLetter(r):
		return clsOther
	case unicode.IsNumber(r):
		return clsDigit
	}
	return clsSep
}

// splitBefore reports whether the seed's two case rules put a space between prev and
// cur, given the class of the rune after cur (clsSep at the end). Both JavaScript
// replace passes reduce to this local test: the acronym rule `(\p{Lu}+)(\p{Lu}\p{Ll})`
// can only match a whole upper-case run followed by a lower-case letter, and its match
// ends on that letter, so no later match can overlap it; the camel rule
// `(\p{Ll}|\p{N})(\p{Lu})` cannot overlap itself.
func splitBefore(prev, cur, next uint8) bool {
	if cur != clsUpper {
		return false
	}
	return prev == clsLower || prev == clsDigit || (prev == clsUpper && next == clsLower)
}

// tokenScanner tokenizes without allocating once its buffers have grown: tokens come
// out lowercased and concatenated, each ending at the matching offset in ends. A scanner
// is owned by one goroutine at a time.
type tokenScanner struct {
	norm  []byte
	runes []rune
	cls   []uint8
	out   []byte
	ends  []int32
}

// scan tokenizes s into t.out and t.ends.
func (t *tokenScanner) scan(s string) {
	t.out, t.ends = t.appendTokens(t.out[:0], t.ends[:0], s)
}

// appendTokens appends the tokens of s to out and their end offsets to ends. The
// buffers are parameters rather than fields so that callers can pass stack arrays.
func (t *tokenScanner) appendTokens(out []byte, ends []int32, s string) ([]byte, []int32) {
	if o, e, ok := appendTokensASCII(out, ends, s); ok {
		return o, e
	}
	if !utf8.ValidString(s) {
		// Invalid bytes are U+FFFD, a separator; normalizing them raw could swallow
		// the rune after them.
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	t.norm = norm.NFKD.AppendString(t.norm[:0], s)
	t.runes = t.runes[:0]
	t.cls = t.cls[:0]
	for b := t.norm; len(b) > 0; {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if r >= utf8.RuneSelf && unicode.IsMark(r) {
			continue
		}
		t.runes = append(t.runes, r)
		t.cls = append(t.cls, classOf(r))
	}
	return appendTokensRunes(out, ends, t.runes, t.cls)
}

// appendTokensASCII is appendTokensRunes for the common case, where NFKD is the
// identity and there are no marks, no sigma and no multi-byte runes. It reports false,
// leaving out and ends as they were, at the first byte that is not ASCII.
func appendTokensASCII(out []byte, ends []int32, s string) ([]byte, []int32, bool) {
	n0, e0 := len(out), len(ends)
	// Every byte of s is written at most once: grow once, then write by index.
	n := n0
	out = slices.Grow(out, len(s))[:n+len(s)]
	for i := 0; i < len(s); {
		for i < len(s) && asciiClass[s[i]] == clsSep {
			i++
		}
		if i == len(s) {
			break
		}
		prev := clsSep
		for ; i < len(s); i++ {
			c := s[i]
			cur := asciiClass[c]
			if cur == clsLower || cur == clsDigit { // the common case first
				out[n] = c
				n++
				prev = cur
				continue
			}
			if cur == clsSep {
				break
			}
			if cur == clsMulti {
				return out[:n0], ends[:e0], false
			}
			if cur == clsUpper {
				if prev != clsSep {
					next := clsSep
					if i+1 < len(s) {
						next = asciiClass[s[i+1]]
					}
					if splitBefore(prev, cur, next) {
						ends = append(ends, int32(n))
					}
				}
				c += 'a' - 'A'
			}
			out[n] = c
			n++
			prev = cur
		}
		ends = append(ends, int32(n))
	}
	return out[:n], ends, true
}

func appendTokensRunes(out []byte, ends []int32, rs []rune, cls []uint8) ([]byte, []int32) {
	start := -1
	for i := 0; i <= len(rs); i++ {
		cur := clsSep
		if i < len(rs) {
			cur = cls[i]
		}
		if start >= 0 {
			split := cur == clsSep
			if !split {
				next := clsSep
				if i+1 < len(rs) {
					next = cls[i+1]
				}
				split = splitBefore(cls[i-1], cur, next)
			}
			if split {
				out = appendLower(out, rs[start:i])
				ends = append(ends, int32(len(out)))
				start = -1
			}
		}
		if cur != clsSep && start < 0 {
			start = i
		}
	}
	return out, ends
}

// appendLower appends the JavaScript toLowerCase of word to dst. Go's simple case
// mapping agrees with it everywhere except capital sigma, which JavaScript lowers to
// final ς at the end of a word (Unicode's Final_Sigma condition). U+0130, the only other
// unconditional difference, never reaches here from the seed tokenizer (NFKD splits it);
// the Tool Search splitter maps it to i plus combining dot, as JavaScript does.
func appendLower(dst []byte, word []rune) []byte {
	for i, r := range word {
		switch {
		case r < utf8.RuneSelf:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			dst = append(dst, byte(r))
			continue
		case r == 'Σ':
			if finalSigma(word, i) {
				r = 'ς'
			} else {
				r = 'σ'
			}
		case r == 'İ':
			dst = utf8.AppendRune(dst, 'i')
			r = '\u0307'
		default:
			r = unicode.ToLower(r)
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// finalSigma is Unicode's Final_Sigma context for word[i] (as ICU applies it): a cased
// letter before it, skipping case-ignorable runes, and no cased letter after it.
func finalSigma(word []rune, i int) bool {
	return casedAround(word, i, -1) && !casedAround(word, i, 1)
}

func casedAround(word []rune, i, dir int) bool {
	for j := i + dir; j >= 0 && j < len(word); j += dir {
		r := word[j]
		if isCased(r) {
			return true
		}
		if !isCaseIgnorable(r) {
			return false
		}
	}
	return false
}

func isCased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

func isCaseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', '\u00a8', '\u00ad', '\u00af', '\u00b4', '\u00b7', '\u00b8',
		'\u0387', '\u05f4', '\u2018', '\u2019', '\u2024', '\u2027', '\ufe13', '\ufe52', '\ufe55',
		'\uff07', '\uff0e', '\uff1a':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
