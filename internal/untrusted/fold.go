package untrusted

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// mayHoldMarker is the cheap test that keeps Sanitize allocation-free for ordinary text: a marker
// starts with three opening brackets in a row once folded (invisible characters between them fold
// away). One bracket is not enough: HTML and code hold them everywhere, and folding a page costs
// nine times its size. It must say yes whenever fold's output holds "<<<", which
// TestFoldAgreesWithMayHoldMarker checks over every character.
func mayHoldMarker(text string, tags bool) bool {
	run := 0 // opening brackets in a row in the folded text
	for i := 0; i < len(text); {
		// ASCII, nearly all of most text, is told apart byte by byte without decoding.
		if c := text[i]; c < utf8.RuneSelf {
			if c != '<' {
				run = 0
			} else if run++; run >= 3 {
				return true
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(text[i:])
		i += w
		if tags && isTag(r) {
			r = r - tagBase // read as the ASCII it encodes; below 0x80 openers and vanishes say no
			if r == '<' {
				run++
			} else {
				run = 0
			}
			if run >= 3 {
				return true
			}
			continue
		}
		switch n := openers(r); {
		case n > 0:
			run += n
		case run > 0 && vanishes(r):
			// Asked only inside a run: the category tables cost more than the rest of the loop.
		default:
			run = 0
		}
		if run >= 3 {
			return true
		}
	}
	return false
}

// fold maps look-alike characters to ASCII and drops invisible ones and combining marks, for
// matching only: Sanitize copies everything outside a match from text itself. offsets[i] is the
// byte offset in text of the character that produced folded byte i; offsets[len(folded)] is
// len(text). A match maps back to whole characters: it starts at the one that produced its first
// byte and ends where the one that produced its last byte ends (see Sanitize).
//
// With tags, Unicode tag characters read as the ASCII they encode rather than vanishing: a model
// may read a marker spelt in them (ASCII smuggling) though a person sees nothing.
func fold(text string, tags bool) (string, []int) {
	var b strings.Builder
	b.Grow(len(text))
	offsets := make([]int, 0, len(text)+1)
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:])
		n := b.Len()
		if tags && isTag(r) {
			b.WriteString(ascii(byte(r - tagBase)))
		} else if !foldInto(&b, r, text[i:i+w]) {
			b.WriteString(text[i : i+w]) // an invalid byte too, as the single byte it is
		}
		for range b.Len() - n {
			offsets = append(offsets, i)
		}
		i += w
	}
	offsets = append(offsets, len(text))
	return b.String(), offsets
}

// foldInto writes what r (spelt s in the text) folds to and reports whether it folds at all.
// Beyond the hand-made tables it takes r's compatibility decomposition (NFKD: 𝐄, 𝔼, Ⓔ, ᴱ, ﬆ, É,
// ≮) when every part of it folds, so a letter with accents reads as the letter, and a
// decomposition that keeps a letter of another script (й) leaves r standing for itself.
func foldInto(b *strings.Builder, r rune, s string) bool {
	if r < utf8.RuneSelf || r == utf8.RuneError {
		return false
	}
	if f, ok := foldRune(r); ok {
		b.WriteString(f)
		return true
	}
	d := norm.NFKD.PropertiesString(s).Decomposition()
	if len(d) == 0 {
		return false
	}
	visible := false
	for j := 0; j < len(d); {
		c, w := utf8.DecodeRune(d[j:])
		j += w
		f, ok := foldRune(c)
		if !ok && c >= utf8.RuneSelf {
			return false
		}
		visible = visible || !ok || f != ""
	}
	if !visible {
		return false // ﾞ is a spacing mark of its own, though its decomposition is combining
	}
	for j := 0; j < len(d); {
		c, w := utf8.DecodeRune(d[j:])
		if f, ok := foldRune(c); ok {
			b.WriteString(f)
		} else {
			b.Write(d[j : j+w])
		}
		j += w
	}
	return true
}

// foldRune returns the ASCII a look-alike stands for ("" for invisible characters and combining
// marks), and false for characters that stand for themselves, including those only their
// decomposition folds (see foldInto). Case does not matter: the marker pattern ignores it.
func foldRune(r rune) (string, bool) {
	switch {
	case r < 0x80:
		return "", false
	case r >= lookalikeFirst && r < lookalikeFirst+rune(len(lookalikes)) && lookalikes[r-lookalikeFirst] != 0:
		return ascii(lookalikes[r-lookalikeFirst]), true
	case r >= 0xFF21 && r <= 0xFF3A, r >= 0xFF41 && r <= 0xFF5A: // full-width letters
		return ascii(byte(r - 0xFEE0)), true
	case r >= 0x1F150 && r <= 0x1F169, r >= 0x1F170 && r <= 0x1F189:
		// 🅔 and 🅴 are Ⓔ and 🄴 in negative, which NFKD leaves alone only because they have no
		// counterpart in older character sets; a reader sees the same letters.
		return ascii(byte('A' + (r-0x1F150)%0x20)), true
	}
	if r >= 0xAB70 && r <= 0xABBF {
		r = unicode.ToUpper(r) // Cherokee small letters read as their capitals
	}
	if c, ok := latinLookalikes[r]; ok {
		return ascii(c), true
	}
	if n := openers(r); n > 0 {
		return "<<<"[:n], true
	}
	if n := closers(r); n > 0 {
		return ">>>"[:n], true
	}
	switch r {
	case 0xFF3F: // full-width low line
		return "_", true
	case 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2043, 0x2212, 0x2E3A, 0x2E3B, 0xFE58, 0xFE63, 0xFF0D:
		return "-", true
	case 0x00A0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
		0x202F, 0x205F, 0x3000, 0x0085, 0x2028, 0x2029: // and the next-line, line and paragraph separators
		return " ", true
	}
	if vanishes(r) {
		return "", true
	}
	return "", false
}

// openers returns how many '<' a character reads as (0 for most). Besides what NFKD maps to '<'
// or to an angle bracket (＜ ﹤ ︿, and ≮ once its stroke is dropped) it takes angle brackets and
// arrowheads that a reader takes for '<', and the relation signs drawn as two or three of them.
// Taking too many costs nothing: a bracket only matters before the marker's words. Signs with a
// bar (≤ ⋜) read as something else, and are left.
func openers(r rune) int {
	switch r {
	case 0xFF1C, 0xFE64, 0x226E, 0x2329, 0x3008, 0xFE3F, 0x2039, 0x27E8, 0x276C, 0x276E, 0x2770, 0x29FC, 0x02C2,
		0x1438:
		return 1
	case 0x00AB, 0x300A, 0xFE3D, 0x226A, 0x2AA1: // «, 《, ︽, ≪, ⪡
		return 2
	case 0x22D8, 0x2AF7: // ⋘, ⫷
		return 3
	}
	return 0
}

// closers is openers for '>'.
func closers(r rune) int {
	switch r {
	case 0xFF1E, 0xFE65, 0x226F, 0x232A, 0x3009, 0xFE40, 0x203A, 0x27E9, 0x276D, 0x276F, 0x2771, 0x29FD, 0x02C3,
		0x1433:
		return 1
	case 0x00BB, 0x300B, 0xFE3E, 0x226B, 0x2AA2:
		return 2
	case 0x22D9, 0x2AF8:
		return 3
	}
	return 0
}

// vanishes reports characters that fold to nothing: combining marks (E\u0301, a strike-through
// U+0336) sit on a letter without replacing it, and format and default-ignorable characters
// (zero-width, bidi controls, tags, variation selectors, Hangul fillers) are not seen at all.
func vanishes(r rune) bool {
	return r >= utf8.RuneSelf &&
		unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point)
}

// tagBase is where Unicode's tag characters start: tag c, for printable ASCII c, is tagBase+c.
const tagBase = 0xE0000

// isTag reports the tag characters that encode printable ASCII (U+E0020–U+E007E).
func isTag(r rune) bool { return r >= tagBase+' ' && r <= tagBase+'~' }

// mayHoldTags reports whether text may hold a tag character: all of them, and only characters of
// their plane's first block, begin with these UTF-8 bytes.
func mayHoldTags(text string) bool { return strings.Contains(text, "\xf3\xa0") }

// printable holds the printable ASCII characters, so that a folded letter is a slice of a constant
// and folding a character never allocates.
const printable = " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"

func ascii(c byte) string { return printable[c-' ' : c-' '+1] }

// lookalikeFirst is the first character of the Greek and Cyrillic blocks, which lookalikes covers.
const lookalikeFirst = 0x0370

// lookalikes maps a Greek or Cyrillic letter that a reader takes for a Latin one to that letter
// (0 for the others): with them a marker can be spelt that neither a regexp nor a glance tells
// from the real one. Letters outside the marker's words are kept so that the table reads as the
// look-alike list it is, and costs nothing.
var lookalikes = func() (t [0x0530 - lookalikeFirst]byte) {
	for _, l := range []struct {
		latin byte
		runes string
	}{
		{'a', "АаΑα"}, {'b', "ВвΒ"}, {'c', "СсϹϲ"}, {'d', "ԁ"}, {'e', "ЕеΕε"}, {'h', "НнΗһ"},
		{'i', "ІіΙι"}, {'j', "Јј"}, {'k', "КкΚκ"}, {'l', "Ӏӏ"}, {'m', "МмΜ"}, {'n', "Νη"},
		{'o', "ОоΟο"}, {'p', "РрΡρ"}, {'r', "г"}, {'s', "Ѕѕ"}, {'t', "ТтΤτ"}, {'u', "υ"},
		{'v', "ν"}, {'x', "ХхΧχ"}, {'y', "УуΥҮү"}, {'z', "Ζ"},
	} {
		for _, r := range l.runes {
			t[r-lookalikeFirst] = l.latin
		}
	}
	return t
}()

// latinLookalikes maps letters that NFKD keeps as letters in their own right, but that a reader
// takes for Latin ones, to those: the small capitals that "fancy text" generators spell words with
// (ᴇxᴛᴇʀɴᴀʟ), letters with a stroke or bar (Ł, Đ, Ŧ, ı), and the Cherokee and Lisu letters drawn
// as Latin capitals (Ꭼ, ꓰ), all among Unicode's confusables of Latin letters.
var latinLookalikes = func() map[rune]byte {
	m := map[rune]byte{}
	for _, l := range []struct {
		latin byte
		runes string
	}{
		{'a', "ᴀ\u13aaꓮ"}, {'b', "ʙᏴꓐ"}, {'c', "ᴄᏟꓚ"}, {'d', "ᴅĐđᎠꓓ"}, {'e', "ᴇᎬꓰ"}, {'f', "ꜰꓝ"},
		{'g', "ɢᏀꓖ"}, {'h', "ʜĦħᎻꓧ"}, {'i', "ɪıƗɨᎥꓲ"}, {'j', "ᴊȷᎫꓙ"}, {'k', "ᴋᏦꓗ"},
		{'l', "ʟŁłᏞꓡ"}, {'m', "ᴍᎷꓟ"}, {'n', "ɴꓠ"}, {'o', "ᴏØøꓳ"}, {'p', "ᴘᏢꓑ"}, {'q', "ꞯ"},
		{'r', "ʀɌɍᏒꓣ"}, {'s', "ꜱᏚꓢ"}, {'t', "ᴛŦŧᎢꓔ"}, {'u', "ᴜꓴ"}, {'v', "ᴠᏙꓦ"},
		{'w', "ᴡᎳꓪ"}, {'x', "ꓫ"}, {'y', "ʏꓬ"}, {'z', "ᴢƵƶᏃꓜ"},
	} {
		for _, r := range l.runes {
			m[r] = l.latin
		}
	}
	return m
}()
