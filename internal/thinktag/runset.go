package thinktag

// smallRuns is how many pending lengths runSet searches one by one before it keeps an index.
const smallRuns = 8

// runSet is the lengths of the backtick runs that may still open a code span, oldest first, each
// length once. Every run of a paragraph asks whether its length is pending; with k lengths
// pending a search of the list costs k, and a paragraph can hold about the square root of its
// length of distinct ones (runs of 1, 2, 3, … backticks), so each run then cost that much: 4 MB
// of "`a" after such a paragraph start took seconds. Past a few lengths an index answers at once.
type runSet struct {
	lens []int
	at   map[int]int // length → its index in lens, once lens has outgrown smallRuns
}

func (r *runSet) len() int { return len(r.lens) }

// all returns the pending lengths, oldest first. The slice must not be modified.
func (r *runSet) all() []int { return r.lens }

// find returns the index of length n, or -1.
func (r *runSet) find(n int) int {
	if r.at != nil {
		if k, ok := r.at[n]; ok {
			return k
		}
		return -1
	}
	for k, m := range r.lens {
		if m == n {
			return k
		}
	}
	return -1
}

// add appends n, which must not be pending.
func (r *runSet) add(n int) {
	r.lens = append(r.lens, n)
	switch {
	case r.at != nil:
		r.at[n] = len(r.lens) - 1
	case len(r.lens) > smallRuns:
		r.at = make(map[int]int, 2*len(r.lens))
		for k, m := range r.lens {
			r.at[m] = k
		}
	}
}

// cut keeps the first k lengths. Each length is dropped once after being added once, so the
// index costs no more than the list. Down to a few lengths the index is dropped rather than
// emptied: clearing a map costs its capacity, and every blank line and tag cuts.
func (r *runSet) cut(k int) {
	switch {
	case r.at == nil:
	case k <= smallRuns:
		r.at = nil
	default:
		for _, m := range r.lens[k:] {
			delete(r.at, m)
		}
	}
	r.lens = r.lens[:k]
}
