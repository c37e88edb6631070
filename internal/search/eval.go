package search

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Query is one evaluation query: the tool ids in Gold are the ones that serve it.
type Query struct {
	QID   string   `json:"qid"`
	Query string   `json:"query"`
	Gold  []string `json:"gold"`
}

// Metrics summarises a ranker over a query set. Recall@k is the share of a query's gold
// ids found in its top k, NDCG@10 uses binary gains with the ideal DCG over
// min(|gold|, 10) hits, and MRR takes the first gold id within the top 10 (0 when none);
// each is averaged over the queries. QPS is queries per second of ranking time.
// BuildMS is the index build time, which Evaluate cannot see: the caller fills it in.
type Metrics struct {
	Recall1  float64 `json:"recall@1"`
	Recall5  float64 `json:"recall@5"`
	Recall10 float64 `json:"recall@10"`
	NDCG10   float64 `json:"ndcg@10"`
	MRR      float64 `json:"mrr"`
	Queries  int     `json:"queries"`
	QPS      float64 `json:"qps"`
	BuildMS  float64 `json:"build_ms"`
}

// evalDepth is the deepest rank any metric looks at.
const evalDepth = 10

// Evaluate runs rank for every query, asking for the top 10 ids, and scores the
// rankings. Repeated ids in a ranking count once, at their best rank; repeated gold ids
// count once. Queries without gold ids cannot be scored and are skipped.
func Evaluate(rank func(query string, k int) []string, queries []Query) Metrics {
	var m Metrics
	var elapsed time.Duration
	gold := map[string]bool{}
	seen := map[string]bool{}
	for _, q := range queries {
		clear(gold)
		for _, id := range q.Gold {
			gold[id] = true
		}
		if len(gold) == 0 {
			continue
		}
		start := time.Now()
		ranked := rank(q.Query, evalDepth)
		elapsed += time.Since(start)

		clear(seen)
		found, rank1, dcg := 0, 0, 0.0
		var hits1, hits5, hits10 int
		pos := 0
		for _, id := range ranked {
			if pos == evalDepth {
				break
			}
			if seen[id] {
				continue
			}
			seen[id] = true
			pos++
			if !gold[id] {
				continue
			}
			found++
			if rank1 == 0 {
				rank1 = pos
			}
			dcg += 1 / math.Log2(float64(pos)+1)
			if pos <= 1 {
				hits1++
			}
			if pos <= 5 {
				hits5++
			}
			hits10++
		}
		ideal := 0.0
		for i := 1; i <= min(len(gold), evalDepth); i++ {
			ideal += 1 / math.Log2(float64(i)+1)
		}
		n := float64(len(gold))
		m.Recall1 += float64(hits1) / n
		m.Recall5 += float64(hits5) / n
		m.Recall10 += float64(hits10) / n
		m.NDCG10 += dcg / ideal
		if rank1 > 0 {
			m.MRR += 1 / float64(rank1)
		}
		m.Queries++
	}
	if m.Queries == 0 {
		return m
	}
	n := float64(m.Queries)
	m.Recall1 /= n
	m.Recall5 /= n
	m.Recall10 /= n
	m.NDCG10 /= n
	m.MRR /= n
	if elapsed > 0 {
		m.QPS = n / elapsed.Seconds()
	}
	return m
}

// ReadQueries reads a query file: JSON Lines of {"qid", "query", "gold": [ids]}. Blank
// lines are skipped; anything else that is not a valid query is an error naming the
// line, the field and the rule.
func ReadQueries(r io.Reader) ([]Query, error) {
	br := bufio.NewReader(r)
	var out []Query
	qids := map[string]int{}
	for line := 1; ; line++ {
		raw, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read line %d: %w", line, err)
		}
		if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 {
			q, perr := parseQuery(trimmed)
			if perr != nil {
				return nil, fmt.Errorf("line %d: %w", line, perr)
			}
			if prev, dup := qids[q.QID]; dup {
				return nil, fmt.Errorf("line %d: qid: %q repeats line %d", line, q.QID, prev)
			}
			qids[q.QID] = line
			out = append(out, q)
		}
		if err != nil {
			return out, nil
		}
	}
}

func parseQuery(raw []byte) (Query, error) {
	var fields struct {
		QID   *string          `json:"qid"`
		Query *string          `json:"query"`
		Gold  *json.RawMessage `json:"gold"`
	}
	if raw[0] != '{' {
		return Query{}, errors.New("must be a JSON object")
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return Query{}, fmt.Errorf("%s: must be a %s", typeErr.Field, wantType(typeErr.Field))
		}
		return Query{}, fmt.Errorf("invalid JSON: %w", err)
	}
	switch {
	case fields.QID == nil || strings.TrimSpace(*fields.QID) == "":
		return Query{}, errors.New("qid: must be a non-empty string")
	case fields.Query == nil || strings.TrimSpace(*fields.Query) == "":
		return Query{}, errors.New("query: must be a non-empty string")
	case fields.Gold == nil:
		return Query{}, errors.New("gold: must be an array of tool ids")
	}
	var gold []string
	if err := json.Unmarshal(*fields.Gold, &gold); err != nil || gold == nil {
		return Query{}, errors.New("gold: must be an array of tool ids")
	}
	if len(gold) == 0 {
		return Query{}, errors.New("gold: must list at least one tool id")
	}
	for i, id := range gold {
		if id == "" {
			return Query{}, fmt.Errorf("gold[%d]: must be a non-empty string", i)
		}
	}
	return Query{QID: *fields.QID, Query: *fields.Query, Gold: gold}, nil
}

func wantType(field string) string {
	if field == "gold" {
		return "array of tool ids"
	}
	return "string"
}
