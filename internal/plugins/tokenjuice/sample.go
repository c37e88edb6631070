package tokenjuice

import "strconv"

// Shares of a sampling budget: the head shows how the output starts (commands, first errors), the
// tail how it ends (summaries), and a window around the middle shows its shape in between, so that
// a model sees a long list's character throughout and not only its two ends.
const (
	headShare = 45
	midShare  = 20
)

// sampleKeep marks the items to show within budget characters: a head, a window around the middle
// and a tail. Items are kept whole; the first and the last are always kept.
func sampleKeep(items []string, budget int) []bool {
	n := len(items)
	keep := make([]bool, n)
	total := 0
	for _, it := range items {
		total += charCount(it) + 1
	}
	if total <= budget || n <= 3 {
		for i := range keep {
			keep[i] = true
		}
		return keep
	}
	take := func(i int, room *int, first bool) bool {
		c := charCount(items[i]) + 1
		if c > *room && !first {
			return false
		}
		keep[i] = true
		*room -= c
		return true
	}
	headRoom := budget * headShare / 100
	midRoom := budget * midShare / 100
	tailRoom := budget - headRoom - midRoom
	h := 0
	for h < n && take(h, &headRoom, h == 0) {
		h++
	}
	t := n - 1
	for t >= h && take(t, &tailRoom, t == n-1) {
		t--
	}
	// The middle window grows outwards from the centre: c, c-1, c+1, c-2, ...
	if c := (n - 1) / 2; c >= h && c <= t {
		for step := 0; ; step++ {
			i := c - (step+1)/2
			if step%2 == 0 {
				i = c + step/2
			}
			if i < h || i > t || keep[i] || !take(i, &midRoom, false) {
				break
			}
		}
	}
	return keep
}

func gapLine(n int, unit string) string { return string(appendGap(nil, n, unit)) }

// appendGap appends the gap line for n left-out items.
func appendGap(dst []byte, n int, unit string) []byte {
	dst = append(dst, "… "...)
	dst = appendGroup(dst, n)
	dst = append(append(append(dst, ' '), pluralNoun(n, unit)...), " omitted …"...)
	return dst
}

// pluralNoun returns unit for n == 1 in its singular form ("line" for "lines").
func pluralNoun(n int, unit string) string {
	if n != 1 {
		return unit
	}
	switch {
	case len(unit) > 3 && unit[len(unit)-3:] == "ies":
		return unit[:len(unit)-3] + "y"
	case len(unit) > 4 && (unit[len(unit)-4:] == "ches" || unit[len(unit)-4:] == "shes"):
		return unit[:len(unit)-2]
	case len(unit) > 1 && unit[len(unit)-1] == 's':
		return unit[:len(unit)-1]
	}
	return unit
}

// sample keeps a head, a middle window and a tail of items within budget; see sampleKeep.
func sample(items []string, budget int, unit string) []string {
	return render(items, sampleKeep(items, budget), unit)
}

// render returns the kept items in order with a gap line for each run of left-out ones.
func render(items []string, keep []bool, unit string) []string {
	out := make([]string, 0, len(items))
	skipped := 0
	for i, it := range items {
		if !keep[i] {
			skipped++
			continue
		}
		if skipped > 0 {
			out = append(out, gapLine(skipped, unit))
			skipped = 0
		}
		out = append(out, it)
	}
	if skipped > 0 {
		out = append(out, gapLine(skipped, unit))
	}
	return out
}

// appendGroup appends n with thousands separators: 48213 → "48,213".
func appendGroup(dst []byte, n int) []byte {
	if n < 0 {
		dst = append(dst, '-')
		n = -n
	}
	var digits [24]byte
	d := strconv.AppendInt(digits[:0], int64(n), 10)
	for i, c := range d {
		if i > 0 && (len(d)-i)%3 == 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, c)
	}
	return dst
}
