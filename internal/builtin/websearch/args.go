package websearch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// ParseArgs validates web_search arguments ({query, count?}) and returns the query. The errors are
// meant for the model: they name the argument and the rule.
func ParseArgs(raw json.RawMessage) (Query, error) {
	var fields map[string]json.RawMessage
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		trimmed = []byte("{}")
	}
	if err := json.Unmarshal(trimmed, &fields); err != nil || fields == nil {
		return Query{}, errors.New("web_search: arguments must be a JSON object like {\"query\": \"...\"}.")
	}
	var unknown []string
	for k := range fields {
		if k != "query" && k != "count" {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return Query{}, fmt.Errorf("web_search: unknown argument %q (allowed: query, count).", unknown[0])
	}
	var q Query
	if v, ok := fields["query"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &q.Query); err != nil {
			return Query{}, errors.New("web_search: query must be a string.")
		}
	}
	q.Query = strings.TrimSpace(q.Query)
	if q.Query == "" {
		return Query{}, errors.New("web_search: query is required (a non-empty string).")
	}
	if v, ok := fields["count"]; ok && !isNull(v) {
		n, ok := intInRange(v, 1, MaxCount)
		if !ok {
			return Query{}, fmt.Errorf("web_search: count must be an integer from 1 to %d, got %s.", MaxCount, describe(v))
		}
		q.Count = n
	}
	return q, nil
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// intInRange reads a JSON number that is a whole number in [lo, hi]. 5.0 is accepted; 5.5, "5" and
// 1e300 are not. (JSON has no NaN or infinity, and a number beyond float64 fails to decode.)
func intInRange(v json.RawMessage, lo, hi int) (int, bool) {
	var f float64
	if json.Unmarshal(v, &f) != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, false
	}
	return int(f), true
}

// describe renders a JSON value for an error message, shortened so that a huge argument does not
// flood the model's context.
func describe(v json.RawMessage) string {
	s := string(bytes.TrimSpace(v))
	n := 0
	for i := range s {
		if n == 40 {
			return s[:i] + "..."
		}
		n++
	}
	return s
}
