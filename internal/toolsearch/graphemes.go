package toolsearch

import "unicode"

// graphemes counts user-perceived characters: the extended grapheme clusters of Unicode text
// segmentation (UAX #29, rules GB3 to GB13 of Unicode 15.0), which the reference's query budget
// counts. The classes come from Go's unicode tables (Unicode 15.0) and the ranges below rather
// than a property table of their own; TestGraphemeBreakConformance runs Unicode's test cases.
func graphemes(s string) int {
	n := 0
	prev := gcbNone
	// pict: the text so far ends in ExtPict Extend* (ZWJ), for GB11. No break needs to clear it:
	// one before a mark or joiner comes only after a control, which has cleared it already.
	pict := false
	odd := false // an odd number of regional indicators ends the text so far, for GB12 and GB13
	for _, r := range s {
		c := gcbOf(r)
		if prev == gcbNone || breaksBefore(prev, c, pict, odd) {
			n++
		}
		switch {
		case c == gcbExtPict:
			pict = true
		case prev == gcbZWJ, c != gcbExtend && c != gcbZWJ:
			pict = false // only a pictograph may follow the joiner
		}
		odd = c == gcbRI && !odd
		prev = c
	}
	return n
}

// gcb is a Grapheme_Cluster_Break class, with Extended_Pictographic as one of its own.
type gcb uint8

const (
	gcbNone gcb = iota // before the text
	gcbOther
	gcbCR
	gcbLF
	gcbControl
	gcbExtend
	gcbZWJ
	gcbRI
	gcbPrepend
	gcbSpacingMark
	gcbL
	gcbV
	gcbT
	gcbLV
	gcbLVT
	gcbExtPict
)

// breaksBefore reports whether a cluster boundary falls between a character of class prev and
// one of class c. pict says the cluster before holds ExtPict Extend* (ZWJ), odd that an odd run of
// regional indicators ends it.
func breaksBefore(prev, c gcb, pict, odd bool) bool {
	switch {
	case prev == gcbCR && c == gcbLF: // GB3
		return false
	case prev == gcbCR || prev == gcbLF || prev == gcbControl: // GB4
		return true
	case c == gcbCR || c == gcbLF || c == gcbControl: // GB5
		return true
	case prev == gcbL && (c == gcbL || c == gcbV || c == gcbLV || c == gcbLVT): // GB6
		return false
	case (prev == gcbLV || prev == gcbV) && (c == gcbV || c == gcbT): // GB7
		return false
	case (prev == gcbLVT || prev == gcbT) && c == gcbT: // GB8
		return false
	case c == gcbExtend || c == gcbZWJ || c == gcbSpacingMark: // GB9, GB9a
		return false
	case prev == gcbPrepend: // GB9b
		return false
	case prev == gcbZWJ && c == gcbExtPict && pict: // GB11
		return false
	case prev == gcbRI && c == gcbRI && odd: // GB12, GB13
		return false
	}
	return true // GB999
}

func gcbOf(r rune) gcb {
	switch {
	case r == '\r':
		return gcbCR
	case r == '\n':
		return gcbLF
	case r < 0x7F:
		if r < 0x20 {
			return gcbControl
		}
		return gcbOther
	case r == 0x200D:
		return gcbZWJ
	case r == 0x200C, r >= 0xFF9E && r <= 0xFF9F, r >= 0x1F3FB && r <= 0x1F3FF, r >= 0xE0020 && r <= 0xE007F:
		return gcbExtend // Other_Grapheme_Extend, emoji modifiers and tags
	case r >= 0x1F1E6 && r <= 0x1F1FF:
		return gcbRI
	case r >= 0x1100 && r <= 0x115F, r >= 0xA960 && r <= 0xA97C:
		return gcbL
	case r >= 0x1160 && r <= 0x11A7, r >= 0xD7B0 && r <= 0xD7C6:
		return gcbV
	case r >= 0x11A8 && r <= 0x11FF, r >= 0xD7CB && r <= 0xD7FB:
		return gcbT
	case r >= 0xAC00 && r <= 0xD7A3:
		if (r-0xAC00)%28 == 0 {
			return gcbLV
		}
		return gcbLVT
	case inRanges(r, prepend):
		return gcbPrepend
	case r == 0x0E33, r == 0x0EB3:
		return gcbSpacingMark // Thai and Lao AM: letters by category, marks by this class
	case unicode.In(r, unicode.Mn, unicode.Me):
		return gcbExtend
	case unicode.Is(unicode.Mc, r):
		switch {
		case inRanges(r, mcNotSpacing):
			return gcbOther
		case inRanges(r, mcExtend):
			return gcbExtend
		}
		return gcbSpacingMark
	case unicode.In(r, unicode.Cc, unicode.Zl, unicode.Zp, unicode.Cf), r == 0x2065, r >= 0xFFF0 && r <= 0xFFF8, r >= 0xE0000 && r <= 0xE0FFF && !unicode.Is(unicode.Mn, r):
		return gcbControl
	case inRanges(r, extPict):
		return gcbExtPict
	}
	return gcbOther
}

func inRanges(r rune, rs [][2]rune) bool {
	for _, x := range rs {
		if r < x[0] {
			return false
		}
		if r <= x[1] {
			return true
		}
	}
	return false
}

// prepend is Grapheme_Cluster_Break=Prepend: Indic_Syllabic_Category Consonant_Preceding_Repha
// and Consonant_Prefixed, and the prepended concatenation marks.
var prepend = [][2]rune{
	{0x0600, 0x0605}, {0x06DD, 0x06DD}, {0x070F, 0x070F}, {0x0890, 0x0891}, {0x08E2, 0x08E2},
	{0x0D4E, 0x0D4E}, {0x110BD, 0x110BD}, {0x110CD, 0x110CD}, {0x111C2, 0x111C3}, {0x1193F, 0x1193F},
	{0x11941, 0x11941}, {0x11A3A, 0x11A3A}, {0x11A84, 0x11A89}, {0x11D46, 0x11D46}, {0x11F02, 0x11F02},
}

// mcNotSpacing are the spacing combining marks (Mc) that UAX #29 leaves out of SpacingMark.
var mcNotSpacing = [][2]rune{
	{0x102B, 0x102C}, {0x1038, 0x1038}, {0x1062, 0x1064}, {0x1067, 0x106D}, {0x1083, 0x1083},
	{0x1087, 0x108C}, {0x108F, 0x108F}, {0x109A, 0x109C}, {0x1A61, 0x1A61}, {0x1A63, 0x1A64},
	{0xAA7B, 0xAA7B}, {0xAA7D, 0xAA7D}, {0x11720, 0x11721},
}

// mcExtend are the spacing combining marks (Mc) that are Other_Grapheme_Extend, so Extend.
var mcExtend = [][2]rune{
	{0x09BE, 0x09BE}, {0x09D7, 0x09D7}, {0x0B3E, 0x0B3E}, {0x0B57, 0x0B57}, {0x0BBE, 0x0BBE},
	{0x0BD7, 0x0BD7}, {0x0CC2, 0x0CC2}, {0x0CD5, 0x0CD6}, {0x0D3E, 0x0D3E}, {0x0D57, 0x0D57},
	{0x0DCF, 0x0DCF}, {0x0DDF, 0x0DDF}, {0x1B35, 0x1B35}, {0x302E, 0x302F}, {0x1133E, 0x1133E},
	{0x11357, 0x11357}, {0x114B0, 0x114B0}, {0x114BD, 0x114BD}, {0x115AF, 0x115AF}, {0x11930, 0x11930},
	{0x1D165, 0x1D165}, {0x1D16E, 0x1D172},
}

// extPict is Extended_Pictographic (emoji-data.txt), its ranges merged; it holds no character of
// the classes above.
var extPict = [][2]rune{
	{0x00A9, 0x00A9}, {0x00AE, 0x00AE}, {0x203C, 0x203C}, {0x2049, 0x2049}, {0x2122, 0x2122},
	{0x2139, 0x2139}, {0x2194, 0x2199}, {0x21A9, 0x21AA}, {0x231A, 0x231B}, {0x2328, 0x2328},
	{0x2388, 0x2388}, {0x23CF, 0x23CF}, {0x23E9, 0x23F3}, {0x23F8, 0x23FA}, {0x24C2, 0x24C2},
	{0x25AA, 0x25AB}, {0x25B6, 0x25B6}, {0x25C0, 0x25C0}, {0x25FB, 0x25FE}, {0x2600, 0x2605},
	{0x2607, 0x2612}, {0x2614, 0x2685}, {0x2690, 0x2705}, {0x2708, 0x2712}, {0x2714, 0x2714},
	{0x2716, 0x2716}, {0x271D, 0x271D}, {0x2721, 0x2721}, {0x2728, 0x2728}, {0x2733, 0x2734},
	{0x2744, 0x2744}, {0x2747, 0x2747}, {0x274C, 0x274C}, {0x274E, 0x274E}, {0x2753, 0x2755},
	{0x2757, 0x2757}, {0x2763, 0x2767}, {0x2795, 0x2797}, {0x27A1, 0x27A1}, {0x27B0, 0x27B0},
	{0x27BF, 0x27BF}, {0x2934, 0x2935}, {0x2B05, 0x2B07}, {0x2B1B, 0x2B1C}, {0x2B50, 0x2B50},
	{0x2B55, 0x2B55}, {0x3030, 0x3030}, {0x303D, 0x303D}, {0x3297, 0x3297}, {0x3299, 0x3299},
	{0x1F000, 0x1F0FF}, {0x1F10D, 0x1F10F}, {0x1F12F, 0x1F12F}, {0x1F16C, 0x1F171}, {0x1F17E, 0x1F17F},
	{0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F1AD, 0x1F1E5}, {0x1F201, 0x1F20F}, {0x1F21A, 0x1F21A},
	{0x1F22F, 0x1F22F}, {0x1F232, 0x1F23A}, {0x1F23C, 0x1F23F}, {0x1F249, 0x1F3FA}, {0x1F400, 0x1F53D},
	{0x1F546, 0x1F64F}, {0x1F680, 0x1F6FF}, {0x1F774, 0x1F77F}, {0x1F7D5, 0x1F7FF}, {0x1F80C, 0x1F80F},
	{0x1F848, 0x1F84F}, {0x1F85A, 0x1F85F}, {0x1F888, 0x1F88F}, {0x1F8AE, 0x1F8FF}, {0x1F90C, 0x1F93A},
	{0x1F93C, 0x1F945}, {0x1F947, 0x1FAFF}, {0x1FC00, 0x1FFFD},
}
