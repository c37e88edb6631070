package search

import "slices"

// Update returns the ranker NewRanker would build over docs with r's options, reusing
// the analysis of every document equal to one r holds under the same id: when one
// server of a large catalog reconnects, only its tools are analyzed again. r is not
// changed and stays usable.
func (r *Ranker) Update(docs []RankDoc) *Ranker {
	reuse := make([]int32, len(docs))
	reused := 0
	for i := range docs {
		reuse[i] = -1
		for j := range r.exact.idDocs(docs[i].ID) {
			if sameRankDoc(&docs[i], &r.docs[j]) {
				reuse[i] = j
				reused++
				break
			}
		}
	}
	// Ids of terms no document uses any more stay in the table; past as many as are
	// used, a fresh build drops them.
	if reused == 0 || r.deadTerms > r.terms.len()-r.deadTerms {
		return NewRanker(docs, r.opts)
	}
	next := buildRanker(docs, r.an.successor(), r, reuse, 1)
	next.opts = r.opts
	return next
}

// sameRankDoc reports whether a and b have the same text in every field a ranker reads.
func sameRankDoc(a, b *RankDoc) bool {
	return a.ID == b.ID && a.Name == b.Name && a.ToolName == b.ToolName && a.Label == b.Label &&
		a.Description == b.Description && a.Server == b.Server && a.Source == b.Source &&
		a.ParamText == b.ParamText && slices.Equal(a.SchemaKeys, b.SchemaKeys)
}
