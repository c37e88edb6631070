package catalog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/jsonscan"
)

// maxDepth is encoding/json's limit on nested arrays and objects, counted from the line's own
// object: the decoder, and so both read paths, refuse a line nested deeper.
const maxDepth = 10000

// tooLongError is a line of maxLine bytes or more. It is bufio.ErrTooLong to errors.Is, which is
// what the line scanner stops with, but says what the limit is rather than how it was found.
type tooLongError struct{}

func (tooLongError) Error() string {
	return fmt.Sprintf("longer than the %d MiB a line may hold", maxLine>>20)
}
func (tooLongError) Unwrap() error { return bufio.ErrTooLong }

// lineError words the decoder's error about a line as the house rule wants: the field and the
// rule it breaks, never the Go type it was being read into.
func lineError(b []byte, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return errors.New("must be a JSON object")
		}
		// Every field but input_schema (a raw value, which takes any type) is a string.
		return fmt.Errorf("%s: must be a string", te.Field)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) && strings.HasSuffix(se.Error(), "exceeded max depth") {
		if key, ok := memberAtFault(b); ok {
			return fmt.Errorf("%s: nested deeper than the %d levels a line may hold", fieldLabel(key), maxDepth)
		}
		return fmt.Errorf("nested deeper than the %d levels a line may hold", maxDepth)
	}
	return fmt.Errorf("not a catalog entry: %w", err)
}

// memberAtFault is the key of the first member of the object b whose value does not scan, the
// one the decoder's error is about when all before it is valid; ok is false when b is not an
// object or every member scans.
func memberAtFault(b []byte) (key string, ok bool) {
	for k, scans := range members(b) {
		if !scans {
			return k, true
		}
	}
	return "", false
}

// members yields the keys of the object b in order, each with whether its value scans; it stops
// after a value that does not, and at anything that is not an object's member.
func members(b []byte) iter.Seq2[string, bool] {
	return func(yield func(string, bool) bool) {
		i := jsonscan.Space(b, 0)
		if i >= len(b) || b[i] != '{' {
			return
		}
		i = jsonscan.Space(b, i+1)
		for i < len(b) && b[i] == '"' {
			kEnd, flags := jsonscan.String(b, i)
			if kEnd < 0 {
				return
			}
			key := unquote(b[i:kEnd], flags)
			i = jsonscan.Space(b, kEnd)
			if i >= len(b) || b[i] != ':' {
				return
			}
			i = jsonscan.Value(b, jsonscan.Space(b, i+1), 1)
			if !yield(key, i >= 0) || i < 0 {
				return
			}
			i = jsonscan.Space(b, i)
			if i >= len(b) || b[i] != ',' {
				return
			}
			i = jsonscan.Space(b, i+1)
		}
	}
}

// fieldLabel is a key as an error names it: a field's name bare, as the other errors name it,
// anything else quoted.
func fieldLabel(key string) string {
	if fieldIndex(key) >= 0 {
		return key
	}
	return quoteShort(key)
}

// fileFields are the keys of a catalog line, in the order of the bits decodeLine marks them by.
var fileFields = [...]string{"id", "name", "label", "description", "summary", "source", "server", "mcp_tool_name", "input_schema"}

// fieldIndex is the index in fileFields of a key spelled exactly, or -1.
func fieldIndex(key string) int {
	for i, f := range fileFields {
		if f == key {
			return i
		}
	}
	return -1
}

// fieldOfKey is the field the decoder sets from key: the one of that exact name, else the one
// whose name it matches ignoring case as encoding/json folds it (so "ID", and even "ıd", set id).
func fieldOfKey(key string) (int, bool) {
	if i := fieldIndex(key); i >= 0 {
		return i, true
	}
	folded := foldName(key)
	for i, f := range fileFields {
		if foldName(f) == folded {
			return i, true
		}
	}
	return -1, false
}

// foldName is encoding/json's folding of a field name for its case-insensitive match: ASCII
// letters upper case, any other rune the least of its case fold orbit (so "ſ" is "S").
func foldName(s string) string {
	var sb strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			sb.WriteRune(r)
			continue
		}
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// repeatedKey refuses a valid line that sets a field twice, which the decoder would take with the
// last value winning: a file edited by hand, or merged, that says two things of one tool.
func repeatedKey(b []byte) error {
	var first [len(fileFields)]string
	var seen [len(fileFields)]bool
	for key := range members(b) {
		f, ok := fieldOfKey(key)
		switch {
		case !ok:
		case !seen[f]:
			seen[f], first[f] = true, key
		case first[f] == key:
			return fmt.Errorf("%s appears twice", quoteShort(key))
		default:
			return fmt.Errorf("%s: set twice, as %s and as %s", fileFields[f], quoteShort(first[f]), quoteShort(key))
		}
	}
	return nil
}
