package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is the text pipeline of the reference Tool Search ranker: word splitting,
// stop words, the light stemmer and the query expansions. Lengths follow JavaScript
// (UTF-16 code units) wherever the reference compares them.

// refStopWords are the reference's 59 stop words. "get" is deliberately not one: it
// carries the capability in names like get_weather.
var refStopWords = setOf(
	"a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "for", "from",
	"had", "has", "have", "here", "how", "i", "if", "in", "into", "is", "it", "its", "me",
	"my", "no", "not", "of", "on", "or", "our", "so", "that", "the", "their", "them",
	"then", "there", "these", "they", "this", "to", "up", "us", "was", "we", "were",
	"what", "when", "where", "which", "who", "why", "will", "with", "you", "your",
)

// nonPluralS are words whose final s is not a plural: "news" must not become "new".
var nonPluralS = setOf( // all end in s: stripOneSuffix relies on it
	"news", "status", "alias", "canvas", "focus", "bonus", "virus", "atlas", "lens",
	"axis", "basis", "analysis", "gas", "bus", "plus",
)

var stemSuffixes = [...]string{"ies", "ing", "ed", "ly", "es", "er", "s", "e"}

// suffixesEndingIn lists the stemSuffixes that end in c, in stemSuffixes order: only
// those can match a word ending in c (TestSuffixesEndingIn checks the lists).
func suffixesEndingIn(c byte) []string {
	switch c {
	case 's':
		return suffixesS[:]
	case 'g':
		return stemSuffixes[1:2] // ing
	case 'd':
		return stemSuffixes[2:3] // ed
	case 'y':
		return stemSuffixes[3:4] // ly
	case 'r':
		return stemSuffixes[5:6] // er
	case 'e':
		return stemSuffixes[7:8] // e
	}
	return nil
}

var suffixesS = [...]string{"ies", "es", "s"}

// expansionGroup adds discounted terms to a query when one of its trigger words occurs.
type expansionGroup struct {
	triggers []string // normalizeTrigger applied
	add      []string // stem applied
}

// refExpansions bridge intent to catalog wording with generic capabilities, never
// vendor names.
var refExpansions = buildExpansions([][2][]string{
	{{"look", "lookup", "google", "research"}, {"search", "web", "find"}},
	{{"current", "today", "latest", "now", "recent", "news", "price", "weather"}, {"search", "web"}},
	{{"url", "link", "page", "article", "site", "website"}, {"fetch", "web", "browse"}},
	{{"remember", "recall", "memory", "earlier", "previously", "discussed", "decided"}, {"memory", "recall", "history"}},
	{{"remind", "reminder", "later", "tomorrow", "daily", "weekly", "recurring"}, {"schedule", "automations", "cron", "reminder"}},
	{{"say", "tell", "reply", "respond", "answer"}, {"message", "send"}},
	{{"picture", "photo", "meme", "screenshot"}, {"image"}},
	{{"speak", "say", "voice"}, {"audio", "speech"}},
	{{"run", "execute", "command", "shell", "terminal"}, {"exec", "process"}},
	{{"directory", "folder", "path"}, {"file", "list"}},
})

// refExpansionWeight discounts inferred terms against the caller's own words.
const refExpansionWeight = 0.35

func buildExpansions(groups [][2][]string) []expansionGroup {
	out := make([]expansionGroup, len(groups))
	for i, g := range groups {
		for _, t := range g[0] {
			out[i].triggers = append(out[i].triggers, normalizeTrigger(t))
		}
		for _, a := range g[1] {
			out[i].add = append(out[i].add, stem(a))
		}
	}
	return out
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// splitWords is the reference splitter: raw words are runs of letters, numbers and
// underscores; each is emitted lowercased, and when it has two or more case parts
// (`\p{Lu}+s?(?![\p{Ll}])|\p{Lu}?\p{Ll}+|\p{N}+`, so URLs stays one part) each part is
// emitted lowercased too. web_search → web_search, web, search.
func splitWords(dst []string, s string, buf *[]rune) []string {
	if isASCII(s) {
		return splitWordsASCII(dst, s)
	}
	return splitWordsRunes(dst, s, buf)
}

// splitWordsRunes is splitWords for any text.
func splitWordsRunes(dst []string, s string, buf *[]rune) []string {
	rs := (*buf)[:0]
	for _, r := range s {
		rs = append(rs, r)
	}
	*buf = rs
	for i := 0; i < len(rs); {
		if !isWordRune(rs[i]) {
			i++
			continue
		}
		j := i
		for j < len(rs) && isWordRune(rs[j]) {
			j++
		}
		dst = appendWord(dst, rs[i:j])
		i = j
	}
	return dst
}

func appendWord(dst []string, raw []rune) []string {
	dst = append(dst, lowerString(raw))
	// Count the parts first: a single-part word adds nothing.
	parts := 0
	forEachPart(raw, func(int, int) { parts++ })
	if parts >= 2 {
		forEachPart(raw, func(a, b int) { dst = append(dst, lowerString(raw[a:b])) })
	}
	return dst
}

func lowerString(rs []rune) string {
	var buf [64]byte
	return string(appendLower(buf[:0], rs))
}

// splitWordsASCII is splitWords for ASCII text, where lowercasing keeps byte offsets:
// a word's parts are substrings of its lowercased form, and a word without capitals is
// its own lowercased form, so nothing is allocated for most words.
func splitWordsASCII(dst []string, s string) []string {
	for i := 0; i < len(s); {
		if !asciiWordByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && asciiWordByte(s[j]) {
			j++
		}
		raw := s[i:j]
		lower := asciiLower(raw)
		dst = append(dst, lower)
		var parts [16][2]int
		n := asciiParts(raw, &parts)
		if n >= 2 {
			if n <= len(parts) {
				for _, p := range parts[:n] {
					dst = append(dst, lower[p[0]:p[1]])
				}
			} else {
				dst = appendWord(dst[:len(dst)-1], []rune(raw)) // more parts than the array holds
			}
		}
		i = j
	}
	return dst
}

// asciiWordByte is isWordRune for an ASCII byte.
func asciiWordByte(c byte) bool { return asciiWordBytes[c] }

// asciiWordBytes marks the ASCII bytes isWordRune accepts: a table is fewer instructions
// than four comparisons, in a loop that runs over every byte of an index's text.
var asciiWordBytes = func() (t [256]bool) {
	for c := range utf8.RuneSelf {
		t[c] = isWordRune(rune(c))
	}
	return t
}()

// asciiLower lowercases ASCII s, returning s itself when it has no capitals.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for k := i; k < len(b); k++ {
				if 'A' <= b[k] && b[k] <= 'Z' {
					b[k] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// asciiParts is forEachPart over ASCII s: it stores the bounds of the first len(parts)
// parts and returns how many there are in all.
func asciiParts(s string, parts *[16][2]int) int {
	isLu := func(i int) bool { return i < len(s) && 'A' <= s[i] && s[i] <= 'Z' }
	isLl := func(i int) bool { return i < len(s) && 'a' <= s[i] && s[i] <= 'z' }
	isN := func(i int) bool { return i < len(s) && '0' <= s[i] && s[i] <= '9' }
	n := 0
	emit := func(a, b int) {
		if n < len(parts) {
			parts[n] = [2]int{a, b}
		}
		n++
	}
	for p := 0; p < len(s); {
		switch {
		case isLu(p):
			e := p
			for isLu(e) {
				e++
			}
			switch {
			case e < len(s) && s[e] == 's' && !isLl(e+1):
				emit(p, e+1)
				p = e + 1
			case !isLl(e):
				emit(p, e)
				p = e
			case e-p >= 2:
				emit(p, e-1)
				p = e - 1
			default:
				q := e
				for isLl(q) {
					q++
				}
				emit(p, q)
				p = q
			}
		case isLl(p):
			q := p
			for isLl(q) {
				q++
			}
			emit(p, q)
			p = q
		case isN(p):
			q := p
			for isN(q) {
				q++
			}
			emit(p, q)
			p = q
		default:
			p++
		}
	}
	return n
}

// forEachPart calls fn with the bounds of every match of the reference's case-part
// pattern in rs, scanning left to right as JavaScript's match with /g does.
func forEachPart(rs []rune, fn func(a, b int)) {
	isLu := func(i int) bool { return i < len(rs) && unicode.IsUpper(rs[i]) }
	isLl := func(i int) bool { return i < len(rs) && unicode.IsLower(rs[i]) }
	isN := func(i int) bool { return i < len(rs) && unicode.IsNumber(rs[i]) }
	for p := 0; p < len(rs); {
		switch {
		case isLu(p):
			e := p
			for isLu(e) {
				e++
			}
			switch {
			case e < len(rs) && rs[e] == 's' && !isLl(e+1):
				fn(p, e+1) // URLs
				p = e + 1
			case !isLl(e):
				fn(p, e) // URL, end of word or before a digit
				p = e
			case e-p >= 2:
				fn(p, e-1) // HTTPServer: the last capital starts the next part
				p = e - 1
			default:
				q := e
				for isLl(q) {
					q++
				}
				fn(p, q) // Server
				p = q
			}
		case isLl(p):
			q := p
			for isLl(q) {
				q++
			}
			fn(p, q)
			p = q
		case isN(p):
			q := p
			for isN(q) {
				q++
			}
			fn(p, q)
			p = q
		default:
			p++
		}
	}
}

// stem strips up to three suffixes: reminders → reminder → remind.
func stem(tok string) string {
	for range 3 {
		next := stripOneSuffix(tok)
		if next == tok {
			return tok
		}
		tok = next
	}
	return tok
}

func stripOneSuffix(tok string) string {
	n := utf16Len(tok)
	if n <= 3 || (tok[len(tok)-1] == 's' && nonPluralS[tok]) { // every one ends in s
		return tok
	}
	for _, suf := range suffixesEndingIn(tok[len(tok)-1]) {
		if !strings.HasSuffix(tok, suf) || n-len(suf) < 3 {
			continue
		}
		if suf == "s" && strings.HasSuffix(tok, "ss") {
			continue // process: the ss belongs to the root
		}
		if suf == "ies" {
			return tok[:len(tok)-3] + "y" // repositories → repository
		}
		stripped := tok[:len(tok)-len(suf)]
		if suf == "ing" || suf == "ed" || suf == "er" {
			return undoubleFinalConsonant(stripped)
		}
		return stripped
	}
	return tok
}

// undoubleFinalConsonant undoes inflection's doubling (runn → run) but keeps doubles
// that belong to the root (call, process, off, buzz) and doubled vowels.
func undoubleFinalConsonant(tok string) string {
	last, size := utf8.DecodeLastRuneInString(tok)
	if size == 0 || last >= 0x10000 || utf16Len(tok) <= 3 {
		return tok // JavaScript compares UTF-16 units: a surrogate pair never matches
	}
	prev, _ := utf8.DecodeLastRuneInString(tok[:len(tok)-size])
	if prev != last || strings.ContainsRune("lsfzaeiou", last) {
		return tok
	}
	return tok[:len(tok)-size]
}

// appendStemVariants appends the stems of word; an -ies word gets both readings
// (policies → policy; cookies → cooky and cookie).
func appendStemVariants(dst []string, word string) []string {
	if utf16Len(word) > 4 && strings.HasSuffix(word, "ies") {
		base := word[:len(word)-3]
		return append(dst, base+"y", stem(base+"ie"))
	}
	if s := stem(word); s != "" {
		dst = append(dst, s)
	}
	return dst
}

// normalizeTrigger singularizes without stemming, which could conflate intents.
func normalizeTrigger(word string) string {
	n := utf16Len(word)
	if n > 4 && strings.HasSuffix(word, "ies") {
		return word[:len(word)-3] + "y"
	}
	if n > 4 && strings.HasSuffix(word, "s") && !strings.HasSuffix(word, "ss") {
		return word[:len(word)-1]
	}
	return word
}

// weightedTerm is a query term with its weight: 1 for the caller's words, less for
// expansions.
type weightedTerm struct {
	term   string
	weight float64
}

// refDocumentTerms appends the reference's indexable terms of s: split words, stop
// words dropped, stem variants.
func refDocumentTerms(dst []string, s string, words *[]string, buf *[]rune) []string {
	*words = splitWords((*words)[:0], s, buf)
	for _, w := range *words {
		if !refStopWords[w] {
			dst = appendStemVariants(dst, w)
		}
	}
	return dst
}

// refQueryTerms is the reference's tokenizeQuery: literal terms at weight 1 in order of
// first occurrence, then the additions of every expansion group a trigger fired, at
// max(existing, 0.35).
func refQueryTerms(query string) []weightedTerm {
	var buf []rune
	words := splitWords(nil, query, &buf)
	kept := words[:0]
	for _, w := range words {
		if !refStopWords[w] {
			kept = append(kept, w)
		}
	}
	var terms termSet
	var variants []string
	for _, w := range kept {
		variants = appendStemVariants(variants[:0], w)
		for _, v := range variants {
			terms.set(v, 1, false)
		}
	}
	triggers := make(map[string]bool, len(kept))
	for _, w := range kept {
		triggers[normalizeTrigger(w)] = true
	}
	for _, g := range refExpansions {
		fired := false
		for _, t := range g.triggers {
			if triggers[t] {
				fired = true
				break
			}
		}
		if !fired {
			continue
		}
		for _, a := range g.add {
			terms.set(a, refExpansionWeight, true)
		}
	}
	return terms.terms
}

// termSet is a query's weighted terms in the order they were first set. Past a few terms it
// keeps an index: a query is as long as its caller makes it (code mode passes any string), and
// a scan per term would make a long one cost the square of its words.
type termSet struct {
	terms []weightedTerm
	at    map[string]int
}

// indexFrom is how many terms a termSet scans before it keeps an index.
const indexFrom = 128

// set gives term weight, or, when it is there already, the larger of the two (keepMax) or weight.
func (s *termSet) set(term string, weight float64, keepMax bool) {
	i := -1
	if s.at != nil {
		if j, ok := s.at[term]; ok {
			i = j
		}
	} else {
		for j := range s.terms {
			if s.terms[j].term == term {
				i = j
				break
			}
		}
	}
	if i >= 0 {
		if !keepMax || weight > s.terms[i].weight {
			s.terms[i].weight = weight
		}
		return
	}
	s.terms = append(s.terms, weightedTerm{term: term, weight: weight})
	switch n := len(s.terms); {
	case s.at != nil:
		s.at[term] = n - 1
	case n == indexFrom:
		s.at = make(map[string]int, 2*n)
		for j, t := range s.terms {
			s.at[t.term] = j
		}
	}
}

// jsTrim is JavaScript's String.prototype.trim: its whitespace differs from Go's in
// U+FEFF (trimmed) and U+0085 (kept).
func jsTrim(s string) string {
	isSpace := func(r rune) bool {
		if r == '\ufeff' {
			return true
		}
		return r != '\u0085' && unicode.IsSpace(r)
	}
	return strings.TrimRightFunc(strings.TrimLeftFunc(s, isSpace), isSpace)
}

// jsLower is JavaScript's toLowerCase.
func jsLower(s string) string {
	if isASCII(s) {
		return asciiLower(s)
	}
	return lowerString([]rune(s))
}
