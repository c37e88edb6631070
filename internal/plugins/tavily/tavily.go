// Package tavily is the bundled Tavily plugin: the tavily_search and tavily_extract tools and the
// "tavily" provider of the generic web_search tool, over Tavily's REST API.
package tavily

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/nodmix/nodmix/internal/builtin/websearch"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/plugin"
	"github.com/nodmix/nodmix/internal/untrusted"
)

// ID is the plugin id (plugins.entries.tavily) and, as for every bundled provider, the name of its
// web_search provider and the "provider" of its results.
const ID = "tavily"

// Environment variables read through Host.LookupEnv.
const (
	EnvAPIKey  = "TAVILY_API_KEY"
	EnvBaseURL = "TAVILY_BASE_URL"
)

// The documented setup errors. tavily_search and web_search share the first.
const (
	msgMissingKeySearch  = "web_search (tavily) needs a Tavily API key. Set TAVILY_API_KEY in the Gateway environment, or configure plugins.entries.tavily.config.webSearch.apiKey."
	msgMissingKeyExtract = "tavily_extract needs a Tavily API key. Set TAVILY_API_KEY in the Gateway environment, or configure plugins.entries.tavily.config.webSearch.apiKey."
)

// ErrMissingAPIKey is matched (errors.Is) by the setup error of a call made without any API key.
var ErrMissingAPIKey = errors.New("missing Tavily API key")

type setupError struct{ msg string }

func (e *setupError) Error() string        { return e.msg }
func (e *setupError) Is(target error) bool { return target == ErrMissingAPIKey }

// Factory registers the plugin with nodmix's registry of bundled plugins.
var Factory = plugin.Factory{
	Info: plugin.Info{
		ID:          ID,
		Description: "Tavily web search and extraction: structured results with domain filters and AI answer summaries",
		Tools:       []string{toolSearch, toolExtract},
		Providers:   []string{"web_search:tavily"},
	},
	New: func() plugin.Plugin { return New() },
}

// Plugin is one instance of the Tavily plugin. Its lifecycle methods are called from one goroutine
// (see plugin.Plugin); once Init has returned, its tools and provider are safe for concurrent use.
type Plugin struct {
	cfg       pluginConfig
	log       *slog.Logger
	lookupEnv func(string) (string, bool)
	client    apiClient
	searches  *lru[*websearch.Response]
	extracts  *lru[*ExtractResponse]
	// defaultCount is max_results for a search that gives none (tools.web.search.maxResults).
	defaultCount int

	now      func() time.Time
	markerID func() string // ids of untrusted-content wrappers; random in production
}

var (
	_ plugin.Plugin       = (*Plugin)(nil)
	_ plugin.ToolProvider = (*Plugin)(nil)
	_ websearch.Provider  = (*webSearchProvider)(nil)
)

// New returns an unconfigured plugin; nodmix runs it through plugin.Start.
func New() *Plugin {
	return &Plugin{
		now:      time.Now,
		markerID: untrusted.NewMarkerID,
		client:   apiClient{sleep: sleepCtx, retry: defaultRetry()},
	}
}

// Decode reads plugins.entries.tavily.config strictly. When a value does not decode, the rules of
// Validate are checked on the others too, so that every error of the section is reported at once,
// as those of the rest of the file are.
func (p *Plugin) Decode(raw json.RawMessage) error {
	c, err := decodeChecked(raw)
	if err != nil {
		return err
	}
	p.cfg = c
	return nil
}

// Init takes what the host lends. It reads tools.web.search.cacheTtlMinutes from host.Settings
// (default 15; 0 disables the cache). Without host.LookupEnv no environment is read (so no
// TAVILY_API_KEY); without host.HTTPClient a plain client is used. It does no I/O.
func (p *Plugin) Init(_ context.Context, host plugin.Host) error {
	p.log = host.Log
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.lookupEnv = host.LookupEnv
	if p.lookupEnv == nil {
		p.lookupEnv = func(string) (string, bool) { return "", false }
	}
	p.client.http = host.HTTPClient
	if p.client.http == nil {
		p.client.http = &http.Client{}
	}
	p.client.log = p.log
	p.client.now = func() time.Time { return p.now() }
	ttl, err := cacheTTL(host.Settings)
	if err != nil {
		return err
	}
	if p.defaultCount, err = defaultCount(host.Settings); err != nil {
		return err
	}
	p.searches = newLRU[*websearch.Response](cacheCapacity, cacheMaxBytes, ttl)
	p.extracts = newLRU[*ExtractResponse](cacheCapacity, cacheMaxBytes, ttl)
	return nil
}

// Validate checks the decoded configuration. A missing API key is not an error here: the calls
// report it, with the documented setup message, so that nodmix starts without one.
func (p *Plugin) Validate() error { return p.cfg.validate() }

// Close releases nothing: the plugin holds no connections of its own.
func (p *Plugin) Close() error { return nil }

// defaultCount reads tools.web.search.maxResults, the number of results of a search that asks
// for none (the config has checked it is 1–20; absent or 0 means 5).
func defaultCount(settings map[string]any) (int, error) {
	switch n := settings[settingMaxResults].(type) {
	case nil:
		return defaultMaxResults, nil
	case int:
		if n == 0 {
			return defaultMaxResults, nil
		}
		if n >= 1 && n <= maxResultsLimit {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s: must be an integer from 1 to %d", settingMaxResults, maxResultsLimit)
}

// cacheTTL reads the cache setting, which the app copies from the config as a plain number.
func cacheTTL(settings map[string]any) (time.Duration, error) {
	v, ok := settings[settingCacheTTL]
	if !ok || v == nil {
		return DefaultCacheTTL, nil
	}
	var minutes float64
	switch n := v.(type) {
	case float64:
		minutes = n
	case float32:
		minutes = float64(n)
	case int:
		minutes = float64(n)
	case int64:
		minutes = float64(n)
	case int32:
		minutes = float64(n)
	case uint:
		minutes = float64(n)
	case uint64:
		minutes = float64(n)
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			return 0, fmt.Errorf("%s: must be a number of minutes", settingCacheTTL)
		}
		minutes = f
	default:
		return 0, fmt.Errorf("%s: must be a number of minutes", settingCacheTTL)
	}
	if math.IsNaN(minutes) || math.IsInf(minutes, 0) || minutes < 0 {
		return 0, fmt.Errorf("%s: must be a number of minutes, 0 or more", settingCacheTTL)
	}
	return time.Duration(minutes * float64(time.Minute)), nil
}

// Tools returns tavily_search and tavily_extract.
func (p *Plugin) Tools() []catalog.Entry {
	return []catalog.Entry{
		{
			Tool: catalog.Tool{
				ID:          catalog.ID(catalog.SourcePlugin, ID, toolSearch),
				Name:        toolSearch,
				Label:       "Tavily Search",
				Description: searchDescription,
				InputSchema: compactJSON(searchSchema),
				Source:      catalog.SourcePlugin,
				Owner:       ID,
			},
			Exec: catalog.ExecutorFunc(p.execSearch),
		},
		{
			Tool: catalog.Tool{
				ID:          catalog.ID(catalog.SourcePlugin, ID, toolExtract),
				Name:        toolExtract,
				Label:       "Tavily Extract",
				Description: extractDescription,
				InputSchema: compactJSON(extractSchema),
				Source:      catalog.SourcePlugin,
				Owner:       ID,
			},
			Exec: catalog.ExecutorFunc(p.execExtract),
		},
	}
}

// compactJSON keeps the schemas readable in source and small on the wire (every byte of a schema is
// sent to the model). The constants are valid JSON (TestSchemasMatchParsers); were one not, it goes
// as is.
func compactJSON(s string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return json.RawMessage(s)
	}
	return b.Bytes()
}

// WebSearchProvider returns the "tavily" provider of web_search. It shares the search cache with
// tavily_search.
func (p *Plugin) WebSearchProvider() websearch.Provider { return &webSearchProvider{p: p} }

type webSearchProvider struct{ p *Plugin }

// Search maps web_search's {query, count} onto a Tavily search with max_results = count.
func (w *webSearchProvider) Search(ctx context.Context, q websearch.Query) (*websearch.Response, error) {
	query := strings.TrimSpace(q.Query)
	if err := checkQuery(websearch.ToolName, query); err != nil {
		return nil, err
	}
	if q.Count < 0 || q.Count > maxResultsLimit {
		return nil, invalid("%s: count must be an integer from 1 to %d, got %d.", websearch.ToolName, maxResultsLimit, q.Count)
	}
	return w.p.search(ctx, searchArgs{Query: query, MaxResults: q.Count})
}

func (p *Plugin) execSearch(ctx context.Context, call catalog.Call) (*catalog.Result, error) {
	a, err := parseSearchArgs(call.Args)
	if err != nil {
		return catalog.ErrorResult(err.Error()), nil
	}
	resp, err := p.search(ctx, a)
	if err != nil {
		return failure(ctx, toolSearch, err)
	}
	return websearch.JSONResult(resp)
}

func (p *Plugin) execExtract(ctx context.Context, call catalog.Call) (*catalog.Result, error) {
	a, err := parseExtractArgs(call.Args)
	if err != nil {
		return catalog.ErrorResult(err.Error()), nil
	}
	resp, err := p.extract(ctx, a)
	if err != nil {
		return failure(ctx, toolExtract, err)
	}
	return websearch.JSONResult(resp)
}

// failure turns an error into what the model reads; only a cancelled call is a Go error.
func failure(ctx context.Context, tool string, err error) (*catalog.Result, error) {
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: %w", tool, ctx.Err())
	}
	return catalog.ErrorResult(err.Error()), nil
}

// searchBody is the /search request; unset options are omitted, as the API asks.
type searchBody struct {
	Query          string   `json:"query"`
	MaxResults     int      `json:"max_results"`
	SearchDepth    string   `json:"search_depth,omitempty"`
	Topic          string   `json:"topic,omitempty"`
	IncludeAnswer  bool     `json:"include_answer,omitempty"`
	TimeRange      string   `json:"time_range,omitempty"`
	IncludeDomains []string `json:"include_domains,omitempty"`
	ExcludeDomains []string `json:"exclude_domains,omitempty"`
}

// extractBody is the /extract request.
type extractBody struct {
	URLs            []string `json:"urls"`
	Query           string   `json:"query,omitempty"`
	ExtractDepth    string   `json:"extract_depth,omitempty"`
	ChunksPerSource int      `json:"chunks_per_source,omitempty"`
	IncludeImages   bool     `json:"include_images,omitempty"`
}

func (p *Plugin) search(ctx context.Context, a searchArgs) (*websearch.Response, error) {
	key, note := p.apiKey()
	if key == "" {
		return nil, missingKey(msgMissingKeySearch, note)
	}
	count := a.MaxResults
	if count == 0 {
		count = p.defaultCount
	}
	body, err := json.Marshal(searchBody{
		Query: a.Query, MaxResults: count, SearchDepth: a.SearchDepth, Topic: a.Topic,
		IncludeAnswer: a.IncludeAnswer, TimeRange: a.TimeRange,
		IncludeDomains: a.IncludeDomains, ExcludeDomains: a.ExcludeDomains,
	})
	if err != nil {
		return nil, fmt.Errorf("encode search request: %w", err)
	}
	url := endpoint(p.baseURL(), "/search")
	ck := cacheKey("search", url, body, key)
	if v, ok := p.searches.get(ck, p.now()); ok {
		p.log.Debug("tavily cache hit", "op", labelSearch)
		hit := *v
		hit.Cached = true
		return &hit, nil
	}
	start := p.now()
	payload, err := p.client.post(ctx, labelSearch, url, key, body, timeout(p.cfg.searchTimeout, DefaultSearchTimeout))
	if err != nil {
		return nil, err
	}
	resp := p.searchResponse(a.Query, payload, count, p.now().Sub(start))
	p.searches.put(ck, resp, searchSize(resp), p.now())
	return resp, nil
}

func (p *Plugin) extract(ctx context.Context, a extractArgs) (*ExtractResponse, error) {
	key, note := p.apiKey()
	if key == "" {
		return nil, missingKey(msgMissingKeyExtract, note)
	}
	body, err := json.Marshal(extractBody{
		URLs: a.URLs, Query: a.Query, ExtractDepth: a.ExtractDepth,
		ChunksPerSource: a.ChunksPerSource, IncludeImages: a.IncludeImages,
	})
	if err != nil {
		return nil, fmt.Errorf("encode extract request: %w", err)
	}
	url := endpoint(p.baseURL(), "/extract")
	ck := cacheKey("extract", url, body, key)
	if v, ok := p.extracts.get(ck, p.now()); ok {
		p.log.Debug("tavily cache hit", "op", labelExtract)
		hit := *v
		hit.Cached = true
		return &hit, nil
	}
	start := p.now()
	payload, err := p.client.post(ctx, labelExtract, url, key, body, timeout(p.cfg.extractTimeout, DefaultExtractTimeout))
	if err != nil {
		return nil, err
	}
	resp := p.extractResponse(payload, len(a.URLs), p.now().Sub(start))
	p.extracts.put(ck, resp, extractSize(resp), p.now())
	return resp, nil
}

func missingKey(msg, note string) error {
	if note != "" {
		msg += " (" + note + ".)"
	}
	return &setupError{msg: msg}
}

// apiKey resolves the key on every call, in the documented order: the configured webSearch.apiKey
// (a literal or a SecretRef), then TAVILY_API_KEY. note explains a configured reference that gave
// nothing.
func (p *Plugin) apiKey() (key, note string) {
	if key, note = resolveKey(p.cfg.apiKey, p.lookupEnv); key != "" {
		return key, ""
	}
	if v, ok := p.lookupEnv(EnvAPIKey); ok {
		if v = strings.TrimSpace(v); v != "" {
			return v, ""
		}
	}
	return "", note
}

// baseURL is webSearch.baseUrl, then TAVILY_BASE_URL, then the default.
func (p *Plugin) baseURL() string {
	if b := strings.TrimSpace(p.cfg.baseURL); b != "" {
		return b
	}
	if v, ok := p.lookupEnv(EnvBaseURL); ok {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return DefaultBaseURL
}
