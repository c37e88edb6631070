// Package glob is the pattern syntax of nodmix's tool rules (allow, deny, approvals, hooks): one
// definition, so that configuration refuses exactly the patterns policy could not use.
package glob

import (
	"errors"
	"unicode/utf8"
)

// Errors a malformed pattern reports; callers wrap them with the pattern's config path.
var (
	errEmptyPattern   = errors.New("must not be empty")
	errUnterminated   = errors.New("unterminated character class")
	errTrailingEscape = errors.New("ends with a lone backslash")
)

// Match reports whether name matches the glob pattern. The syntax is path.Match's, except that
// '*' and '?' also match ':' and '/', so "mcp:*" covers every MCP tool and "*:create_*" every
// create tool of any source: '*' is any run of characters, '?' one character, "[a-z]" / "[!x]"
// (or "[^x]") a character class, and '\' quotes the next character. A malformed pattern matches
// nothing; Validate reports it so configuration loading can reject it.
func Match(pattern, name string) bool {
	if pattern == "" {
		return false
	}
	px, nx := 0, 0
	starPx, starNx := -1, -1
	for px < len(pattern) || nx < len(name) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				starPx, starNx = px, nx
				px++
				continue
			case '?':
				if nx < len(name) {
					_, w := utf8.DecodeRuneInString(name[nx:])
					px++
					nx += w
					continue
				}
			case '[':
				if nx < len(name) {
					r, w := utf8.DecodeRuneInString(name[nx:])
					ok, n, err := matchClass(pattern[px:], r)
					if err != nil {
						return false
					}
					if ok {
						px += n
						nx += w
						continue
					}
				}
			case '\\':
				if px+1 >= len(pattern) {
					return false
				}
				_, pw := utf8.DecodeRuneInString(pattern[px+1:])
				if nx < len(name) {
					_, nw := utf8.DecodeRuneInString(name[nx:])
					if pattern[px+1:px+1+pw] == name[nx:nx+nw] {
						px += 1 + pw
						nx += nw
						continue
					}
				}
			default:
				if nx < len(name) {
					// Compare bytes, not runes: two different invalid bytes both decode to RuneError.
					_, pw := utf8.DecodeRuneInString(pattern[px:])
					_, nw := utf8.DecodeRuneInString(name[nx:])
					if pattern[px:px+pw] == name[nx:nx+nw] {
						px += pw
						nx += nw
						continue
					}
				}
			}
		}
		// Mismatch: let the last star swallow one more character and retry from there.
		if starPx >= 0 && starNx < len(name) {
			_, w := utf8.DecodeRuneInString(name[starNx:])
			starNx += w
			px, nx = starPx+1, starNx
			continue
		}
		return false
	}
	return true
}

// matchClass matches r against the class at the start of p ("[...]"). It returns whether r is in
// the class and the byte length of the class.
func matchClass(p string, r rune) (matched bool, n int, err error) {
	i := 1
	negate := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		negate = true
		i++
	}
	first := true
	for {
		if i >= len(p) {
			return false, 0, errUnterminated
		}
		if p[i] == ']' && !first {
			i++
			break
		}
		first = false
		lo, w, err := classChar(p, i)
		if err != nil {
			return false, 0, err
		}
		i += w
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			hi, w, err = classChar(p, i+1)
			if err != nil {
				return false, 0, err
			}
			i += 1 + w
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
	return matched != negate, i, nil
}

func classChar(p string, i int) (rune, int, error) {
	if p[i] == '\\' {
		if i+1 >= len(p) {
			return 0, 0, errTrailingEscape
		}
		r, w := utf8.DecodeRuneInString(p[i+1:])
		return r, 1 + w, nil
	}
	r, w := utf8.DecodeRuneInString(p[i:])
	return r, w, nil
}

// Validate reports why pattern is malformed, or nil.
func Validate(pattern string) error {
	if pattern == "" {
		return errEmptyPattern
	}
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			if i+1 >= len(pattern) {
				return errTrailingEscape
			}
			i++
		case '[':
			_, n, err := matchClass(pattern[i:], 0)
			if err != nil {
				return err
			}
			i += n - 1
		}
	}
	return nil
}
