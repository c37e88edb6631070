package search

import (
	"maps"
	"slices"
)

// The word lists of nodmix's ranker. They are general English, never vendor or tool
// names: the ranker must work on catalogs and queries it has never seen.

// nodmixStopWords are the reference's stop words plus the rest of the common English
// function words: pronouns, auxiliaries, determiners, prepositions and contraction
// leftovers (don't → don, t).
var nodmixStopWords = setOf(append(slices.Collect(maps.Keys(refStopWords)),
	"am", "about", "above", "after", "again", "against", "all", "also", "any", "because",
	"been", "before", "being", "below", "between", "both", "could", "d", "did", "does",
	"doing", "don", "down", "during", "each", "few", "further", "having", "he", "her",
	"hers", "herself", "him", "himself", "his", "itself", "just", "ll", "m", "more",
	"most", "myself", "nor", "now", "o", "off", "once", "only", "other", "ours",
	"ourselves", "out", "over", "own", "re", "s", "same", "she", "should", "some",
	"such", "t", "than", "theirs", "themselves", "those", "through", "too", "under",
	"until", "ve", "very", "while", "whom", "would", "y", "yours", "yourself",
	"yourselves",
)...)

// maxStopWordLen is the length of the longest stop word ("yourselves", "themselves"), in
// bytes; TestMaxStopWordLen checks it.
const maxStopWordLen = 10

// isNodmixStopWord is nodmixStopWords[w]: a build asks it of every new word and part, and a
// probe of stopSlots by the word's packed bytes costs far less than a map lookup.
func isNodmixStopWord(w string) bool {
	return len(w) > 0 && len(w) <= maxStopWordLen && isStopKey(packStopWord(w, false))
}

// isStopKey reports whether key, a word of 1 to maxStopWordLen bytes packed as packStopWord
// packs it, is a stop word.
func isStopKey(key [2]uint64) bool {
	for i := stopHome(key); ; i = (i + 1) % len(stopSlots) {
		switch stopSlots[i] {
		case key:
			return true
		case [2]uint64{}:
			return false
		}
	}
}

// stopSlots is nodmixStopWords as an open-addressing set of packed words, a quarter full.
// The set is fixed, so its longest run of full slots is too: no text makes a probe longer.
var stopSlots = func() (t [512][2]uint64) {
	for w := range nodmixStopWords {
		k := packStopWord(w, false)
		i := stopHome(k)
		for t[i] != ([2]uint64{}) {
			i = (i + 1) % len(t)
		}
		t[i] = k
	}
	return t
}()

// packStopWord packs the bytes of a word of 1 to maxStopWordLen bytes and its length: never
// zero. With fold, ASCII capitals are packed as small letters.
func packStopWord(w string, fold bool) (k [2]uint64) {
	for i := 0; i < len(w); i++ {
		b := w[i]
		if fold && 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		k[i>>3] |= uint64(b) << (8 * (i & 7))
	}
	k[1] |= uint64(len(w)) << 56
	return k
}

func stopHome(k [2]uint64) int {
	return int((k[0]*0x9e3779b97f4a7c15 ^ k[1]*0xc2b2ae3d27d4eb4f) >> 55) // 9 bits: 512 slots
}

// nodmixExpansions are the reference's intent expansions followed by synonym groups:
// any word of a group (singular or stemmed) adds every word of the group.
var nodmixExpansions = append(append(append([]expansionGroup{}, refExpansions...),
	synonymGroups(generalVerbs)...), synonymGroups(generalNouns)...)

// generalVerbs are the actions tools are asked to perform, in the words people use.
var generalVerbs = [][]string{
	{"buy", "purchase", "shop", "shopping", "order"},
	{"find", "search", "locate", "discover", "lookup"},
	{"get", "fetch", "retrieve", "obtain", "download"},
	{"create", "make", "generate", "build", "produce"},
	{"delete", "remove", "erase"},
	{"update", "modify", "change", "edit"},
	{"show", "display", "view", "list"},
	{"send", "post", "share", "deliver"},
	{"calculate", "compute", "count", "calculator"},
	{"check", "verify", "validate", "inspect"},
	{"recommend", "suggest", "recommendation", "suggestion", "advice"},
	{"translate", "translation", "convert"},
	{"book", "reserve", "reservation", "booking"},
	{"write", "compose", "draft", "writing"},
	{"summarize", "summary", "summarise", "tldr"},
	{"learn", "study", "teach", "course", "lesson", "tutorial", "class"},
	{"analyze", "analyse", "analysis", "evaluate", "assess"},
	{"track", "monitor", "follow"},
	{"plan", "schedule", "organize"},
}

// generalNouns are common subjects of tool requests and their everyday synonyms.
var generalNouns = [][]string{
	{"image", "picture", "photo", "photograph", "pic"},
	{"video", "movie", "film", "clip"},
	{"music", "song", "track", "album", "playlist"},
	{"job", "career", "employment", "hiring", "vacancy"},
	{"travel", "trip", "vacation", "holiday", "tour", "tourism"},
	{"weather", "forecast", "temperature", "rain", "climate"},
	{"finance", "financial", "stock", "market", "investment", "invest", "trading"},
	{"house", "home", "apartment", "property", "housing", "estate"},
	{"rent", "rental", "lease", "renting"},
	{"price", "cost", "fee", "rate", "pricing"},
	{"product", "item", "goods", "merchandise"},
	{"law", "legal", "lawyer", "attorney"},
	{"doctor", "medical", "health", "symptom"},
	{"recipe", "cook", "cooking", "food", "meal", "dish"},
	{"email", "mail", "inbox"},
	{"map", "location", "direction", "navigation", "route"},
	{"news", "headline", "article"},
	{"paper", "research", "academic", "scholarly", "journal"},
	{"code", "programming", "repository", "developer"},
	{"company", "business", "firm", "startup"},
}

// synonymGroups turns word groups into expansion groups that fire on any member.
func synonymGroups(groups [][]string) []expansionGroup {
	out := make([]expansionGroup, 0, len(groups))
	for _, g := range groups {
		var e expansionGroup
		for _, w := range g {
			e.triggers = append(e.triggers, normalizeTrigger(w), stem(w))
			e.add = append(e.add, stem(w))
		}
		out = append(out, e)
	}
	return out
}
