package tavily

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of the documented tool parameters and of the API.
const (
	maxQueryChars     = 399 // "Keep under 400 characters"
	defaultMaxResults = 5
	maxResultsLimit   = 20
	maxExtractURLs    = 20
	maxChunks         = 5
	maxIncludeDomains = 300
	maxExcludeDomains = 150
)

// The documented messages of tavily_extract, kept verbatim.
const (
	msgNoURLs       = "tavily_extract requires at least one URL."
	msgChunksNeedsQ = "tavily_extract requires query when chunks_per_source is set."
	toolSearch      = "tavily_search"
	toolExtract     = "tavily_extract"
)

// ErrInvalidArguments is matched (errors.Is) by every argument error; the call was refused before
// any request was sent.
var ErrInvalidArguments = errors.New("invalid arguments")

type argError struct{ msg string }

func (e *argError) Error() string        { return e.msg }
func (e *argError) Is(target error) bool { return target == ErrInvalidArguments }

func invalid(format string, a ...any) error { return &argError{msg: fmt.Sprintf(format, a...)} }

// searchArgs are validated tavily_search arguments (and, with only Query and MaxResults, web_search's).
type searchArgs struct {
	Query          string
	SearchDepth    string // "" | basic | advanced
	Topic          string // "" | general | news | finance
	MaxResults     int    // 1..20; 0 means the default
	IncludeAnswer  bool
	TimeRange      string // "" | day | week | month | year
	IncludeDomains []string
	ExcludeDomains []string
}

// extractArgs are validated tavily_extract arguments.
type extractArgs struct {
	URLs            []string
	Query           string
	ExtractDepth    string // "" | basic | advanced
	ChunksPerSource int    // 1..5; 0 means not set
	IncludeImages   bool
}

// parseSearchArgs validates tavily_search arguments. Every error is an ErrInvalidArguments whose
// text names the argument and the rule.
func parseSearchArgs(raw json.RawMessage) (searchArgs, error) {
	var a searchArgs
	r, err := newArgReader(toolSearch, raw, "query", "search_depth", "topic", "max_results",
		"include_answer", "time_range", "include_domains", "exclude_domains")
	if err != nil {
		return a, err
	}
	if a.Query, err = r.str("query"); err != nil {
		return a, err
	}
	if err := checkQuery(toolSearch, a.Query); err != nil {
		return a, err
	}
	if a.SearchDepth, err = r.enum("search_depth", "basic", "advanced"); err != nil {
		return a, err
	}
	if a.Topic, err = r.enum("topic", "general", "news", "finance"); err != nil {
		return a, err
	}
	if a.MaxResults, err = r.integer("max_results", 1, maxResultsLimit); err != nil {
		return a, err
	}
	if a.IncludeAnswer, err = r.boolean("include_answer"); err != nil {
		return a, err
	}
	if a.TimeRange, err = r.enum("time_range", "day", "week", "month", "year"); err != nil {
		return a, err
	}
	if a.IncludeDomains, err = r.domains("include_domains", maxIncludeDomains); err != nil {
		return a, err
	}
	if a.ExcludeDomains, err = r.domains("exclude_domains", maxExcludeDomains); err != nil {
		return a, err
	}
	return a, nil
}

// checkQuery enforces what Tavily requires of a query: present, and under 400 characters.
func checkQuery(tool, q string) error {
	if q == "" {
		return invalid("%s: query is required (a non-empty string).", tool)
	}
	if n := utf8.RuneCountInString(q); n > maxQueryChars {
		return invalid("%s: query must be under 400 characters, got %d. Shorten it or split it into several searches.", tool, n)
	}
	return nil
}

// parseExtractArgs validates tavily_extract arguments, with the documented messages for a missing
// URL and for chunks_per_source without query.
func parseExtractArgs(raw json.RawMessage) (extractArgs, error) {
	var a extractArgs
	r, err := newArgReader(toolExtract, raw, "urls", "query", "extract_depth", "chunks_per_source", "include_images")
	if err != nil {
		return a, err
	}
	urls, err := r.stringList("urls")
	if err != nil {
		return a, err
	}
	for _, u := range urls {
		if u = strings.TrimSpace(u); u != "" {
			a.URLs = append(a.URLs, u)
		}
	}
	if len(a.URLs) == 0 {
		return a, invalid(msgNoURLs)
	}
	if len(a.URLs) > maxExtractURLs {
		return a, invalid("%s: urls accepts at most %d URLs per call, got %d. Batch larger lists into multiple tavily_extract calls.",
			toolExtract, maxExtractURLs, len(a.URLs))
	}
	for i, u := range a.URLs {
		if !absHTTPURL(u) {
			return a, invalid("%s: urls[%d] %q must be an absolute http(s) URL such as https://example.com/page.", toolExtract, i, clip(u))
		}
	}
	if a.Query, err = r.str("query"); err != nil {
		return a, err
	}
	if a.ExtractDepth, err = r.enum("extract_depth", "basic", "advanced"); err != nil {
		return a, err
	}
	if r.has("chunks_per_source") && a.Query == "" {
		return a, invalid(msgChunksNeedsQ)
	}
	if a.ChunksPerSource, err = r.integer("chunks_per_source", 1, maxChunks); err != nil {
		return a, err
	}
	if a.IncludeImages, err = r.boolean("include_images"); err != nil {
		return a, err
	}
	return a, nil
}

// argReader reads the fields of one call's arguments. A JSON null counts as an absent argument.
type argReader struct {
	tool   string
	fields map[string]json.RawMessage
}

func newArgReader(tool string, raw json.RawMessage, allowed ...string) (argReader, error) {
	r := argReader{tool: tool}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || isNull(trimmed) {
		trimmed = []byte("{}")
	}
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &r.fields) != nil {
		return r, invalid("%s: arguments must be a JSON object.", tool)
	}
	if unknown := unknownKeys(r.fields, allowed); len(unknown) > 0 {
		return r, invalid("%s: unknown argument %q (allowed: %s).", tool, clip(unknown[0]), strings.Join(allowed, ", "))
	}
	return r, nil
}

func (r argReader) get(name string) (json.RawMessage, bool) {
	v, ok := r.fields[name]
	if !ok || isNull(v) {
		return nil, false
	}
	return v, true
}

func (r argReader) has(name string) bool { _, ok := r.get(name); return ok }

// str reads an optional string, trimmed; absent and blank are both "".
func (r argReader) str(name string) (string, error) {
	v, ok := r.get(name)
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", invalid("%s: %s must be a string, got %s.", r.tool, name, describe(v))
	}
	return strings.TrimSpace(s), nil
}

func (r argReader) enum(name string, allowed ...string) (string, error) {
	s, err := r.str(name)
	if err != nil || s == "" {
		return "", err
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", invalid("%s: %s must be one of %s, got %q.", r.tool, name, strings.Join(allowed, ", "), clip(s))
}

// integer reads an optional whole number in [lo, hi]; 0 means absent. 3.0 is a whole number; 3.5
// and "3" are not.
func (r argReader) integer(name string, lo, hi int) (int, error) {
	v, ok := r.get(name)
	if !ok {
		return 0, nil
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, invalid("%s: %s must be an integer from %d to %d, got %s.", r.tool, name, lo, hi, describe(v))
	}
	return int(f), nil
}

func (r argReader) boolean(name string) (bool, error) {
	v, ok := r.get(name)
	if !ok {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		return false, invalid("%s: %s must be true or false, got %s.", r.tool, name, describe(v))
	}
	return b, nil
}

func (r argReader) stringList(name string) ([]string, error) {
	v, ok := r.get(name)
	if !ok {
		return nil, nil
	}
	var ss []string
	if err := json.Unmarshal(v, &ss); err != nil {
		return nil, invalid("%s: %s must be an array of strings, got %s.", r.tool, name, describe(v))
	}
	return ss, nil
}

// domains reads a domain filter: blank entries are dropped (as the reference does), the rest must be
// bare hostnames and are sent lower-cased. An empty list is the same as none.
func (r argReader) domains(name string, limit int) ([]string, error) {
	list, err := r.stringList(name)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, d := range list {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		host, problem := checkHostname(d)
		if problem != "" {
			return nil, invalid("%s: %s[%d] %q %s", r.tool, name, i, clip(d), problem)
		}
		out = append(out, host)
	}
	if len(out) > limit {
		return nil, invalid("%s: %s accepts at most %d domains, got %d.", r.tool, name, limit, len(out))
	}
	return out, nil
}

// checkHostname accepts a bare hostname (example.com, docs.example.co.uk, a top-level suffix such as
// gov, an optional leading "*." wildcard) and returns it lower-cased without a trailing dot; else it
// says what is wrong, for the model to fix.
func checkHostname(d string) (string, string) {
	const hint = "must be a bare hostname such as example.com"
	if strings.Contains(d, "://") || hasSchemePrefix(d) {
		return "", hint + ", without a scheme (drop the http:// or https://)."
	}
	if i := strings.IndexAny(d, "/?#"); i >= 0 {
		return "", hint + ", without a path."
	}
	if strings.ContainsAny(d, ":@") {
		return "", hint + ", without a port or user."
	}
	host := strings.ToLower(strings.TrimSuffix(d, "."))
	labels := strings.TrimPrefix(host, "*.")
	if labels == "" || len(host) > 253 {
		return "", hint + "."
	}
	for _, l := range strings.Split(labels, ".") {
		if !validLabel(l) {
			return "", hint + "; it is not a valid hostname."
		}
	}
	return host, ""
}

func hasSchemePrefix(d string) bool {
	l := strings.ToLower(d)
	return strings.HasPrefix(l, "http:") || strings.HasPrefix(l, "https:")
}

// validLabel: 1-63 bytes of letters (any script, for internationalised names), digits and inner
// hyphens.
func validLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for _, c := range l {
		if c != '-' && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return false
		}
	}
	return true
}

// describe renders a JSON value for an error message, shortened so that a huge argument does not
// flood the model's context.
func describe(v json.RawMessage) string { return clip(string(bytes.TrimSpace(v))) }

func clip(s string) string {
	n := 0
	for i := range s {
		if n == 60 {
			return s[:i] + "..."
		}
		n++
	}
	return s
}
