package json5

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dupLayouts are objects and arrays holding duplicates of a key laid out in every way remove
// distinguishes: a member a line or several on one line, with and without trailing commas,
// comments after and between them, CRLF, the duplicates first, last, alone or interleaved.
var dupLayouts = []struct{ name, src string }{
	{"lines", "{\n  a: 1,\n  k: 1,\n  b: 2,\n  k: 2,\n  k: 3,\n}\n"},
	{"lines no trailing comma", "{\n  a: 1,\n  k: 1,\n  b: 2,\n  k: 2,\n  k: 3\n}\n"},
	{"only dups", "{\n  k: 1,\n  k: 2,\n  k: 3\n}\n"},
	{"only dups trailing", "{\n  k: 1,\n  k: 2,\n  k: 3,\n}\n"},
	{"inline", `{k: 1, a: 1, k: 2, k: 3}`},
	{"inline only dups", `{k: 1, k: 2, k: 3}`},
	{"inline trailing", `{k: 1, k: 2, a: 1, k: 3,}`},
	{"inline spaced commas", `{a: 1 , k: 2 , k: 3 }`},
	{"comments", "{\n  k: 1, // one\n  /* two */ k: 2,\n  a: 1, /* x */\n  k: 3 // three\n}\n"},
	{"block comment over lines", "{\n  k: 1, /* a\n  b */ k: 2,\n  k: 3\n}\n"},
	{"crlf", "{\r\n  k: 1,\r\n  a: 2,\r\n  k: 3\r\n}\r\n"},
	{"mixed", "{\n  k: 1, k: 2,\n  a: 1,\n  k: 3, k: 4\n}\n"},
	{"first member on brace line", "{ k: 1,\n  k: 2,\n  a: 3 }"},
	{"nested", "{\n  t: {\n    k: {x: 1},\n    k: [1, 2],\n  },\n  t: {k: 1, k: 2},\n}\n"},
	{"quoted keys", "{\"k\": 1, 'k': 2, \"a\": 3, k: 4}"},
	{"many", string(dupObject(50))},
}

// TestUnsetDuplicatesMatchesReference: Unset, removing every duplicate in one pass, gives the
// text the earlier one-at-a-time removal gave, byte for byte, or the same failure.
func TestUnsetDuplicatesMatchesReference(t *testing.T) {
	for _, tt := range dupLayouts {
		for _, path := range [][]string{{"k"}, {"t", "k"}, {"tools", "k"}, {"a"}, {"t"}} {
			want, wantErr := unsetReference([]byte(tt.src), path)
			got, err := Unset([]byte(tt.src), path)
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Errorf("%s: Unset(%v) error %v, reference %v", tt.name, path, err, wantErr)
				continue
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s: Unset(%v) differs from the reference (-want +got):\n%s", tt.name, path, diff)
			}
		}
	}
}

// FuzzUnsetMatchesReference checks Unset against the one-at-a-time reference on any text and
// path: the same bytes, or the same error.
func FuzzUnsetMatchesReference(f *testing.F) {
	for _, tt := range dupLayouts {
		f.Add([]byte(tt.src), "k")
	}
	f.Add([]byte("[1, 2, 3]"), "1")
	f.Add([]byte("{a: {k: 1, k: 2}}"), "a.k")
	f.Fuzz(func(t *testing.T, src []byte, p string) {
		path, err := ParsePath(p)
		if err != nil || len(path) == 0 {
			return
		}
		want, wantErr := unsetReference(src, path)
		got, err := Unset(src, path)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("Unset(%q, %q) error %v, reference %v", src, p, err, wantErr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("Unset(%q, %q) =\n%q\nreference:\n%q", src, p, got, want)
		}
	})
}

// TestUnsetDuplicatesGrowsLinearly: removing twice as many duplicates allocates about twice as
// much, where removing them one at a time, parsing the file again for each, allocated four
// times as much (quadratic). Allocations are counted, not timed, so the test does not depend on
// the machine's speed.
func TestUnsetDuplicatesGrowsLinearly(t *testing.T) {
	allocs := func(n int) float64 {
		src := dupObject(n)
		return testing.AllocsPerRun(2, func() {
			if _, err := Unset(src, []string{"tools", "k"}); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(400), allocs(800)
	if ratio := large / small; ratio > 3 {
		t.Errorf("allocations for 800 duplicates are %.1f times those for 400 (%.0f, %.0f): quadratic, want about 2", ratio, large, small)
	}
}
