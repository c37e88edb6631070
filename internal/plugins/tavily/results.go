package tavily

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/nodmix/nodmix/internal/builtin/websearch"
	"github.com/nodmix/nodmix/internal/untrusted"
)

// ExtractResponse is tavily_extract's result, structured for a model. Text fields are web content,
// wrapped as untrusted. A value may be shared by the cache: callers must not modify it.
type ExtractResponse struct {
	Provider        string                    `json:"provider"`
	Count           int                       `json:"count"`
	TookMs          int64                     `json:"tookMs"`
	Cached          bool                      `json:"cached,omitempty"`
	ExternalContent websearch.ExternalContent `json:"externalContent"`
	Results         []ExtractResult           `json:"results"`
	FailedResults   []FailedResult            `json:"failedResults,omitempty"`
}

// ExtractResult is the content of one URL.
type ExtractResult struct {
	URL        string   `json:"url"`
	RawContent string   `json:"rawContent"`
	Content    string   `json:"content,omitempty"`
	Images     []string `json:"images,omitempty"`
}

// FailedResult is a URL Tavily could not extract, and why.
type FailedResult struct {
	URL   string `json:"url"`
	Error string `json:"error"`
}

// maxImages bounds the images kept of one extracted page: each is wrapped for the model, and a
// page can list thousands.
const maxImages = 50

// searchResponse maps a /search answer. The payload is read leniently (the API's schema drifts): a
// field of the wrong type is treated as absent rather than failing the call. Results beyond
// maxResults, the number asked for, are dropped: the API returns no more, and each is wrapped.
func (p *Plugin) searchResponse(query string, payload map[string]json.RawMessage, maxResults int, took time.Duration) *websearch.Response {
	resp := &websearch.Response{
		Query:    query,
		Provider: ID,
		TookMs:   took.Milliseconds(),
		ExternalContent: websearch.ExternalContent{
			Untrusted: true, Source: string(untrusted.OriginWebSearch), Provider: ID, Wrapped: true,
		},
		Results: []websearch.Result{},
	}
	for _, r := range objects(payload["results"], maxResults) {
		res := websearch.Result{URL: str(r["url"])}
		if t := str(r["title"]); t != "" {
			res.Title = p.wrap(t, untrusted.OriginWebSearch)
		}
		if c := str(r["content"]); c != "" {
			res.Snippet = p.wrap(c, untrusted.OriginWebSearch)
		}
		var score float64
		if v := r["score"]; len(v) > 0 && !isNull(v) && json.Unmarshal(v, &score) == nil {
			res.Score = &score
		}
		if d, ok := normalizePublished(str(r["published_date"])); ok {
			res.Published = d
		}
		resp.Results = append(resp.Results, res)
	}
	resp.Count = len(resp.Results)
	if a := str(payload["answer"]); a != "" {
		resp.Answer = p.wrap(a, untrusted.OriginWebSearch)
	}
	return resp
}

// extractResponse maps an /extract answer, leniently like searchResponse. There is at most one
// result, or one failure, per requested URL; more are dropped.
func (p *Plugin) extractResponse(payload map[string]json.RawMessage, urls int, took time.Duration) *ExtractResponse {
	resp := &ExtractResponse{
		Provider: ID,
		TookMs:   took.Milliseconds(),
		ExternalContent: websearch.ExternalContent{
			Untrusted: true, Source: string(untrusted.OriginWebFetch), Provider: ID, Wrapped: true,
		},
		Results: []ExtractResult{},
	}
	for _, r := range objects(payload["results"], urls) {
		res := ExtractResult{URL: str(r["url"])}
		if c, ok := strOK(r["raw_content"]); ok {
			res.RawContent = p.wrap(c, untrusted.OriginWebFetch)
		}
		if c, ok := strOK(r["content"]); ok {
			res.Content = p.wrap(c, untrusted.OriginWebFetch)
		}
		var images []json.RawMessage
		if json.Unmarshal(r["images"], &images) == nil {
			for _, img := range images {
				u := str(img)
				if u == "" {
					var o struct {
						URL string `json:"url"`
					}
					if json.Unmarshal(img, &o) == nil {
						u = o.URL
					}
				}
				if u != "" {
					res.Images = append(res.Images, p.wrap(u, untrusted.OriginWebFetch))
				}
				if len(res.Images) == maxImages {
					break
				}
			}
		}
		resp.Results = append(resp.Results, res)
	}
	resp.Count = len(resp.Results)
	for _, f := range objects(payload["failed_results"], urls) {
		resp.FailedResults = append(resp.FailedResults, FailedResult{URL: str(f["url"]), Error: str(f["error"])})
	}
	return resp
}

// searchSize is about the bytes a search response holds, for the cache's budget.
func searchSize(r *websearch.Response) int {
	n := len(r.Query) + len(r.Answer)
	for _, res := range r.Results {
		n += len(res.Title) + len(res.URL) + len(res.Snippet) + len(res.Published)
	}
	return n
}

// extractSize is about the bytes an extract response holds, for the cache's budget.
func extractSize(r *ExtractResponse) int {
	n := 0
	for _, res := range r.Results {
		n += len(res.URL) + len(res.RawContent) + len(res.Content)
		for _, img := range res.Images {
			n += len(img)
		}
	}
	for _, f := range r.FailedResults {
		n += len(f.URL) + len(f.Error)
	}
	return n
}

func (p *Plugin) wrap(text string, o untrusted.Origin) string {
	return untrusted.WrapWithID(text, o, p.markerID())
}

// objects decodes a JSON array and keeps its first limit object elements.
func objects(raw json.RawMessage, limit int) []map[string]json.RawMessage {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return nil
	}
	out := make([]map[string]json.RawMessage, 0, min(len(elems), limit))
	for _, e := range elems {
		if len(out) == limit {
			break
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(e, &m) == nil && m != nil {
			out = append(out, m)
		}
	}
	return out
}

func str(raw json.RawMessage) string { s, _ := strOK(raw); return s }

func strOK(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil || isNull(raw) {
		return "", false
	}
	return s, true
}

// Layouts Tavily and the sites it indexes use for published dates: news results carry RFC 1123
// times in GMT ("Mon, 15 Sep 2025 14:30:00 GMT"), others ISO forms.
var dateTimeLayouts = []string{
	time.RFC1123,
	time.RFC1123Z,
	"Mon, 2 Jan 2006 15:04:05 MST",
	"Mon, 2 Jan 2006 15:04:05 -0700",
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	time.RFC850,
	time.RFC822,
	time.RFC822Z,
	time.ANSIC,
	"2 Jan 2006 15:04:05 MST",
	"January 2, 2006 15:04:05",
}

// rfc5322Zones are the zone names of RFC 5322 §4.3 (from RFC 822) with their offsets in hours.
var rfc5322Zones = map[string]int{"EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7}

var dateOnlyLayouts = []string{"2006-01-02", "January 2, 2006", "Jan 2, 2006", "2 January 2006", "2 Jan 2006"}

// normalizePublished turns a published date into ISO 8601: a time becomes RFC 3339 in UTC
// (2025-09-15T14:30:00Z), a bare date stays a date (2025-09-15). Anything that is not a plausible
// date is dropped, as the documentation says. Of the zone names, GMT, UTC and RFC 5322's
// (EST ... PDT) have fixed offsets; any other (CET, IST) is ambiguous, and reading it in the
// machine's zone would make the output depend on where nodmix runs, so only its date is kept.
func normalizePublished(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return "", false
	}
	for _, l := range dateTimeLayouts {
		t, err := time.ParseInLocation(l, s, time.UTC)
		if err != nil {
			continue
		}
		dateOnly := false
		if name, off := t.Zone(); off == 0 && name != "UTC" && name != "GMT" {
			// Go gives a zone name it does not know the offset of zero, which would put an "EST"
			// time five hours off. RFC 5322's names have fixed offsets; any other name leaves the
			// instant unknown, and only the date, as written, is kept.
			if known, ok := rfc5322Zones[name]; ok {
				t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(),
					time.FixedZone(name, known*3600))
			} else {
				dateOnly = true
			}
		}
		switch {
		case !plausible(t): // after the offset, which can move the year, so the result reads back
			continue
		case dateOnly:
			return t.Format("2006-01-02"), true
		}
		return t.UTC().Format(time.RFC3339), true
	}
	for _, l := range dateOnlyLayouts {
		if t, err := time.ParseInLocation(l, s, time.UTC); err == nil && plausible(t) {
			return t.Format("2006-01-02"), true
		}
	}
	return "", false
}

func plausible(t time.Time) bool { y := t.UTC().Year(); return y >= 1900 && y <= 2200 }
