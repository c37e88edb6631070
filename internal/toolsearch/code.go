package toolsearch

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/sandbox"
)

// Runner runs tool_search_code: the model's code as the body of an async function, with only
// console and nodmix.tools (the Bridge) in reach. *sandbox.Pool implements it. Run returns a
// *sandbox.CodeError for failures of the code that the model should read, and any other error for
// failures of the sandbox itself; Available reports whether a sandbox can start here.
// Implementations must be safe for concurrent use.
type Runner interface {
	Run(ctx context.Context, code string, b sandbox.Bridge, lim sandbox.Limits) (*sandbox.Result, error)
	Available(ctx context.Context) error
}

var _ Runner = (*sandbox.Pool)(nil)

// ResolveMode returns the mode a run uses: tools when asked for, and also when code mode was asked
// for but no sandbox can start here (reference §2.1.2: before the catalog is compacted, so the
// model is never offered a code tool that cannot run). A nil runner cannot start.
func ResolveMode(ctx context.Context, opts Options, runner Runner) string {
	opts = opts.Normalize()
	if opts.Mode == ModeTools {
		return ModeTools
	}
	if runner == nil || runner.Available(ctx) != nil {
		return ModeTools
	}
	return ModeCode
}

// bridge serves nodmix.tools for one tool_search_code invocation. It records whether any MCP or
// client entry surfaced, so the result can be marked as external content.
type bridge struct {
	r        *Runtime
	external atomic.Bool
}

var _ sandbox.Bridge = (*bridge)(nil)

// Search is nodmix.tools.search(query, {limit}); a missing or invalid limit means the default.
func (b *bridge) Search(_ context.Context, query string, limit int) (json.RawMessage, error) {
	hits, err := b.r.Search(query, max(limit, 0))
	if err != nil {
		return nil, err
	}
	if anyExternal(hits) {
		b.external.Store(true)
	}
	return marshalJS(hits, false)
}

// Describe is nodmix.tools.describe(id).
func (b *bridge) Describe(_ context.Context, id string) (json.RawMessage, error) {
	d, err := b.r.describe(id, codeSurface)
	if err != nil {
		return nil, err
	}
	if d.Source != SourceNodmix {
		b.external.Store(true)
	}
	return marshalJS(d, false)
}

// Call is nodmix.tools.call(id, args): it returns {tool, result}, JSON values in result.details.
func (b *bridge) Call(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
	if t := strings.TrimSpace(string(args)); t == "" || t == "null" {
		args = json.RawMessage(`{}`)
	}
	res, err := b.r.call(ctx, id, args, codeSurface)
	if err != nil {
		return nil, err
	}
	if res.Tool.Source != SourceNodmix {
		b.external.Store(true)
	}
	return marshalJS(struct {
		Tool   Descriptor `json:"tool"`
		Result resultJSON `json:"result"`
	}{res.Tool, toResultJSON(res.Result)}, false)
}

// codeResult is the text of a successful tool_search_code call (reference §2.7.9).
type codeResult struct {
	OK        bool            `json:"ok"`
	Value     json.RawMessage `json:"value"`
	Logs      []string        `json:"logs"`
	Telemetry codeTelemetry   `json:"telemetry"`
}

// RunCode runs one tool_search_code call and returns the result the model reads: the value, the
// logs and the run's telemetry, or the code's failure as an error result. Every bridged call goes
// through the dispatch pipeline. It returns a Go error only when the sandbox itself failed.
func (r *Runtime) RunCode(ctx context.Context, code string) (*catalog.Result, error) {
	if strings.TrimSpace(code) == "" {
		return catalog.ErrorResult("code must be a non-empty string."), nil
	}
	if r.runner == nil {
		return catalog.ErrorResult(codeUnavailable), nil
	}
	b := &bridge{r: r}
	out, err := r.runner.Run(ctx, code, b, sandbox.Limits{Timeout: r.opts.CodeTimeout})
	var ce *sandbox.CodeError
	switch {
	case errors.As(err, &ce):
		return r.finish(ce.Message, nil, true, b.external.Load()), nil
	case errors.Is(err, sandbox.ErrUnavailable):
		r.log.Warn("tool_search_code: sandbox unavailable", "err", err)
		return catalog.ErrorResult(codeUnavailable), nil
	case err != nil:
		return nil, err
	}
	res := codeResult{OK: true, Value: rawOrNull(out.Value), Logs: out.Logs, Telemetry: r.codeTelemetry()}
	if res.Logs == nil {
		res.Logs = []string{}
	}
	text, err := marshalReadable(res)
	if err != nil {
		return nil, err
	}
	compactRes, _ := marshalJS(res, false)
	return r.finish(string(text), compactRes, false, b.external.Load()), nil
}

const codeUnavailable = "tool_search_code is unavailable: no sandbox can start here. Use tool_search, tool_describe and tool_call instead, or set tools.toolSearch.mode to \"tools\"."

// finish builds a control result, marking it as external content when MCP or client metadata
// or results are in it.
func (r *Runtime) finish(text string, structured json.RawMessage, isError, external bool) *catalog.Result {
	if external {
		text = wrapExternal(text)
	}
	res := catalog.TextResult(text)
	res.IsError = isError
	if len(structured) > 0 {
		res.Structured = structured
	}
	return res
}
