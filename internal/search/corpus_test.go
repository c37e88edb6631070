package search

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCorpusWorkersAgree: a corpus built on 1, 2 or 4 goroutines, fresh or as an update
// of an older corpus, is the same corpus, down to its term ids.
func TestCorpusWorkersAgree(t *testing.T) {
	docs := workerDocs(t, true)
	old := (&Corpus{}).update(docs[:len(docs)/3], 1)
	changed := slices.Clone(docs)
	for i := 0; i < len(changed); i += 7 {
		changed[i].Summary += " changed"
	}
	want := (&Corpus{}).update(docs, 1)
	wantUpdate := old.update(changed, 1)
	for _, procs := range []int{2, 3, 4} {
		sameCorpus(t, "fresh on "+strconv.Itoa(procs), want, (&Corpus{}).update(docs, procs))
		sameCorpus(t, "update on "+strconv.Itoa(procs), wantUpdate, old.update(changed, procs))
	}
	// An update is the corpus a fresh build gives, ids aside, which follow the old corpus.
	fresh := (&Corpus{}).update(changed, 1)
	for i := range changed {
		if !slices.Equal(fresh.DocTerms(i), wantUpdate.DocTerms(i)) || fresh.DocLen(i) != wantUpdate.DocLen(i) {
			t.Fatalf("doc %d differs between a fresh build and an update", i)
		}
	}
}

func sameCorpus(t *testing.T, what string, want, got *Corpus) {
	t.Helper()
	if !slices.Equal(want.dict.keys, got.dict.keys) || !slices.Equal(want.dict.longs, got.dict.longs) {
		t.Fatalf("%s: the dictionaries differ", what)
	}
	if !slices.Equal(want.start, got.start) || !slices.Equal(want.terms, got.terms) || !slices.Equal(want.lens, got.lens) {
		t.Fatalf("%s: the documents' terms differ", what)
	}
	for _, key := range want.dict.keys {
		if isLong(key) {
			continue
		}
		a, _ := want.dict.find(key)
		b, ok := got.dict.find(key)
		if !ok || a != b {
			t.Fatalf("%s: key %x has id %d, want %d", what, key, b, a)
		}
	}
}

// TestCorpusUnchanged: after documents were added, removed, changed and moved, every new
// document is paired with an old one of the same content exactly when there is one.
func TestCorpusUnchanged(t *testing.T) {
	base := seedDocs(readTools(t, sealtoolsTools))[:600]
	old := NewCorpus(base[:500])
	var docs []Doc
	for i, d := range base {
		switch {
		case i%50 == 7: // removed
			continue
		case i%50 == 9:
			d.Summary += " changed"
		}
		docs = append(docs, d)
		if i%100 == 3 {
			docs = append(docs, Doc{Name: "added" + strconv.Itoa(i)})
		}
	}
	docs[10], docs[400] = docs[400], docs[10] // moved
	reuse := old.unchanged(docs)
	for i := range docs {
		want := false
		for j := range old.docs {
			want = want || sameDoc(&old.docs[j], &docs[i])
		}
		if j := reuse[i]; (j >= 0) != want || j >= 0 && !sameDoc(&old.docs[j], &docs[i]) {
			t.Fatalf("doc %d (%s) paired with %d; an old document with its content: %v", i, docs[i].Name, j, want)
		}
	}
}

// TestCorpusDenseChunks: chunks with many more terms than their text suggests, which
// outgrow the room estimated for them, give the corpus one goroutine builds, whichever
// chunk it is.
func TestCorpusDenseChunks(t *testing.T) {
	doc := func(i int, dense bool) Doc {
		d := Doc{Name: "tool" + strconv.Itoa(i), Summary: "a tool that does one thing well"}
		if dense {
			var words []byte
			for k := range 40 {
				words = strconv.AppendInt(append(words, " x"...), int64(k), 36)
			}
			d.Summary = string(words)
		}
		return d
	}
	n := 2 * minDocsPerWorker
	for _, denseFrom := range []int{0, n / 2, n / 4} {
		docs := make([]Doc, n)
		for i := range docs {
			docs[i] = doc(i, i >= denseFrom && i < denseFrom+n/2)
		}
		want := (&Corpus{}).update(docs, 1)
		for _, procs := range []int{2, 4} {
			sameCorpus(t, "dense from "+strconv.Itoa(denseFrom)+" on "+strconv.Itoa(procs), want, (&Corpus{}).update(docs, procs))
		}
	}
}

// TestCorpusBuilderGrows: a builder whose dictionary starts at its smallest, and so
// grows its table in the middle of documents, gives the terms of a full-sized one.
func TestCorpusBuilderGrows(t *testing.T) {
	docs := seedDocs(readTools(t, sealtoolsTools))
	which := make([]int, len(docs))
	for i := range which {
		which[i] = i
	}
	want := (&Corpus{}).update(docs, 1)
	b := &corpusBuilder{dict: newTermDict(0)}
	b.build(docs, which)
	if len(b.dict.slots) <= minDictSlots {
		t.Fatalf("the table never grew: %d slots", len(b.dict.slots))
	}
	if !slices.Equal(want.dict.keys, b.dict.keys) {
		t.Fatal("the dictionaries differ")
	}
	if !slices.Equal(want.terms, b.terms) || !slices.Equal(want.lens, b.lens) {
		t.Fatal("the documents' terms differ")
	}
	for i := range docs {
		if want.start[i+1] != b.ends[i+1] {
			t.Fatalf("document %d ends at %d, want %d", i, b.ends[i+1], want.start[i+1])
		}
	}
}

// TestUpdateCacheGrows: an update of a small corpus with many new documents, whose
// builder's cache of terms starts small and grows many times, gives every document the
// terms a fresh build does.
func TestUpdateCacheGrows(t *testing.T) {
	docs := seedDocs(readTools(t, sealtoolsTools))
	old := (&Corpus{}).update(docs[:3], 1)
	got := old.update(docs, 1)
	want := (&Corpus{}).update(docs, 1)
	for i := range docs {
		if !slices.Equal(want.DocTerms(i), got.DocTerms(i)) || want.DocLen(i) != got.DocLen(i) {
			t.Fatalf("doc %d differs between a fresh build and an update", i)
		}
	}
}

// TestBackwardBuilderForwards: a builder that takes every document of a meeting from the
// back, put in document order, has the documents and the dictionary of one that goes
// forwards, which is what assembling a fresh corpus relies on when a chunk outgrew its room.
func TestBackwardBuilderForwards(t *testing.T) {
	docs := seedDocs(readTools(t, sealtoolsTools))[:700]
	docs = append(docs, Doc{Name: "internationalization", Summary: "counterrevolutionaries internationalization"},
		Doc{Name: "x", Summary: "counterrevolutionaries electroencephalographic"})
	want := &corpusBuilder{dict: newTermDict(0)}
	want.build(docs, nil)
	for _, back := range []bool{false, true} {
		b := &corpusBuilder{dict: newTermDict(0), meet: &meeting{size: len(docs), lo: 0, hi: len(docs)}, backward: back}
		b.buildMet(docs)
		if back {
			b.forwards()
		}
		if len(want.dict.longs) < 3 {
			t.Fatalf("%d long terms, want at least 3", len(want.dict.longs))
		}
		if !slices.Equal(want.dict.keys, b.dict.keys) || !slices.Equal(want.dict.longs, b.dict.longs) {
			t.Fatalf("backward %v: the dictionaries differ", back)
		}
		if !slices.Equal(want.terms, b.terms) || !slices.Equal(want.lens, b.lens) || !slices.Equal(want.ends, b.ends) {
			t.Fatalf("backward %v: the documents' terms differ", back)
		}
	}
}

// TestMeetingSplitsAgree: wherever the two builders of a meeting meet, the front one's
// documents and the back one's, put in document order and merged after, are the documents
// and the dictionary of one builder that went through all of them.
func TestMeetingSplitsAgree(t *testing.T) {
	docs := seedDocs(readTools(t, sealtoolsTools))[:900]
	want := &corpusBuilder{dict: newTermDict(0)}
	want.build(docs, nil)
	for _, split := range []int{0, 1, meetBatch - 1, meetBatch, meetBatch + 1, 450, len(docs) - 1, len(docs)} {
		front := &corpusBuilder{dict: newTermDict(0), meet: &meeting{size: split, lo: 0, hi: split}}
		back := &corpusBuilder{dict: newTermDict(0), meet: &meeting{size: len(docs) - split, lo: split, hi: len(docs)}, backward: true}
		for _, b := range []*corpusBuilder{front, back} {
			b.terms = make([]docTerm, 0, 1024)
			b.lens = make([]uint32, 0, len(docs))
			b.buildMet(docs)
		}
		back.forwards()
		remap := front.dict.merge(back.dict)
		terms := slices.Clone(front.terms)
		for _, tm := range back.terms {
			terms = append(terms, docTerm{id: remap[tm.id], freq: tm.freq})
		}
		if !slices.Equal(want.dict.keys, front.dict.keys) || !slices.Equal(want.dict.longs, front.dict.longs) {
			t.Fatalf("split at %d: the dictionaries differ", split)
		}
		if !slices.Equal(want.terms, terms) || !slices.Equal(want.lens, append(front.lens, back.lens...)) {
			t.Fatalf("split at %d: the documents' terms differ", split)
		}
	}
}

// TestCorpusBuilderGrowsInDocument: the table grows while a document is built, between
// occurrences of its terms, and the document keeps one entry a term.
func TestCorpusBuilderGrowsInDocument(t *testing.T) {
	var words []string
	for i := range 3 * minDictSlots {
		words = append(words, "w"+strconv.Itoa(i))
	}
	text := strings.Join(words, " ")
	docs := []Doc{{Summary: text + " " + text}}
	b := &corpusBuilder{dict: newTermDict(0)}
	b.build(docs, []int{0})
	if len(b.terms) != len(words) || b.lens[0] != uint32(4*len(words)) {
		t.Fatalf("%d terms of length %d, want %d of %d", len(b.terms), b.lens[0], len(words), 4*len(words))
	}
	for k, dt := range b.terms {
		if got := b.dict.term(dt.id); got != words[k] || dt.freq != 2*weightSummary {
			t.Fatalf("term %d is %q×%d, want %q×%d", k, got, dt.freq, words[k], 2*weightSummary)
		}
	}
}

// TestCutChunks: the chunks cover todo in order, and each region is estimateTerms's room
// for its chunk, however many chunks and documents; a nil todo is every document.
func TestCutChunks(t *testing.T) {
	docs := seedDocs(readTools(t, sealtoolsTools))
	for _, n := range []int{0, 1, 3, 100, len(docs)} {
		todo := make([]int, n)
		for k := range todo {
			todo[k] = (k * 7) % len(docs)
		}
		for workers := 1; workers <= 4; workers++ {
			cut, regions := cutChunks(docs, todo, n, workers)
			identity := make([]int, n)
			for k := range identity {
				identity[k] = k
			}
			cutAll, regionsAll := cutChunks(docs[:n], nil, n, workers)
			cutIdentity, regionsIdentity := cutChunks(docs[:n], identity, n, workers)
			if !slices.Equal(cutAll, cutIdentity) || !slices.Equal(regionsAll, regionsIdentity) {
				t.Fatalf("%d docs on %d: every document cuts at %v, %v; listed, at %v, %v", n, workers, cutAll, regionsAll, cutIdentity, regionsIdentity)
			}
			if cut[0] != 0 || cut[workers] != n || regions[0] != 0 {
				t.Fatalf("%d docs on %d: cut %v, regions %v", n, workers, cut, regions)
			}
			for w := range workers {
				if cut[w] > cut[w+1] {
					t.Fatalf("%d docs on %d: cut %v goes back", n, workers, cut)
				}
				if got, want := regions[w+1]-regions[w], estimateTerms(docs, todo[cut[w]:cut[w+1]]); got != want {
					t.Fatalf("%d docs on %d: region %d holds %d, want %d", n, workers, w, got, want)
				}
			}
		}
	}
}

// TestCorpusOutgrowsEstimate: documents with more terms than estimateTerms leaves room
// for build the same corpus on one goroutine or several.
func TestCorpusOutgrowsEstimate(t *testing.T) {
	summary := strings.Join(strings.Split("abcdefghijklmnopqrstuvwxyz0123456789", ""), " ")
	docs := make([]Doc, 3*minDocsPerWorker)
	for i := range docs {
		docs[i] = Doc{Name: "t" + strconv.Itoa(i), Summary: summary}
	}
	which := make([]int, len(docs))
	for i := range which {
		which[i] = i
	}
	if got, est := 37*len(docs), estimateTerms(docs, which); got <= est {
		t.Fatalf("%d terms fit the estimate of %d", got, est)
	}
	want := (&Corpus{}).update(docs, 1)
	if n := len(want.DocTerms(len(docs) - 1)); n != 37 {
		t.Fatalf("the last document has %d terms, want 37", n)
	}
	for _, procs := range []int{2, 3} {
		sameCorpus(t, "on "+strconv.Itoa(procs), want, (&Corpus{}).update(docs, procs))
	}
}
