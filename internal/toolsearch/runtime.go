package toolsearch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
)

// Config assembles a Runtime.
type Config struct {
	// Index is the run's catalog (required).
	Index *Index
	// Pipeline runs every final call, code mode included (required).
	Pipeline *dispatch.Pipeline
	Options  Options
	// Session is the session the run's calls belong to.
	Session string
	// Runner runs tool_search_code; nil means code mode is unavailable.
	Runner Runner
	// Budget bounds batched searches; the zero value means DefaultBatchBudget. The tool_search
	// definition states the default limits, so another budget is for tests and embedders that
	// describe theirs to the model themselves.
	Budget BatchBudget
	Log    *slog.Logger
}

// Runtime is Tool Search for one run: search, describe and call over one Index, with the run's
// counters and telemetry. Every final call goes through the dispatch pipeline. A Runtime is safe
// for concurrent use.
type Runtime struct {
	ix      *Index
	pipe    *dispatch.Pipeline
	opts    Options
	session string
	runner  Runner
	budget  BatchBudget
	log     *slog.Logger
	scope   string

	searches, describes, calls atomic.Int64

	mu       sync.Mutex
	selected []Selection
	surface  surfaceStats
}

// Selection is a tool the run called through Tool Search.
type Selection struct {
	ID     string `json:"id"`
	Source string `json:"source"`
	Calls  int    `json:"calls"`
}

type surfaceStats struct {
	mode  string
	tools int
	bytes int
}

// New returns the runtime of one run.
func New(cfg Config) (*Runtime, error) {
	if cfg.Index == nil {
		return nil, errors.New("toolsearch: runtime needs an index")
	}
	if cfg.Pipeline == nil {
		return nil, errors.New("toolsearch: runtime needs a dispatch pipeline")
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	budget := cfg.Budget
	if budget == (BatchBudget{}) {
		budget = DefaultBatchBudget()
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return &Runtime{
		ix:      cfg.Index,
		pipe:    cfg.Pipeline,
		opts:    cfg.Options.Normalize(),
		session: cfg.Session,
		runner:  cfg.Runner,
		budget:  budget,
		log:     log,
		scope:   hex.EncodeToString(b[:]),
	}, nil
}

// Index returns the run's catalog.
func (r *Runtime) Index() *Index { return r.ix }

// surfaceKind selects the recovery text of an unknown-id error and the pipeline surface name.
type surfaceKind uint8

const (
	toolsSurface surfaceKind = iota
	codeSurface
)

func (s surfaceKind) pipelineName() string {
	if s == codeSurface {
		return ToolSearchCode
	}
	return ToolCall
}

// Search returns up to limit compact descriptors for query; limit 0 means the default limit, and a
// larger one is capped at the maximum. Every search counts, including failed ones.
func (r *Runtime) Search(query string, limit int) ([]Descriptor, error) {
	r.searches.Add(1)
	if limit < 0 {
		return nil, inputErr(ErrBadRequest, "limit must be a positive integer.")
	}
	return r.rank(query, r.resolveLimit(limit)), nil
}

func (r *Runtime) resolveLimit(limit int) int {
	if limit == 0 {
		return r.opts.SearchDefaultLimit
	}
	return min(limit, r.opts.MaxSearchLimit)
}

func (r *Runtime) rank(query string, limit int) []Descriptor {
	docs := r.ix.search(query, limit)
	out := make([]Descriptor, len(docs))
	for i, d := range docs {
		out[i] = r.ix.descriptor(d)
	}
	return out
}

// Describe returns the full metadata of one tool, including its exact input schema.
func (r *Runtime) Describe(id string) (*Description, error) {
	return r.describe(id, toolsSurface)
}

func (r *Runtime) describe(id string, s surfaceKind) (*Description, error) {
	r.describes.Add(1)
	i, err := r.find(id, s)
	if err != nil {
		return nil, err
	}
	d := r.ix.describe(i)
	return &d, nil
}

// find resolves an id or name, turning a miss into the documented unknown-id message.
func (r *Runtime) find(id string, s surfaceKind) (int, error) {
	i, err := r.ix.find(id)
	if errors.Is(err, ErrUnknownTool) {
		return -1, inputErr(ErrUnknownTool, r.unknownMessage(strings.TrimSpace(id), s))
	}
	return i, err
}

// CallResult is a call made through Tool Search: the compact descriptor of the tool that ran and
// its result.
type CallResult struct {
	Tool   Descriptor
	Result *catalog.Result
}

// Call runs one tool by id or name. Arguments of nodmix tools are checked against their schema
// first; MCP and client tools validate their own. The call counts before validation, so rejected
// calls count too. Mistakes the model can fix are *InputError; a blocked or failed call is a
// result with IsError set.
func (r *Runtime) Call(ctx context.Context, id string, args json.RawMessage) (*CallResult, error) {
	return r.call(ctx, id, args, toolsSurface)
}

func (r *Runtime) call(ctx context.Context, id string, args json.RawMessage, s surfaceKind) (*CallResult, error) {
	i, err := r.find(id, s)
	if err != nil {
		return nil, err
	}
	r.calls.Add(1)
	e := r.ix.entries[i]
	t := &e.Tool
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if trusted(t) {
		if err := validateArgs(t, args); err != nil {
			return nil, err
		}
	}
	res, err := r.pipe.Call(ctx, r.ix.snap, dispatch.Request{Target: t.ID, Args: args, Session: r.session, Surface: s.pipelineName()})
	if errors.Is(err, dispatch.ErrUnknownTool) || errors.Is(err, dispatch.ErrDenied) {
		// The policy or the catalog changed under the run: the tool is gone for it.
		return nil, inputErr(ErrUnknownTool, r.unknownMessage(t.ID, s))
	}
	if err != nil {
		return nil, fmt.Errorf("tool search: call %s: %w", t.ID, err)
	}
	r.record(t)
	return &CallResult{Tool: r.ix.descriptor(i), Result: res}, nil
}

// validateArgs checks args against the tool's input schema (reference §2.5.5).
func validateArgs(t *catalog.Tool, args json.RawMessage) error {
	if len(t.InputSchema) == 0 {
		return nil
	}
	schema, err := parseValue(t.InputSchema)
	if err != nil || !schema.isObject() {
		return inputErr(ErrInvalidArgs, `Tool "`+t.ID+`" has an invalid inputSchema.`)
	}
	v, err := parseValue(args)
	if err != nil {
		return inputErr(ErrInvalidArgs, `Invalid arguments for tool "`+t.ID+`": <root>: must be valid JSON.`)
	}
	if errs := validateValue(schema, v); len(errs) > 0 {
		return inputErr(ErrInvalidArgs, inputError(t.ID, schema, v, errs))
	}
	return nil
}

func (r *Runtime) record(t *catalog.Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.selected {
		if r.selected[i].ID == t.ID {
			r.selected[i].Calls++
			return
		}
	}
	r.selected = append(r.selected, Selection{ID: t.ID, Source: sourceOf(t), Calls: 1})
}

// Recovery texts of the unknown-id message, per surface.
const (
	recoveryStructured = "Use tool_search to find a tool, tool_describe to inspect it, then tool_call with the exact id or name."
	recoveryCode       = "Use nodmix.tools.search to find a tool, nodmix.tools.describe to inspect it, then nodmix.tools.call with the exact id or name."
)

var lookupTokenRE = regexp.MustCompile(`[a-z0-9]+`)

// unknownMessage is `Unknown tool id: X. [Did you mean: a, b, c? ]<recovery>` (reference §2.5.4).
// Suggestions come only from entries the run may see.
func (r *Runtime) unknownMessage(needle string, s surfaceKind) string {
	recovery := recoveryStructured
	if s == codeSurface {
		recovery = recoveryCode
	}
	lowNeedle := strings.ToLower(needle)
	// Sets, not lists: code can pass an id of a hundred thousand distinct words, and the host's
	// time on it is not charged to the code's deadline.
	needleTokens := tokenSet(lowNeedle)
	type cand struct {
		value string
		score int
	}
	var cands []cand
	for _, e := range r.ix.entries {
		t := &e.Tool
		name, id := strings.ToLower(t.Name), strings.ToLower(t.ID)
		label, desc := strings.ToLower(t.DisplayLabel()), strings.ToLower(t.Description)
		score := 0
		if (name != "" && strings.Contains(lowNeedle, name)) || strings.Contains(id, lowNeedle) {
			score += 40
		}
		if _, ok := needleTokens[name]; ok && name != "" {
			score += 40
		}
		if len(needleTokens) > 0 {
			// Each token both share counts once.
			for tok := range tokenSet(name + " " + id + " " + label + " " + desc) {
				if _, ok := needleTokens[tok]; ok {
					score += 12
				}
			}
		}
		if strings.Contains(label, lowNeedle) || strings.Contains(desc, lowNeedle) {
			score += 8
		}
		if score > 0 {
			value := t.Name
			if len(r.ix.byName(t.Name)) > 1 {
				value = t.ID
			}
			cands = append(cands, cand{value, score})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return strings.Compare(a.value, b.value)
	})
	var suggestions []string
	for _, c := range cands {
		if len(suggestions) == 3 {
			break
		}
		suggestions = appendUnique(suggestions, c.value)
	}
	if len(suggestions) == 0 {
		return "Unknown tool id: " + needle + ". " + recovery
	}
	return "Unknown tool id: " + needle + ". Did you mean: " + strings.Join(suggestions, ", ") + "? " + recovery
}

func tokenSet(s string) map[string]struct{} {
	out := make(map[string]struct{})
	for _, t := range lookupTokenRE.FindAllString(s, -1) {
		out[t] = struct{}{}
	}
	return out
}

// Telemetry is what a run reports about Tool Search: catalog size and sources, operation counts,
// the tools it called, and the size of the surface the model received up front.
type Telemetry struct {
	Mode          string       `json:"mode,omitempty"`
	CatalogSize   int          `json:"catalogSize"`
	Sources       SourceCounts `json:"sources"`
	CounterScope  string       `json:"counterScope"`
	SearchCount   int64        `json:"searchCount"`
	DescribeCount int64        `json:"describeCount"`
	CallCount     int64        `json:"callCount"`
	Selected      []Selection  `json:"selected"`
	SurfaceTools  int          `json:"surfaceTools"`
	SurfaceBytes  int          `json:"surfaceBytes"`
}

// Telemetry returns a snapshot of the run's telemetry.
func (r *Runtime) Telemetry() Telemetry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Telemetry{
		Mode:          r.surface.mode,
		CatalogSize:   r.ix.Len(),
		Sources:       r.ix.sources,
		CounterScope:  r.scope,
		SearchCount:   r.searches.Load(),
		DescribeCount: r.describes.Load(),
		CallCount:     r.calls.Load(),
		Selected:      slices.Clone(r.selected),
		SurfaceTools:  r.surface.tools,
		SurfaceBytes:  r.surface.bytes,
	}
}

// codeTelemetry is the telemetry object of a tool_search_code result (reference §2.9.1).
type codeTelemetry struct {
	CatalogSize   int          `json:"catalogSize"`
	Sources       SourceCounts `json:"sources"`
	CounterScope  string       `json:"counterScope"`
	SearchCount   int64        `json:"searchCount"`
	DescribeCount int64        `json:"describeCount"`
	CallCount     int64        `json:"callCount"`
}

func (r *Runtime) codeTelemetry() codeTelemetry {
	return codeTelemetry{
		CatalogSize:   r.ix.Len(),
		Sources:       r.ix.sources,
		CounterScope:  r.scope,
		SearchCount:   r.searches.Load(),
		DescribeCount: r.describes.Load(),
		CallCount:     r.calls.Load(),
	}
}

// resultJSON is a tool result as Tool Search shows it: content parts, and the structured value
// under "details".
type resultJSON struct {
	Content []json.RawMessage `json:"content"`
	Details json.RawMessage   `json:"details,omitempty"`
	IsError bool              `json:"isError,omitempty"`
}

func toResultJSON(res *catalog.Result) resultJSON {
	out := resultJSON{Content: []json.RawMessage{}, IsError: res.IsError}
	for _, c := range res.Content {
		var b json.RawMessage
		switch {
		case c.Type == "text":
			b, _ = marshalJS(struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}{c.Type, c.Text}, false)
		case len(c.Raw) == 0:
			b, _ = marshalJS(struct {
				Type string `json:"type"`
			}{c.Type}, false)
		default:
			b = c.Raw
		}
		out.Content = append(out.Content, b)
	}
	if len(res.Structured) > 0 && json.Valid(res.Structured) {
		out.Details = res.Structured
	}
	return out
}
