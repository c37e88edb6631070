package search

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// nodmixAnalyzer is nodmix's text model for the Tool Search ranker. It keeps the
// reference's word splitting and stemmer, and adds:
//
//   - fields scored as in BM25F, each with a weight and its own length normalization,
//     so a word in the name outweighs one deep in a parameter description;
//   - a description's lead (its first paragraph, the docstring summary; see splitLead)
//     apart from the rest: real MCP descriptions go on with argument lists, examples
//     and notes whose words say little about what the tool is for, so the rest counts
//     half;
//   - the tool's own name in the name field: an MCP tool listed as mcp__server__tool
//     is indexed as tool, so a ranking does not depend on how a catalog names its
//     tools (the server is still in the id);
//   - schema property names and parameter text for every source;
//   - compound words both ways: a word and its case parts are indexed (GitHub: github,
//     git, hub), adjacent words are also indexed joined on both sides ("git hub" is
//     found by "github"), the tool part of server__tool names is a word of its own, and
//     a query word the corpus lacks is split into corpus words or matched by a long
//     shared prefix;
//   - a wider English stop-word list for the filler of natural-language requests;
//   - the reference's intent expansions plus groups of general English synonyms;
//   - no literal tier: with synonyms, a tool reached only through expansions may well be
//     the best match.
//
// The parameters were chosen on one half of each development set; the other half
// checks that they generalize (see the package tests).
type nodmixAnalyzer struct {
	// words caches the analysis of every raw word of the corpus: written while the
	// ranker is built, read-only once frozen, so searches share it safely.
	words  wordTable  // words shortWords does not take
	short  shortWords // short ASCII words
	frozen bool
	sink   termSink // docTerms' buffers, reused while building
	vocab  vocabSet // lowercased words and parts the corpus uses
	sorted []string // vocab, sorted, for prefix lookups
	used   []bool   // once frozen: used[word] says a document has the word
	// pred is the analyzer this one succeeds, until freeze, which may share its
	// vocabulary.
	pred *nodmixAnalyzer
	// vocabDone, when not nil, is closed once a parallel build has made vocab and sorted,
	// which freeze waits for.
	vocabDone chan struct{}

	// While building: the term ids of every pair of adjacent words joined, so that a
	// pair met again costs one map lookup, not a stemming and a term lookup. Dropped by
	// freeze.
	joins pairTable
	// Slabs the build allocates word analyses from, a few allocations for thousands
	// of words, and the bytes of the strings it makes (lowercased words, joined pairs).
	infos []wordInfo
	strs  []string
	bytes strArena

	// hot[word] locates the word's term ids in tids, which is all a word occurrence
	// needs: a dense array, where a wordInfo is far bigger, in slabs. Both are appended
	// to only, and shared with the analyzers of updates.
	hot  []wordHot
	tids []int32

	// list holds every analyzed word by its id; the distinct words of document i are
	// docWords[i], which is what the vocabulary is made of, and what an update carries
	// over (shared, read-only) for an unchanged document.
	list     []*wordInfo
	docWords [][]int32
	// While building: wordArena holds the docWords of analyzed documents in chunks, the
	// document being analyzed from wordFrom.
	wordArena []int32
	wordFrom  int
	seen      []int32 // while building: seen[word] is the document (offset by one) that last had it
	doc       int32   // while building: the document being analyzed, offset by one
}

// wordHot is what a build reads of a word at every occurrence.
type wordHot struct {
	off, n int32 // the word's term ids are tids[off:off+n]
	stop   bool  // the word is a stop word
}

// wordInfo is the analysis of one raw word.
type wordInfo struct {
	id    int32    // position in the analyzer's list
	stop  bool     // lower is a stop word
	raw   string   // the word as the text has it
	lower string   // the word lowercased
	parts []string // lower and its case parts, as splitWords gives them
	terms []string // stem variants of the parts that are not stop words
}

// Fields of nodmix's document model.
const (
	fieldName = iota
	fieldID
	fieldLabel
	fieldDescription
	fieldServer
	fieldParams
	fieldKeys
	fieldBody // the description after its lead
	numFields
)

// nodmixFields weighs the fields. The id repeats the name next to source and server,
// which doubles the name's weight; the server alone says little about the tool. A
// description of one paragraph is all lead and scores as one description field did
// before the body was told apart: the API-style catalogs rank exactly as they did.
var nodmixFields = [numFields]fieldSpec{
	fieldName:        {weight: 1, b: 0.75},
	fieldID:          {weight: 1, b: 0.75},
	fieldLabel:       {weight: 1, b: 0.75},
	fieldDescription: {weight: 1, b: 0.5},
	fieldServer:      {weight: 0, b: 0.75},
	fieldParams:      {weight: 0.3, b: 0.75},
	fieldKeys:        {weight: 0.5, b: 0.75},
	fieldBody:        {weight: 0.5, b: 0.5},
}

const (
	nodmixK1              = 1.6
	nodmixExpansionWeight = 0.5 // expansions and synonyms, against 1 for the query's words
	nodmixJoinWeight      = 0.5 // adjacent words joined
	nodmixOOVWeight       = 0.5 // parts and prefix matches of words the corpus lacks
	nodmixMinPart         = 3   // shortest compound part, in bytes
	nodmixMinPrefix       = 4   // shortest shared prefix, in bytes
	nodmixMaxPrefixWords  = 5   // a prefix shared by more words is too vague to use
)

func newNodmixAnalyzer() *nodmixAnalyzer { return &nodmixAnalyzer{} }

func (*nodmixAnalyzer) k1() float64         { return nodmixK1 }
func (*nodmixAnalyzer) fields() []fieldSpec { return nodmixFields[:] }
func (*nodmixAnalyzer) classic() bool       { return false }
func (*nodmixAnalyzer) tailMatch() bool     { return true }
func (*nodmixAnalyzer) literalTier() bool   { return false }

func (a *nodmixAnalyzer) prepare(docs []RankDoc, fresh int) {
	a.joins.init(4 * fresh) // about four distinct adjacent pairs a document in large catalogs
	if a.words.slots == nil {
		a.words.init(len(docs) / 4)
		a.short.init(3 * len(docs))
	}
	a.docWords = make([][]int32, 0, len(docs))
	if a.list == nil { // a first build: about three new words a document in large catalogs
		a.list = make([]*wordInfo, 0, 3*len(docs))
		a.hot = make([]wordHot, 0, 3*len(docs))
		a.tids = make([]int32, 0, 4*len(docs))
	}
	a.wordArena = nil
	a.seen = make([]int32, len(a.list), cap(a.list))
}

// successor shares the analysis of every word seen so far (wordInfos are immutable) with
// the analyzer of an update; the cache map is copied, since this one's ranker may be
// searched concurrently.
func (a *nodmixAnalyzer) successor() analyzer {
	return &nodmixAnalyzer{words: a.words.clone(), short: a.short.clone(), list: slices.Clip(a.list),
		hot: slices.Clip(a.hot), tids: slices.Clip(a.tids), pred: a}
}

func (a *nodmixAnalyzer) carry(prev analyzer, doc int) {
	p := prev.(*nodmixAnalyzer)
	a.docWords = append(a.docWords, p.docWords[doc]) // read-only: shared
}

// freeze ends the build: the word cache becomes read-only, and the corpus vocabulary
// that query words are checked against is taken from it.
func (a *nodmixAnalyzer) freeze() {
	a.frozen = true
	a.sink = termSink{}
	a.joins, a.seen, a.wordArena = pairTable{}, nil, nil
	a.infos, a.strs, a.bytes = nil, nil, strArena{}
	a.used = make([]bool, len(a.list))
	if a.vocabDone != nil { // a parallel first build, which makes the vocabulary itself
		<-a.vocabDone
		a.vocabDone = nil
		for id := range a.used {
			a.used[id] = true
		}
		return
	}
	for _, ids := range a.docWords {
		for _, id := range ids {
			a.used[id] = true
		}
	}
	pred := a.pred
	a.pred = nil // keep no chain of old analyzers alive
	if pred != nil && pred.sameVocab(a.used, a.list) {
		a.vocab, a.sorted = pred.vocab, pred.sorted // read-only: safe to share
		return
	}
	a.vocab = newVocabSet(len(a.list))
	for id, info := range a.list {
		if !a.used[id] {
			continue // a word of documents an update removed
		}
		for _, w := range info.parts {
			if vocabPart(w) {
				a.vocab.add(w)
			}
		}
	}
	a.sorted = a.vocab.sorted()
}

// vocabPart reports whether a word part belongs in the vocabulary that query words
// are checked against.
func vocabPart(w string) bool {
	return len(w) >= nodmixMinPart && strings.IndexByte(w, '_') < 0
}

// sameVocab reports whether the words used (by id in list, of which p's list is a
// prefix) give p's frozen vocabulary: every part of a word that came into use is in
// it already, and every part of a word that went out of use still comes from a word
// in use. An update that changes a few tools mostly keeps the vocabulary, and this
// check costs far less than building it again.
func (p *nodmixAnalyzer) sameVocab(used []bool, list []*wordInfo) bool {
	var gone map[string]bool
	for id, now := range used {
		was := id < len(p.used) && p.used[id]
		if now == was {
			continue
		}
		for _, w := range list[id].parts {
			switch {
			case !vocabPart(w):
			case now && !p.vocab.has(w):
				return false
			case !now:
				if gone == nil {
					gone = map[string]bool{}
				}
				gone[w] = true
			}
		}
	}
	for id := 0; id < len(used) && len(gone) > 0; id++ {
		if used[id] {
			for _, w := range list[id].parts {
				delete(gone, w)
			}
		}
	}
	return len(gone) == 0
}

// word analyzes a raw word, from the cache when it can; a word the cache lacks is
// analyzed anew, and not cached: the build caches words as docTermIDs meets them.
func (a *nodmixAnalyzer) word(raw string, t *termSink) *wordInfo {
	if info := a.cached(raw); info != nil {
		return info
	}
	parts := splitWords(nil, raw, &t.buf)
	info := &wordInfo{id: -1, raw: raw, lower: parts[0], stop: isNodmixStopWord(parts[0]), parts: parts}
	for _, w := range parts {
		if !isNodmixStopWord(w) {
			info.terms = appendStemVariants(info.terms, w)
		}
	}
	return info
}

func (a *nodmixAnalyzer) docTerms(d *RankDoc, emit func(int, string, float64)) {
	t := &a.sink
	add := func(f int, text string) {
		if text == "" || nodmixFields[f].weight == 0 {
			return
		}
		t.terms = t.terms[:0]
		a.fieldTerms(t, text)
		for _, term := range t.terms {
			emit(f, term.term, term.weight)
		}
	}
	add(fieldName, ownName(d))
	add(fieldID, d.ID)
	if d.Label != d.Name {
		add(fieldLabel, d.Label)
	}
	lead, body := splitLead(d.Description)
	add(fieldDescription, lead)
	add(fieldBody, body)
	add(fieldServer, d.Server)
	add(fieldParams, d.ParamText)
	for _, k := range d.SchemaKeys {
		add(fieldKeys, k)
	}
}

// ownName is the name a tool has of its own: ToolName when set, else the part of the
// name after its last "__" (server__create_issue: create_issue), else the name. The
// server prefix is left out: every tool of the server shares it, and it would make the
// same tool rank differently under mcp__github__create_issue and create_issue.
func ownName(d *RankDoc) string {
	if d.ToolName != "" {
		return d.ToolName
	}
	if k := strings.LastIndex(d.Name, "__"); k >= 0 && k+2 < len(d.Name) {
		return d.Name[k+2:]
	}
	return d.Name
}

// termSink collects weighted terms in order, with scratch buffers for the splitters.
type termSink struct {
	terms []weightedTerm
	buf   []rune
	raws  []string
	parts []string // a new word's parts, while building
	stems []string // and their stems
	ids   []int32  // and the stems' term ids
}

func (t *termSink) add(term string, w float64) {
	t.terms = append(t.terms, weightedTerm{term: term, weight: w})
}

// fieldTerms emits the terms of one text: every word and case part that is not a stop
// word, stemmed, at weight 1, and every pair of adjacent words joined at the join weight.
func (a *nodmixAnalyzer) fieldTerms(t *termSink, text string) {
	t.raws = rawWords(t.raws[:0], text)
	prev := ""
	for _, raw := range t.raws {
		info := a.word(raw, t)
		for _, term := range info.terms {
			t.add(term, 1)
		}
		if info.stop {
			prev = ""
			continue
		}
		if prev != "" {
			t.add(stem(prev+info.lower), nodmixJoinWeight)
		}
		prev = info.lower
	}
}

// rawWords splits text into the reference's raw words (runs of letters, numbers and
// underscores), keeping their case for the part splitter.
func rawWords(dst []string, text string) []string {
	// ASCII runs are split by two tight loops, over separators and over word bytes; the
	// first byte that is not ASCII hands the rest of the text to the rune loop, from the
	// start of the word it is in.
	for i := 0; i < len(text); {
		for i < len(text) && byteClass[text[i]] == classSep {
			i++
		}
		start := i
		for i < len(text) && byteClass[text[i]] == classWord {
			i++
		}
		if i < len(text) && byteClass[text[i]] == classMulti {
			return rawWordsRunes(dst, text, start)
		}
		if i > start {
			dst = append(dst, text[start:i])
		}
	}
	return dst
}

// Byte classes for rawWords.
const (
	classSep   = iota // an ASCII byte that is not a word byte
	classWord         // an ASCII byte isWordRune accepts
	classMulti        // a byte of a multi-byte rune
)

var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = classMulti
		case isWordRune(rune(c)):
			t[c] = classWord
		}
	}
	return t
}()

// rawWordsRunes is rawWords over text[from:], where from is not inside a word.
func rawWordsRunes(dst []string, text string, from int) []string {
	start := -1
	for i, r := range text[from:] {
		i += from
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			dst = append(dst, text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		dst = append(dst, text[start:])
	}
	return dst
}

func (a *nodmixAnalyzer) queryTerms(query string) []weightedTerm {
	var t termSink
	a.fieldTerms(&t, query)
	terms := termSet{terms: make([]weightedTerm, 0, len(t.terms)+8)}
	set := func(term string, weight float64) { terms.set(term, weight, true) }
	for _, wt := range t.terms {
		set(wt.term, wt.weight)
	}
	triggers := map[string]bool{}
	for _, raw := range t.raws { // fieldTerms split the query into t.raws
		info := a.word(raw, &t)
		for _, w := range info.parts {
			if !isNodmixStopWord(w) {
				triggers[normalizeTrigger(w)] = true
				triggers[stem(w)] = true
			}
		}
		a.unknownWordTerms(info.lower, set)
	}
	for _, g := range nodmixExpansions {
		if slices.ContainsFunc(g.triggers, func(tr string) bool { return triggers[tr] }) {
			for _, add := range g.add {
				set(add, nodmixExpansionWeight)
			}
		}
	}
	return terms.terms
}

// unknownWordTerms gives a query word the corpus does not use a second chance: its
// split into corpus words (smartwatch: smart, watch) and the few corpus words that
// share its longest prefix of at least four letters (financial: finance).
func (a *nodmixAnalyzer) unknownWordTerms(w string, set func(string, float64)) {
	if len(w) < 5 || a.vocab.has(w) || isNodmixStopWord(w) || !isASCII(w) || strings.Contains(w, "_") {
		return
	}
	for _, p := range a.splitCompound(w) {
		set(stem(p), nodmixOOVWeight)
	}
	for l := len(w) - 1; l >= nodmixMinPrefix; l-- {
		prefix := w[:l]
		lo, _ := slices.BinarySearch(a.sorted, prefix)
		hi := lo
		for hi < len(a.sorted) && hi-lo <= nodmixMaxPrefixWords && strings.HasPrefix(a.sorted[hi], prefix) {
			hi++
		}
		if hi == lo {
			continue
		}
		if hi-lo <= nodmixMaxPrefixWords {
			for _, v := range a.sorted[lo:hi] {
				set(stem(v), nodmixOOVWeight)
			}
		}
		return
	}
}

// splitCompound splits a lowercase word into two or more corpus words of at least
// three bytes, preferring the fewest parts; nil when there is no such split.
func (a *nodmixAnalyzer) splitCompound(w string) []string {
	n := len(w)
	if n < 2*nodmixMinPart || n > 40 {
		return nil
	}
	// best[i] is the fewest parts covering w[:i] (0: none), from[i] where the last starts.
	var best, from [41]int
	for i := nodmixMinPart; i <= n; i++ {
		for j := 0; j+nodmixMinPart <= i; j++ {
			if (j > 0 && best[j] == 0) || (j == 0 && i == n) || !a.vocab.has(w[j:i]) {
				continue
			}
			if c := best[j] + 1; best[i] == 0 || c < best[i] {
				best[i], from[i] = c, j
			}
		}
	}
	if best[n] < 2 {
		return nil
	}
	parts := make([]string, best[n])
	for i, k := n, best[n]-1; i > 0; i, k = from[i], k-1 {
		parts[k] = w[from[i]:i]
	}
	return parts
}
