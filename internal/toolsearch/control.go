package toolsearch

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/nodmix/nodmix/internal/catalog"
)

// Names of the control tools.
const (
	ToolSearch     = "tool_search"
	ToolDescribe   = "tool_describe"
	ToolCall       = "tool_call"
	ToolSearchCode = "tool_search_code"
)

func isControlName(name string) bool {
	switch name {
	case ToolSearch, ToolDescribe, ToolCall, ToolSearchCode:
		return true
	}
	return false
}

// IsControlTool reports whether t is one of nodmix's Tool Search control tools. Gates use it to
// leave the wrapper alone: the target calls it makes are gated themselves.
func IsControlTool(t *catalog.Tool) bool {
	return t != nil && isControlName(t.Name) && t.ID == catalog.ID(catalog.SourceBuiltin, "core", t.Name)
}

// ControlNames returns the control tools a mode exposes (reference §2.1.5).
func ControlNames(mode string) []string {
	if mode == ModeCode {
		return []string{ToolSearchCode}
	}
	return []string{ToolSearch, ToolDescribe, ToolCall}
}

// Model-facing definitions. Descriptions are short: they are what every request pays for.
const (
	descSearch = "Search this run's tool catalog; returns compact results (id, name, description, and `input`, a compact signature of the arguments). " +
		"Write queries in English and describe the task, e.g. \"create a GitHub issue\", or give an exact tool id or name. " +
		"Use `queries` to run up to 16 searches at once (50 results in total). " +
		"Then call a result with tool_call; use tool_describe first only when `input` is \"unknown\" or unclear."
	descDescribe = "Show one catalog tool's full description and exact input JSON schema, by the id (or name) tool_search returned."
	descCall     = "Call a catalog tool by the id (or name) tool_search returned, with its arguments under `args`. " +
		"Returns {tool, result}; policy, approvals and hooks apply as to any call."
	descCode = "Run JavaScript over this run's tool catalog. The code is the body of an async function: `return` its result. " +
		"Only console.log/warn/error and these exist: `await nodmix.tools.search(query, {limit})` returns compact hits " +
		"[{id, name, description, input}] (write queries in English); `await nodmix.tools.describe(id)` returns the exact input schema " +
		"in `parameters`; `await nodmix.tools.call(id, args)` runs a tool and returns {tool, result}, with JSON values in " +
		"`result.details` and text in `result.content`. Example: " +
		"`const [hit] = await nodmix.tools.search(\"create a GitHub issue\"); return (await nodmix.tools.call(hit.id, {title: \"Bug\"})).result;`"
)

var (
	schemaSearch = json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":["string","null"],"description":"What the tool should do, in English; or an exact tool id or name."},` +
		`"limit":{"type":["integer","null"],"minimum":1,"description":"Maximum number of results."},` +
		`"queries":{"type":["array","null"],"maxItems":16,"description":"Several searches at once; set limit on each.",` +
		`"items":{"type":"object","properties":{"query":{"type":"string","minLength":1,"maxLength":512},"limit":{"type":"integer","minimum":1}},"required":["query"],"additionalProperties":false}}}}`)
	schemaDescribe = json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"Tool id or name from tool_search."}},"required":["id"]}`)
	schemaCall     = json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"Tool id or name from tool_search."},"args":{"type":"object","description":"The tool's arguments."}},"required":["id"]}`)
	schemaCode     = json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","description":"Body of an async JavaScript function; nodmix.tools is in scope."}},"required":["code"],"additionalProperties":false}`)
)

// controlTool returns the definition of a control tool.
func controlTool(name string) catalog.Tool {
	t := catalog.Tool{
		ID:       catalog.ID(catalog.SourceBuiltin, "core", name),
		Name:     name,
		Source:   catalog.SourceBuiltin,
		Owner:    "core",
		LoadMode: catalog.Essential,
	}
	switch name {
	case ToolSearch:
		t.Label, t.Description, t.InputSchema = "Tool Search", descSearch, schemaSearch
	case ToolDescribe:
		t.Label, t.Description, t.InputSchema = "Tool Describe", descDescribe, schemaDescribe
	case ToolCall:
		t.Label, t.Description, t.InputSchema = "Tool Call", descCall, schemaCall
	case ToolSearchCode:
		t.Label, t.Description, t.InputSchema = "Tool Search Code", descCode, schemaCode
	}
	return t
}

// ControlTools returns the control tools of mode as catalog entries whose executors serve this
// run; the exposure layer adds them to the run's snapshot. It also records the surface for the
// run's telemetry.
func (r *Runtime) ControlTools(mode string) []catalog.Entry {
	tools := Surface(mode)
	entries := make([]catalog.Entry, len(tools))
	for i, t := range tools {
		entries[i] = catalog.Entry{Tool: t, Exec: r.executor(t.Name)}
	}
	r.mu.Lock()
	r.surface = surfaceStats{mode: mode, tools: len(tools), bytes: SurfaceBytes(tools)}
	r.mu.Unlock()
	return entries
}

// Surface returns the exact tool definitions a model receives up front in a Tool Search mode:
// the mode's control tools. The rest of the catalog is reached through them.
func Surface(mode string) []catalog.Tool {
	names := ControlNames(mode)
	tools := make([]catalog.Tool, len(names))
	for i, name := range names {
		tools[i] = controlTool(name)
	}
	return tools
}

// wireTool is a tool definition as it goes to a model (the MCP tools/list shape).
type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// SurfaceBytes is the size of tools serialized as the model receives them: a JSON array of
// {name, description, inputSchema}.
func SurfaceBytes(tools []catalog.Tool) int {
	wire := make([]wireTool, len(tools))
	for i := range tools {
		wire[i] = wireTool{Name: tools[i].Name, Description: tools[i].Description, InputSchema: tools[i].Schema()}
	}
	b, err := marshalJS(wire, false)
	if err != nil {
		return 0
	}
	return len(b)
}

// executor returns the executor of one control tool. Mistakes the model can fix come back as
// error results with the documented message.
func (r *Runtime) executor(name string) catalog.Executor {
	return catalog.ExecutorFunc(func(ctx context.Context, call catalog.Call) (*catalog.Result, error) {
		p, err := parseValue(call.Args)
		if err != nil || !p.isObject() {
			p = &value{kind: kObject}
		}
		var res *catalog.Result
		switch name {
		case ToolSearch:
			res, err = r.handleSearch(p)
		case ToolDescribe:
			res, err = r.handleDescribe(p)
		case ToolCall:
			res, err = r.handleCall(ctx, p)
		case ToolSearchCode:
			code := present(p.get("code"))
			if code == nil || code.kind != kString {
				return catalog.ErrorResult("code must be a non-empty string."), nil
			}
			return r.RunCode(ctx, code.str)
		}
		var ie *InputError
		if errors.As(err, &ie) {
			return catalog.ErrorResult(ie.Msg), nil
		}
		return res, err
	})
}

func (r *Runtime) handleSearch(p *value) (*catalog.Result, error) {
	b := r.budget
	req, err := r.parseSearchRequest(p, b)
	if err != nil {
		return nil, err
	}
	if len(req.batch) == 0 {
		hits, err := r.Search(req.scalar, req.limit)
		if err != nil {
			return nil, err
		}
		text, err := marshalJS(hits, true)
		if err != nil {
			return nil, err
		}
		return r.finish(string(text), nil, false, anyExternal(hits)), nil
	}
	groups := make([][]Descriptor, len(req.batch))
	external := false
	for i, q := range req.batch {
		r.searches.Add(1)
		groups[i] = r.rank(q.query, r.resolveLimit(q.limit))
		external = external || anyExternal(groups[i])
	}
	resp := shapeBatch(b, req.batch, groups)
	text, err := marshalJS(resp, true)
	if err != nil {
		return nil, err
	}
	structured, _ := marshalJS(resp, false)
	return r.finish(string(text), structured, false, external), nil
}

func anyExternal(hits []Descriptor) bool {
	for _, h := range hits {
		if h.Source != SourceNodmix {
			return true
		}
	}
	return false
}

func (r *Runtime) handleDescribe(p *value) (*catalog.Result, error) {
	id, err := readID(liftDescribeArgs(p))
	if err != nil {
		return nil, err
	}
	d, err := r.Describe(id)
	if err != nil {
		return nil, err
	}
	text, err := marshalReadable(d)
	if err != nil {
		return nil, err
	}
	structured, _ := marshalJS(d, false)
	return r.finish(string(text), structured, false, d.Source != SourceNodmix), nil
}

// callEnvelope is the text of a tool_call result (reference §2.6.7).
type callEnvelope struct {
	Tool struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Source string `json:"source"`
	} `json:"tool"`
	Result resultJSON `json:"result"`
	Status string     `json:"status,omitempty"`
}

func (r *Runtime) handleCall(ctx context.Context, p *value) (*catalog.Result, error) {
	id, args, err := r.readCallArgs(p)
	if err != nil {
		return nil, err
	}
	res, err := r.Call(ctx, id, args)
	if err != nil {
		return nil, err
	}
	var env callEnvelope
	env.Tool.ID, env.Tool.Name, env.Tool.Source = res.Tool.ID, res.Tool.Name, res.Tool.Source
	env.Result = toResultJSON(res.Result)
	text, err := marshalReadable(env)
	if err != nil {
		return nil, err
	}
	// The status is for programs reading the structured result; the model's text carries isError.
	if res.Result.IsError {
		env.Status = "error"
	}
	structured, _ := marshalJS(env, false)
	return r.finish(string(text), structured, res.Result.IsError, res.Tool.Source != SourceNodmix), nil
}
