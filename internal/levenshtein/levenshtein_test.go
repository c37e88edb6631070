package levenshtein

import "testing"

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"repositry", "repository", 1},
		{"kitten", "sitting", 3}, {"héllo", "hello", 1}, {"ab", "ba", 2}, {"same", "same", 0},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetry)", tt.b, tt.a, got, tt.want)
		}
	}
}

// AtMost agrees with Distance wherever Distance is within the bound, and says "over" elsewhere.
func TestAtMostAgreesWithDistance(t *testing.T) {
	words := []string{"", "a", "ab", "ba", "abc", "kitten", "sitting", "repository", "repositry", "héllo", "hello",
		"aaaa", "aaab", "baaa", "abcdefgh", "hgfedcba", "abxdefgh", "xxxxxxxxxxxx", "é", "ée"}
	for _, a := range words {
		for _, b := range words {
			d := Distance(a, b)
			for k := 0; k <= 5; k++ {
				want := d
				if d > k {
					want = k + 1
				}
				if got := AtMost(a, b, k); got != want {
					t.Errorf("AtMost(%q, %q, %d) = %d, want %d (distance %d)", a, b, k, got, want, d)
				}
			}
		}
	}
}

// BenchmarkAtMostLongNames is two megabyte-long names three edits apart: the banded count
// reads each a few times, where Distance would fill a trillion cells.
func BenchmarkAtMostLongNames(b *testing.B) {
	long := make([]byte, 1<<20)
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	other := append([]byte("xyz"), long[3:]...)
	x, y := string(long), string(other)
	for b.Loop() {
		if AtMost(x, y, 3) != 3 {
			b.Fatal("wrong distance")
		}
	}
}
