// Package agent runs turns: the session transcript and the run's tools go to a model, its tool
// calls go through the dispatch pipeline, and the results go back, until the model answers.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
)

// Model is one resolved model a turn talks to. Implementations are safe for concurrent use.
type Model interface {
	// Stream sends req and yields its events, ending with llm.EventDone or an error.
	Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error]
}

// RequestChecker is a Model that can tell, without sending anything, whether it could send a
// request. The turn loop asks before it stores a turn's input: input no request to this model
// can carry (an image the provider does not take) then fails its own turn, with ErrUnsendable,
// instead of being stored and failing every later turn of the session.
type RequestChecker interface {
	CheckRequest(req *llm.Request) error
}

// Tools is the run's view of the catalog for one session: what the model sees up front and how
// its calls are made. Calls go through the dispatch pipeline (surface "agent"). Implementations
// are safe for concurrent use.
type Tools interface {
	// Tools returns the tools the session's model sees now.
	Tools(ctx context.Context, session string) ([]catalog.Tool, error)
	// Call calls a visible tool by its model-facing name. It returns dispatch.ErrUnknownTool or
	// dispatch.ErrDenied (wrapped) when the name cannot be called; every other failure is a
	// result with IsError set.
	Call(ctx context.Context, session, name string, args json.RawMessage) (*catalog.Result, error)
}

// Sessions is the part of the session store a turn needs. See session.Store for the contract.
type Sessions interface {
	Transcript(ctx context.Context, key string) ([]llm.Message, error)
	Append(ctx context.Context, key string, base int, msgs []llm.Message) (*session.Info, error)
	Update(ctx context.Context, key string, fn func(*session.Info) error) (*session.Info, error)
}

// Runner runs turns. Its fields are set once; it is then safe for concurrent use. Turns of one
// session are kept apart by the store: a store that leases sessions (leaser) refuses a second
// turn at its start, and every store refuses an Append on a transcript changed since it was read.
type Runner struct {
	Sessions Sessions
	Tools    Tools
	// Allowed decides whether a client tool may be offered to the model (policy applies to
	// client tools like to any tool); nil allows all.
	Allowed func(t *catalog.Tool) bool
	// Log receives one line per model call (no message text, no keys); nil: none.
	Log func(session string, line any)
	// Logger is for operator diagnostics; nil is quiet.
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// LeaseTTL is how long a turn's session lease lasts past its last renewal; 0 is
	// DefaultLeaseTTL.
	LeaseTTL time.Duration
}

// Turn is one user turn.
type Turn struct {
	Session string
	// ModelRef is the "provider/model" reference, for logs and session rows.
	ModelRef string
	Model    Model
	// ModelID is the provider's model id put in requests.
	ModelID string
	System  string
	// Input is what the user (or the client, returning client tool results) adds: user
	// messages, or tool messages answering the client tool calls that ended the last turn.
	Input []llm.Message
	// ClientTools are tools the client declared for this turn (gateway API). A call to one ends
	// the turn and is returned in Result.ClientCalls.
	ClientTools []llm.Tool
	MaxSteps    int // 0: 32
	// MaxStepsKey is the setting MaxSteps came from, for the message at the limit ("" reads
	// agents.defaults.maxSteps).
	MaxStepsKey string
	MaxTokens   int
	Temperature *float64
	ToolChoice  string
	Extra       map[string]json.RawMessage
	// Stream asks the provider for a streamed response; deltas reach Observe as they arrive.
	Stream bool
	// Observe, if set, sees the turn's progress on the turn's goroutine (and, for tool events,
	// on the goroutines running the calls: it must be safe for concurrent use).
	Observe func(Event)
	// DirectSchemaBytes is what direct exposure would have sent up front for the same catalog,
	// for the session's token economy counters; 0 when unknown.
	DirectSchemaBytes int
}

// EventKind is what an agent Event reports.
type EventKind string

const (
	EventText      EventKind = "text"       // a piece of answer text
	EventReasoning EventKind = "reasoning"  // a piece of reasoning text
	EventToolStart EventKind = "tool_start" // a tool call is about to run (Call)
	EventToolEnd   EventKind = "tool_end"   // a tool call finished (Call, Result)
	EventStep      EventKind = "step"       // a model call finished (Step, Usage)
)

// Event is turn progress for a face (CLI stderr, SSE to a client, the web page).
type Event struct {
	Kind   EventKind
	Text   string
	Call   *llm.Part
	Result *catalog.Result
	Step   int
	Usage  *llm.Usage
}

// Result is what a turn produced.
type Result struct {
	Model string // the turn's "provider/model"
	Text  string // the final answer text
	// Message is the final assistant message (the answer, or the message whose client tool
	// calls ended the turn).
	Message llm.Message
	// ClientCalls are the client tool calls the client must answer to continue the session.
	ClientCalls []llm.Part
	Usage       llm.Usage
	Steps       int
	Finish      string
	// Tools are the tool calls nodmix ran in this turn, in order, with their results.
	Tools []ToolRun
}

// Errors a face distinguishes.
var (
	// ErrMaxSteps: the model kept calling tools past the step limit.
	ErrMaxSteps = errors.New("step limit reached")
	// ErrBusy: another turn runs on the session (its lease is taken), or changed it while this
	// one ran.
	ErrBusy = errors.New("the session is busy with another turn")
	// ErrRemoved: the session was removed (`nodmix sessions rm`, DELETE /v1/sessions/…) while
	// the turn ran; what the turn said since is not kept.
	ErrRemoved = errors.New("the session was removed during the turn")
	// ErrUnsendable: the turn's input holds what no request to its model can carry; nothing of
	// it was stored.
	ErrUnsendable = errors.New("the input cannot be sent to this model")
)

// storeTimeout bounds a store write made after the turn's context ended.
const storeTimeout = 10 * time.Second

// DefaultMaxSteps is the step limit when agents.defaults.maxSteps is not set.
const DefaultMaxSteps = 32

// modelCall is one session log line per model call: sizes and outcomes, never text or keys.
type modelCall struct {
	Time         time.Time  `json:"time"`
	Type         string     `json:"type"` // "model"
	Model        string     `json:"model"`
	Step         int        `json:"step"`
	RequestBytes int        `json:"request_bytes"`
	Tools        int        `json:"tools"`       // tool schemas sent up front
	ToolBytes    int        `json:"tools_bytes"` // their compact JSON size
	Usage        *llm.Usage `json:"usage,omitempty"`
	DurationMS   float64    `json:"duration_ms"`
	Outcome      string     `json:"outcome"` // ok, tool_calls, error, canceled
	Finish       string     `json:"finish,omitempty"`
}

// Run runs one turn to its end: an answer, client tool calls for the client to answer, the step
// limit, or an error. Everything the turn adds is kept in the session as it happens, so a turn
// cut by a crash or a provider failure loses nothing that was said.
func (r *Runner) Run(ctx context.Context, t Turn) (*Result, error) {
	if t.Model == nil {
		return nil, errors.New("agent: no model")
	}
	maxSteps := t.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	// Taken before the transcript is read, so that what the turn builds on stays as it read it.
	release, err := r.lease(ctx, t.Session)
	if err != nil {
		return nil, err
	}
	defer release()
	history, input, err := r.begin(ctx, t)
	if err != nil {
		return nil, err
	}
	base := len(history)
	if len(input) > 0 {
		if _, err := r.Sessions.Append(ctx, t.Session, base, input); err != nil {
			return nil, r.storeErr(t.Session, err)
		}
		history = append(history, input...)
		base += len(input)
	}
	res := &Result{Model: t.ModelRef}
	for step := 1; ; step++ {
		if step > maxSteps {
			res.Finish = "max_steps"
			key := t.MaxStepsKey
			if key == "" {
				key = "agents.defaults.maxSteps"
			}
			return res, fmt.Errorf("%w: the model was still calling tools after %d steps (%s)", ErrMaxSteps, maxSteps, key)
		}
		tools, offered, toolBytes, err := r.tools(ctx, t)
		if err != nil {
			return res, fmt.Errorf("session %q: tools: %w", t.Session, err)
		}
		req := t.request(history, tools)
		msg, usage, finish, err := r.call(ctx, t, req, step, len(tools), toolBytes)
		if err != nil {
			return res, err
		}
		res.Steps = step
		res.Finish = finish
		if usage != nil {
			addUsage(&res.Usage, usage)
		}
		res.Message = *msg
		res.Text = msg.Text()
		calls := msg.ToolCalls()
		// Split calls: nodmix runs its own, the client answers its own.
		var mine, theirs []llm.Part
		for _, c := range calls {
			if offered[c.Name] == ownerClient {
				theirs = append(theirs, c)
			} else {
				// nodmix's, or unknown: the pipeline answers "unknown tool", also to a client
				// tool policy keeps from the model, which the client must not be asked to run
				mine = append(mine, c)
			}
		}
		out := []llm.Message{*msg}
		var runs []ToolRun
		if len(mine) > 0 {
			var results []llm.Message
			results, runs = r.runCalls(ctx, t, mine)
			out = append(out, results...)
			res.Tools = append(res.Tools, runs...)
		}
		// What was said is kept even when the turn is being cancelled: a call is never stored
		// without its result.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
		_, err = r.Sessions.Append(sctx, t.Session, base, out)
		if err == nil {
			r.count(sctx, t, usage, len(tools), toolBytes, runs)
		}
		cancel()
		if err != nil {
			return res, r.storeErr(t.Session, err)
		}
		base += len(out)
		history = append(history, out...)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if len(theirs) > 0 {
			res.ClientCalls = theirs
			res.Finish = "tool_calls"
			return res, nil
		}
		if len(calls) == 0 {
			return res, nil
		}
	}
}

// FirstRequest is the request the turn's first model call would send, built as Run builds it,
// reading the session and writing nothing: a dry run shows what a run sends.
func (r *Runner) FirstRequest(ctx context.Context, t Turn) (*llm.Request, error) {
	if t.Model == nil {
		return nil, errors.New("agent: no model")
	}
	history, input, err := r.begin(ctx, t)
	if err != nil {
		return nil, err
	}
	t.Input = input
	tools, _, _, err := r.tools(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("session %q: tools: %w", t.Session, err)
	}
	return t.request(append(slices.Clip(history), input...), tools), nil
}

// request is a model call's request on the transcript so far.
func (t *Turn) request(history []llm.Message, tools []llm.Tool) *llm.Request {
	return &llm.Request{
		Model: t.ModelID, System: t.System, Messages: ownOpaque(history, t.provider()), Tools: tools, ToolChoice: t.ToolChoice,
		MaxTokens: t.MaxTokens, Temperature: t.Temperature, Stream: t.Stream, Extra: t.Extra,
	}
}

func (r *Runner) storeErr(key string, err error) error {
	if errors.Is(err, session.ErrNotFound) { // a removed session's append is a conflict too
		return fmt.Errorf("session %q: %w", key, ErrRemoved)
	}
	if errors.Is(err, session.ErrConflict) {
		return fmt.Errorf("session %q: %w", key, ErrBusy)
	}
	return fmt.Errorf("session %q: %w", key, err)
}

// owner is who runs an offered tool.
type owner int

const (
	ownerNone   owner = iota // not offered
	ownerServer              // nodmix, through the pipeline
	ownerClient              // the client: a call ends the turn
)

// tools is what the model sees this step: the session's view plus the client's tools that
// policy allows. offered says who runs each.
func (r *Runner) tools(ctx context.Context, t Turn) (out []llm.Tool, offered map[string]owner, bytes int, err error) {
	vis, err := r.Tools.Tools(ctx, t.Session)
	if err != nil {
		return nil, nil, 0, err
	}
	offered = make(map[string]owner, len(vis)+len(t.ClientTools))
	out = make([]llm.Tool, 0, len(vis)+len(t.ClientTools))
	for i := range vis {
		out = append(out, llm.Tool{Name: vis[i].Name, Description: vis[i].ModelDescription(), Parameters: vis[i].Schema()})
		offered[vis[i].Name] = ownerServer
	}
	for _, ct := range t.ClientTools {
		if offered[ct.Name] != ownerNone {
			continue // a server tool of the same name wins; the client's is not offered
		}
		ct := ct
		tool := catalog.Tool{ID: catalog.ID(catalog.SourceClient, "client", ct.Name), Name: ct.Name, Description: ct.Description, InputSchema: ct.Parameters, Source: catalog.SourceClient, Owner: "client"}
		if r.Allowed != nil && !r.Allowed(&tool) {
			continue
		}
		offered[ct.Name] = ownerClient
		out = append(out, ct)
	}
	if len(out) > 0 {
		b, _ := json.Marshal(out)
		bytes = len(b)
	}
	return out, offered, bytes, nil
}

// call makes one model call and returns the assembled assistant message.
func (r *Runner) call(ctx context.Context, t Turn, req *llm.Request, step, nTools, toolBytes int) (*llm.Message, *llm.Usage, string, error) {
	start := r.now()
	line := modelCall{Time: start.UTC(), Type: "model", Model: t.ModelRef, Step: step, Tools: nTools, ToolBytes: toolBytes, RequestBytes: requestSize(req)}
	defer func() {
		line.DurationMS = float64(r.now().Sub(start).Microseconds()) / 1000
		if r.Log != nil {
			r.Log(t.Session, line)
		}
	}()
	for ev, err := range t.Model.Stream(ctx, req) {
		if err != nil {
			line.Outcome = "error"
			if ctx.Err() != nil {
				line.Outcome = "canceled"
				return nil, nil, "", ctx.Err()
			}
			return nil, nil, "", err
		}
		switch ev.Kind {
		case llm.EventText:
			r.observe(t, Event{Kind: EventText, Text: ev.Text})
		case llm.EventReasoning:
			r.observe(t, Event{Kind: EventReasoning, Text: ev.Text})
		case llm.EventDone:
			if ev.Message == nil {
				line.Outcome = "error"
				return nil, nil, "", errors.New("model: response without a message")
			}
			msg := *ev.Message
			msg.Role = llm.RoleAssistant
			msg.Parts = stampProvider(msg.Parts, t.provider())
			line.Usage, line.Finish = ev.Usage, ev.Finish
			line.Outcome = "ok"
			if len(msg.ToolCalls()) > 0 {
				line.Outcome = "tool_calls"
			}
			r.observe(t, Event{Kind: EventStep, Step: step, Usage: ev.Usage})
			return &msg, ev.Usage, ev.Finish, nil
		}
	}
	line.Outcome = "error"
	if ctx.Err() != nil {
		line.Outcome = "canceled"
		return nil, nil, "", ctx.Err()
	}
	return nil, nil, "", fmt.Errorf("model: %w", llm.ErrTruncated)
}

// requestSize is the canonical request's JSON size: a dialect-neutral measure of what a step
// sends (the provider body differs by a few percent per dialect).
func requestSize(req *llm.Request) int {
	b, err := json.Marshal(struct {
		System   string        `json:"system,omitempty"`
		Messages []llm.Message `json:"messages"`
		Tools    []llm.Tool    `json:"tools,omitempty"`
	}{req.System, req.Messages, req.Tools})
	if err != nil {
		return 0
	}
	return len(b)
}

// MaxParallelCalls bounds the tool calls of one step that run at once; the others wait their
// turn. Models make a few parallel calls, but a step's calls are the model's (or a broken
// provider's) to number: thousands of exec calls at once would start thousands of processes.
const MaxParallelCalls = 8

// runCalls runs a step's tool calls concurrently, MaxParallelCalls at a time, and returns their
// results in call order, one tool message each. A cancelled turn still answers every call (with
// the cancellation), so the transcript never holds a call without its result.
func (r *Runner) runCalls(ctx context.Context, t Turn, calls []llm.Part) ([]llm.Message, []ToolRun) {
	out := make([]llm.Message, len(calls))
	runs := make([]ToolRun, len(calls))
	var wg sync.WaitGroup
	slots := make(chan struct{}, MaxParallelCalls)
	for i, c := range calls {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			part := c
			r.observe(t, Event{Kind: EventToolStart, Call: &part})
			res := r.callTool(ctx, t.Session, c)
			r.observe(t, Event{Kind: EventToolEnd, Call: &part, Result: res})
			runs[i] = ToolRun{Call: c, Result: res}
			out[i] = llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{
				Kind: llm.KindToolResult, CallID: c.CallID, Name: c.Name, Text: resultText(res), IsError: res.IsError,
			}}}
		}()
	}
	wg.Wait()
	return out, runs
}

// callTool turns every failure into a result the model reads. A tool that panics does too: it
// runs on a goroutine of runCalls, where a panic would end the whole process, every session
// with it.
func (r *Runner) callTool(ctx context.Context, sess string, c llm.Part) (out *catalog.Result) {
	defer func() {
		if p := recover(); p != nil {
			if r.Logger != nil {
				r.Logger.Error("tool call panicked", "session", sess, "tool", c.Name, "panic", fmt.Sprint(p))
			}
			out = catalog.ErrorResult(fmt.Sprintf("Tool %q failed: it crashed.", c.Name))
		}
	}()
	if ctx.Err() != nil {
		return catalog.ErrorResult("The turn was cancelled before this tool call ran.")
	}
	args := c.Args
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	res, err := r.Tools.Call(ctx, sess, c.Name, args)
	switch {
	case errors.Is(err, dispatch.ErrUnknownTool):
		return catalog.ErrorResult(fmt.Sprintf("Unknown tool %q: it is not among the tools offered in this session.", c.Name))
	case errors.Is(err, dispatch.ErrDenied):
		return catalog.ErrorResult(fmt.Sprintf("Tool %q is denied by policy.", c.Name))
	case err != nil:
		if ctx.Err() != nil {
			return catalog.ErrorResult("The turn was cancelled while this tool call ran.")
		}
		return catalog.ErrorResult(fmt.Sprintf("Tool %q failed: %v", c.Name, err))
	case res == nil:
		return &catalog.Result{}
	}
	return res
}

// resultText is a result as the model reads it: its text parts, and a note for parts that
// are not text (images, resources) since not every dialect can carry them in a tool result.
func resultText(res *catalog.Result) string {
	s := res.Text()
	other := 0
	for _, c := range res.Content {
		if c.Type != "text" {
			other++
		}
	}
	if len(res.Structured) > 0 && s == "" {
		s = string(res.Structured)
	}
	if other > 0 {
		s += fmt.Sprintf("\n[%d non-text content part(s) omitted]", other)
	}
	return s
}

func (r *Runner) observe(t Turn, ev Event) {
	if t.Observe != nil {
		t.Observe(ev)
	}
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func addUsage(dst, u *llm.Usage) {
	dst.InputTokens += u.InputTokens
	dst.OutputTokens += u.OutputTokens
	dst.ReasoningTokens += u.ReasoningTokens
	dst.CacheReadTokens += u.CacheReadTokens
	dst.TotalTokens += u.TotalTokens
}

// errRemoved stops count from writing the counters of a session removed during its turn.
var errRemoved = errors.New("session removed")

// count adds a step to the session's counters: the token economy the web page shows.
func (r *Runner) count(ctx context.Context, t Turn, u *llm.Usage, nTools, toolBytes int, runs []ToolRun) {
	delta := map[string]int64{"model_calls": 1, "schema_count": int64(nTools), "schema_bytes": int64(toolBytes), "direct_schema_bytes": int64(t.DirectSchemaBytes)}
	if u != nil {
		delta["input_tokens"] = int64(u.InputTokens)
		delta["output_tokens"] = int64(u.OutputTokens)
	}
	for _, run := range runs {
		delta["tool_calls"]++
		switch run.Call.Name {
		case "tool_search", "tool_describe", "tool_call", "tool_search_code", "search_tool_bm25":
			delta[run.Call.Name]++
		}
		if tj, _, ok := tokenjuiceOf(run.Result); ok {
			delta["tokenjuice_saved_chars"] += int64(tj.RawChars - tj.CompactChars)
		}
	}
	_, err := r.Sessions.Update(ctx, t.Session, func(in *session.Info) error {
		if in.Created.IsZero() {
			// Removed since the step was stored: Update would create it again, empty.
			return errRemoved
		}
		if in.Counters == nil {
			in.Counters = map[string]int64{}
		}
		for k, v := range delta {
			in.Counters[k] += v
		}
		return nil
	})
	if err != nil && !errors.Is(err, errRemoved) && r.Logger != nil {
		r.Logger.Warn("session counters", "session", t.Session, "err", err)
	}
}

// provider is the provider id of the turn's model reference.
func (t *Turn) provider() string {
	p, _, _ := strings.Cut(t.ModelRef, "/")
	return p
}

// stampProvider records which provider produced the opaque parts of a message.
func stampProvider(parts []llm.Part, provider string) []llm.Part {
	for i := range parts {
		if len(parts[i].Raw) > 0 || len(parts[i].Meta) > 0 {
			parts[i].Provider = provider
		}
	}
	return parts
}

// ownOpaque returns the history with the opaque bytes of other providers' parts removed: a
// signature is valid only where it was made. Messages without such parts are shared, not copied.
func ownOpaque(history []llm.Message, provider string) []llm.Message {
	var out []llm.Message
	for i, m := range history {
		foreign := false
		for _, p := range m.Parts {
			if (len(p.Raw) > 0 || len(p.Meta) > 0) && p.Provider != "" && p.Provider != provider {
				foreign = true
				break
			}
		}
		if !foreign {
			if out != nil {
				out = append(out, m)
			}
			continue
		}
		if out == nil {
			out = append(make([]llm.Message, 0, len(history)), history[:i]...)
		}
		parts := make([]llm.Part, 0, len(m.Parts))
		for _, p := range m.Parts {
			if (len(p.Raw) > 0 || len(p.Meta) > 0) && p.Provider != "" && p.Provider != provider {
				if p.Kind == llm.KindReasoning {
					continue
				}
				p.Raw, p.Meta, p.Dialect, p.Provider = nil, nil, "", ""
			}
			parts = append(parts, p)
		}
		out = append(out, llm.Message{Role: m.Role, Parts: parts})
	}
	if out == nil {
		return history
	}
	return out
}
