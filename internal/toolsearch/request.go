package toolsearch

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nodmix/nodmix/internal/catalog"
)

// BatchBudget bounds a batched tool_search request and its response. The reference spreads these
// limits over several places; nodmix keeps them in one value.
type BatchBudget struct {
	MaxQueries        int // entries in one request, the scalar query included
	MaxTotalResults   int // sum of the per-query limits (an omitted limit counts as the default)
	MaxQueryBytes     int // UTF-8 bytes of the serialized queries
	MaxQueryChars     int // characters (grapheme clusters) of one query
	MaxResponseChars  int // UTF-16 units of the pretty-printed response
	MaxCandidateChars int // serialized size of one candidate's fields
	DescriptionScan   int // characters of a description read before collapsing white space
	DescriptionChars  int // characters a candidate's description is cut to
}

// DefaultBatchBudget returns the reference limits.
func DefaultBatchBudget() BatchBudget {
	return BatchBudget{
		MaxQueries:        16,
		MaxTotalResults:   50,
		MaxQueryBytes:     512,
		MaxQueryChars:     512,
		MaxResponseChars:  4000,
		MaxCandidateChars: 2000,
		DescriptionScan:   720,
		DescriptionChars:  180,
	}
}

// batchQuery is one entry of a batch; limit 0 means the default.
type batchQuery struct {
	query string
	limit int
}

// searchRequest is a parsed tool_search call: either one scalar query or a batch.
type searchRequest struct {
	scalar string
	limit  int
	batch  []batchQuery
}

func badRequest(format string, args ...any) error {
	return inputErr(ErrBadRequest, fmt.Sprintf(format, args...))
}

// present returns v unless it is absent or JSON null, as JavaScript's ?? sees it.
func present(v *value) *value {
	if v.isNull() {
		return nil
	}
	return v
}

// readLimit reads an optional positive integer limit; 0 means omitted.
func readLimit(v *value, name string) (int, error) {
	v = present(v)
	if v == nil {
		return 0, nil
	}
	f, ok := v.float()
	if !ok || !v.isInteger() || f < 1 {
		return 0, badRequest("%s must be a positive integer.", name)
	}
	if f > 1<<31 {
		return 1 << 31, nil
	}
	return int(f), nil
}

// parseSearchRequest reads tool_search's parameters (reference §2.6.2). Validation is atomic:
// nothing runs unless the whole request is valid.
func (r *Runtime) parseSearchRequest(p *value, b BatchBudget) (searchRequest, error) {
	query, queries := present(p.get("query")), present(p.get("queries"))
	if query == nil && queries == nil {
		return searchRequest{}, badRequest("provide query or queries.")
	}
	if queries != nil && queries.kind != kArray {
		return searchRequest{}, badRequest("queries must be a non-empty array.")
	}
	if query != nil && query.kind != kString {
		return searchRequest{}, badRequest("query must be a string.")
	}
	var scalar string
	if query != nil {
		scalar = query.str
	}
	limitV := present(p.get("limit"))
	options := present(p.get("options"))
	if limitV == nil && options.isObject() {
		limitV = present(options.get("limit"))
	}

	var req searchRequest
	if queries != nil {
		for i, q := range queries.arr {
			if !q.isObject() {
				return req, badRequest("queries[%d] must be an object.", i)
			}
			qs := q.get("query")
			if qs == nil || qs.kind != kString || strings.TrimSpace(qs.str) == "" {
				return req, badRequest("queries[%d].query must be a non-empty string.", i)
			}
			if graphemes(qs.str) > b.MaxQueryChars {
				return req, badRequest("queries[%d].query must not exceed %d characters.", i, b.MaxQueryChars)
			}
			l, err := readLimit(q.get("limit"), fmt.Sprintf("queries[%d].limit", i))
			if err != nil {
				return req, err
			}
			req.batch = append(req.batch, batchQuery{query: strings.TrimSpace(qs.str), limit: l})
		}
	}
	blank := strings.TrimSpace(scalar) == ""
	if len(req.batch) == 0 {
		if queries != nil && blank {
			return req, badRequest("queries must be a non-empty array.")
		}
		l, err := readLimit(limitV, "limit")
		if err != nil {
			return req, err
		}
		req.scalar, req.limit = scalar, l
		return req, nil
	}
	if blank && (limitV != nil || options != nil) {
		return req, badRequest("set limit on each batch query, not on the batch request.")
	}
	if !blank {
		l, err := readLimit(limitV, "limit")
		if err != nil {
			return req, err
		}
		req.batch = append([]batchQuery{{query: strings.TrimSpace(scalar), limit: l}}, req.batch...)
	}
	if len(req.batch) > b.MaxQueries {
		return req, badRequest("queries may contain at most %d entries.", b.MaxQueries)
	}
	total, size := 0, 2 // "[" and "]"
	for i, q := range req.batch {
		total += r.resolveLimit(q.limit)
		if i > 0 {
			size++ // ","
		}
		size += len(`{"query":}`) + len(appendJSString(nil, q.query))
		if q.limit > 0 {
			size += len(`,"limit":`) + len(fmt.Sprint(q.limit))
		}
	}
	if total > b.MaxTotalResults {
		return req, badRequest("batch queries resolve to %d results, but may request at most %d in total. An omitted limit counts as %d; set smaller per-query limits and retry.",
			total, b.MaxTotalResults, r.opts.SearchDefaultLimit)
	}
	if size > b.MaxQueryBytes {
		return req, badRequest("serialized batch query text may use at most %d UTF-8 bytes.", b.MaxQueryBytes)
	}
	return req, nil
}

// candidate trims a descriptor for a batch result (reference §2.6.4): the description is cut to a
// short line; id, source, name and input are kept whole, or the candidate is dropped when they
// alone are over budget; the other fields are kept while the budget lasts.
func candidate(b BatchBudget, d Descriptor) (Descriptor, bool) {
	desc := collapseSpace(catalog.PrefixUTF16(d.Description, b.DescriptionScan))
	if utf16Len(desc) > b.DescriptionChars {
		desc = catalog.PrefixUTF16(desc, b.DescriptionChars-3) + "..."
	}
	out := Descriptor{ID: d.ID, Source: d.Source, Name: d.Name, Input: d.Input}
	size := fieldSize("id", d.ID) + fieldSize("source", d.Source) + fieldSize("name", d.Name) + fieldSize("input", d.Input)
	if size > b.MaxCandidateChars {
		return Descriptor{}, false
	}
	keep := func(key string, v any) bool {
		n := fieldSize(key, v)
		if size+n > b.MaxCandidateChars {
			return false
		}
		size += n
		return true
	}
	if keep("description", desc) {
		out.Description = desc
	}
	if d.SourceName != "" && keep("sourceName", d.SourceName) {
		out.SourceName = d.SourceName
	}
	if d.Label != "" && keep("label", d.Label) {
		out.Label = d.Label
	}
	if d.MCP != nil && keep("mcp", d.MCP) {
		out.MCP = d.MCP
	}
	if d.Output != "" && keep("output", d.Output) {
		out.Output = d.Output
	}
	return out, true
}

// fieldSize is the serialized size of `"key":value`, in UTF-16 units.
func fieldSize(key string, v any) int {
	b, err := marshalJS(v, false)
	if err != nil {
		return 0
	}
	return utf16Len(key) + 3 + utf16Len(string(b))
}

// batchResponse is the result of a batched tool_search, in request order.
type batchResponse struct {
	Results   []batchGroup `json:"results"`
	Truncated bool         `json:"truncated,omitempty"`
}

type batchGroup struct {
	Query      string       `json:"query"`
	Candidates []Descriptor `json:"candidates"`
	Truncated  bool         `json:"truncated,omitempty"`
}

// Pretty-printed layout constants: the JSON.stringify(x, null, 2) text of a batchResponse is
// fixed text plus the candidates, so its size is kept up to date as candidates are dropped
// without serializing it again.
var (
	lenResultsKey    = len(`"results": `)
	lenQueryKey      = len(`"query": `)
	lenCandidatesKey = len(`"candidates": `)
	lenTruncated     = len(`"truncated": true`)
)

func indent(depth int) int { return 2 * depth }

// sizedGroup tracks the pretty size of one group.
type sizedGroup struct {
	g        *batchGroup
	querySz  int
	candSz   []int // pretty size of each candidate at its depth
	sumCand  int
	truncate bool
}

func (s *sizedGroup) size() int {
	n := len(s.candSz)
	arr := 2 // "[]"
	if n > 0 {
		arr = 2 + n*indent(4) + s.sumCand + (n-1)*2 + 1 + indent(3) + 1
	}
	size := 2 + indent(3) + lenQueryKey + s.querySz + 2 + indent(3) + lenCandidatesKey + arr + 1 + indent(2) + 1
	if s.truncate {
		size += 2 + indent(3) + lenTruncated
	}
	return size
}

func responseSize(groups []*sizedGroup, truncated bool) int {
	arr := 2
	if len(groups) > 0 {
		arr = 2 + 1 + indent(1) + 1 + (len(groups)-1)*2
		for _, g := range groups {
			arr += indent(2) + g.size()
		}
	}
	size := 2 + indent(1) + lenResultsKey + arr + 1 + 1
	if truncated {
		size += 2 + indent(1) + lenTruncated
	}
	return size
}

// prettySizeAt is the size of v pretty-printed as a value nested depth levels deep.
func prettySizeAt(v any, depth int) int {
	b, err := marshalJS(v, true)
	if err != nil {
		return 0
	}
	// Every line after the first gains the nesting indentation.
	return utf16Len(string(b)) + strings.Count(string(b), "\n")*indent(depth)
}

// shapeBatch builds the batch response and, while its pretty text is over budget, drops the last
// candidate of the largest group (ties: the group whose last candidate is longest, then the
// first), marking what was cut. Each group keeps a prefix of its ranking.
func shapeBatch(b BatchBudget, queries []batchQuery, hits [][]Descriptor) batchResponse {
	resp := batchResponse{Results: make([]batchGroup, len(queries))}
	groups := make([]*sizedGroup, len(queries))
	for i, q := range queries {
		g := &resp.Results[i]
		g.Query = q.query
		g.Candidates = []Descriptor{}
		sg := &sizedGroup{g: g, querySz: utf16Len(jsString(q.query))}
		for _, d := range hits[i] {
			c, ok := candidate(b, d)
			if !ok {
				continue
			}
			g.Candidates = append(g.Candidates, c)
			sz := prettySizeAt(c, 4)
			sg.candSz = append(sg.candSz, sz)
			sg.sumCand += sz
		}
		groups[i] = sg
	}
	for responseSize(groups, resp.Truncated) > b.MaxResponseChars {
		var pick *sizedGroup
		for _, g := range groups {
			n := len(g.candSz)
			if n == 0 {
				continue
			}
			if pick == nil || n > len(pick.candSz) ||
				(n == len(pick.candSz) && g.candSz[n-1] > pick.candSz[len(pick.candSz)-1]) {
				pick = g
			}
		}
		if pick == nil {
			break
		}
		last := len(pick.candSz) - 1
		pick.sumCand -= pick.candSz[last]
		pick.candSz = pick.candSz[:last]
		pick.g.Candidates = pick.g.Candidates[:last]
		pick.truncate, pick.g.Truncated = true, true
		resp.Truncated = true
	}
	return resp
}

// readID reads the target of tool_describe or tool_call: id, else toolId, else name.
func readID(p *value) (string, error) {
	v := present(p.get("id"))
	if v == nil {
		v = present(p.get("toolId"))
	}
	if v == nil {
		v = present(p.get("name"))
	}
	if v == nil || v.kind != kString || strings.TrimSpace(v.str) == "" {
		return "", badRequest("id must be a non-empty string.")
	}
	return strings.TrimSpace(v.str), nil
}

var selectorKeys = []string{"id", "toolId", "name"}

// liftDescribeArgs accepts {args: {id}} and {input: {id}} for tool_describe: some models wrap
// every call's parameters.
func liftDescribeArgs(p *value) *value {
	for _, k := range selectorKeys {
		if p.has(k) {
			return p
		}
	}
	nested := present(p.get("args"))
	if nested == nil {
		nested = present(p.get("input"))
	}
	if !nested.isObject() {
		return p
	}
	if _, err := readID(nested); err != nil {
		return p
	}
	return nested
}

// readCallArgs repairs the many shapes models give tool_call (reference §2.6.6): a nested args or
// input object is the input (dotted "args.x" keys merge under it); otherwise the top-level keys
// other than the wrapper and the selector are the input. A selector that names a catalog entry is
// used; two selectors naming different entries are ambiguous.
func (r *Runtime) readCallArgs(p *value) (string, json.RawMessage, error) {
	dotted := &value{kind: kObject}
	for _, m := range p.obj {
		if len(m.key) > 5 && strings.HasPrefix(m.key, "args.") {
			dotted.set(m.key[5:], m.val)
		}
	}
	nested := present(p.get("args"))
	if nested == nil {
		nested = present(p.get("input"))
	}
	if nested != nil && !(nested.isObject() && len(nested.obj) == 0) {
		id, err := readID(p)
		if err != nil {
			return "", nil, err
		}
		if !nested.isObject() {
			return id, nested.marshal(), nil
		}
		for _, m := range nested.obj {
			dotted.set(m.key, m.val)
		}
		return id, dotted.marshal(), nil
	}

	var matching []string
	matched := map[int]bool{}
	for _, k := range selectorKeys {
		v := p.get(k)
		if v == nil || v.kind != kString {
			continue
		}
		if m := r.ix.matches(v.str); len(m) > 0 {
			matching = append(matching, k)
			for _, i := range m {
				matched[i] = true
			}
		}
	}
	if len(matched) > 1 {
		return "", nil, inputErr(ErrAmbiguous, "Ambiguous tool selectors: pass the target tool id and nest target arguments under args.")
	}
	selector := ""
	if len(matching) > 0 {
		selector = matching[0]
	} else {
		for _, k := range selectorKeys {
			if present(p.get(k)) != nil {
				selector = k
				break
			}
		}
	}
	sel := p
	if selector != "" {
		sel = &value{kind: kObject, obj: []member{{selector, p.get(selector)}}}
	}
	id, err := readID(sel)
	if err != nil {
		return "", nil, err
	}
	// Drop the keys that select the tool; an unmatched id or name may be the tool's own argument.
	wrapper := map[string]bool{"args": true, "input": true}
	for _, k := range matching {
		wrapper[k] = true
	}
	if len(matching) == 0 {
		if selector == "" {
			selector = "id"
		}
		wrapper[selector] = true
	}
	for _, m := range p.obj {
		if wrapper[m.key] || (len(m.key) > 5 && strings.HasPrefix(m.key, "args.")) {
			continue
		}
		dotted.set(m.key, m.val)
	}
	return id, dotted.marshal(), nil
}
