// Package levenshtein measures how far apart two names are, in characters, so that a refusal
// of an unknown config key or tool argument can say "did you mean".
package levenshtein

// Distance is the Levenshtein edit distance between a and b: the fewest insertions, deletions
// and substitutions of characters (runes) that turn a into b.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// AtMost is Distance when that is at most k, and k+1 otherwise. It only fills the band of
// cells within k of the diagonal and stops once a whole band row passes k, so it costs
// O(k·len) rather than O(len²): the names it compares are a model's argument keys against a
// server's schema properties, and either side may be a megabyte.
func AtMost(a, b string, k int) int {
	if k < 0 {
		return 0
	}
	ra, rb := []rune(a), []rune(b)
	if len(ra) > len(rb) {
		ra, rb = rb, ra
	}
	n, m := len(ra), len(rb)
	over := k + 1
	if m-n > k {
		return over
	}
	prev := make([]int, m+2)
	cur := make([]int, m+2)
	for j := range prev {
		prev[j] = min(j, over)
	}
	for i := 1; i <= n; i++ {
		lo, hi := max(1, i-k), min(m, i+k)
		cur[lo-1] = over
		if lo == 1 {
			cur[0] = min(i, over)
		}
		best := cur[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost, over)
			cur[j] = v
			best = min(best, v)
		}
		cur[hi+1] = over // the next row's band reaches one cell further right
		if best > k {
			return over
		}
		prev, cur = cur, prev
	}
	return min(prev[m], over)
}
