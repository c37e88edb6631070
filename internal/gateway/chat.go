package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nodmix/nodmix/internal/agent"
	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/directive"
	"github.com/nodmix/nodmix/internal/llm"
)

// chatRequest is the Chat Completions request as nodmix reads it. Fields it does not model are
// kept and passed to the provider (Extra).
type chatRequest struct {
	Model         string          `json:"model"`
	Messages      []chatMessage   `json:"messages"`
	Tools         []chatTool      `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
	User                string   `json:"user"`
	N                   *int     `json:"n"`

	// loose names the first tool result that no earlier message of the request calls for:
	// in a kept session it may answer the calls the last turn ended with, elsewhere nothing.
	loose string
}

// known are the request keys nodmix models; the rest pass through.
var chatKnown = map[string]bool{"model": true, "messages": true, "tools": true, "tool_choice": true, "stream": true,
	"stream_options": true, "max_tokens": true, "max_completion_tokens": true, "temperature": true, "user": true,
	"parallel_tool_calls": true, "n": true}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
}

type chatToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

// contentPart is one part of a content array. Text is a pointer to tell a part without text
// from an empty one; image_url is read by the part's type: Chat Completions' {"url": "…"}, or
// the Responses API's bare URL string.
type contentPart struct {
	Type     string          `json:"type"`
	Text     *string         `json:"text"`
	ImageURL json.RawMessage `json:"image_url"`
}

// parseChat decodes and checks a Chat Completions body into a turn.
func parseChat(body []byte) (*chatRequest, app.TurnRequest, error) {
	var cr chatRequest
	if err := strictTypes(body, &cr); err != nil {
		return nil, app.TurnRequest{}, err
	}
	var tr app.TurnRequest
	if len(cr.Messages) == 0 {
		return nil, tr, bad("messages", "must hold at least one message")
	}
	tr.Model, tr.Stream, tr.Temperature = cr.Model, cr.Stream, cr.Temperature
	tr.MaxTokens = cr.MaxCompletionTokens
	if tr.MaxTokens == 0 {
		tr.MaxTokens = cr.MaxTokens
	}
	if tr.MaxTokens < 0 {
		return nil, tr, bad("max_tokens", "must be positive")
	}
	if cr.N != nil && *cr.N != 1 {
		return nil, tr, bad("n", "must be 1: a turn has one answer")
	}
	tc, err := toolChoice(cr.ToolChoice)
	if err != nil {
		return nil, tr, err
	}
	tr.ToolChoice = tc
	names := map[string]int{}
	for i, t := range cr.Tools {
		if t.Type != "function" {
			return nil, tr, bad(fmt.Sprintf("tools[%d].type", i), "must be \"function\"")
		}
		if err := toolName(fmt.Sprintf("tools[%d].function.name", i), t.Function.Name, i, names); err != nil {
			return nil, tr, err
		}
		params, err := toolParams(fmt.Sprintf("tools[%d].function.parameters", i), t.Function.Parameters)
		if err != nil {
			return nil, tr, err
		}
		tr.ClientTools = append(tr.ClientTools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: params})
	}
	var sys []string
	var calls callIDs
	for i, m := range cr.Messages {
		msg, system, err := chatToCanonical(fmt.Sprintf("messages[%d]", i), m)
		if err != nil {
			return nil, tr, err
		}
		if err := calls.see(msg, fmt.Sprintf("messages[%d].tool_call_id", i), &cr.loose); err != nil {
			return nil, tr, err
		}
		if msg.Role == llm.RoleAssistant && len(msg.Parts) == 0 {
			return nil, tr, emptyAssistant(fmt.Sprintf("messages[%d].content", i))
		}
		if system != "" {
			sys = append(sys, system)
			continue
		}
		tr.Input = append(tr.Input, msg)
	}
	tr.System = strings.Join(sys, "\n\n")
	tr.ExtraAPI = "openai-completions"
	tr.Extra, err = extraFields(body, chatKnown)
	if err != nil {
		return nil, tr, err
	}
	return &cr, tr, nil
}

// chatToCanonical reads one message; field names it in errors.
func chatToCanonical(field string, m chatMessage) (msg llm.Message, system string, err error) {
	switch m.Role {
	case "system", "developer":
		text, _, err := contentText(field+".content", m.Content, false)
		if err != nil {
			return msg, "", err
		}
		if text == "" {
			text = " "
		}
		return msg, text, nil
	case "user":
		text, parts, err := contentText(field+".content", m.Content, true)
		if err != nil {
			return msg, "", err
		}
		if parts == nil {
			parts = []llm.Part{{Kind: llm.KindText, Text: text}}
		}
		return llm.Message{Role: llm.RoleUser, Parts: parts}, "", nil
	case "assistant":
		text, _, err := contentText(field+".content", m.Content, false)
		if err != nil {
			return msg, "", err
		}
		msg.Role = llm.RoleAssistant
		if text != "" {
			msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindText, Text: text})
		}
		ids := map[string]int{}
		for j, tc := range m.ToolCalls {
			at := fmt.Sprintf("%s.tool_calls[%d]", field, j)
			if tc.ID == "" {
				return msg, "", bad(at+".id", "is required")
			}
			if k, ok := ids[tc.ID]; ok {
				// Providers refuse two calls of one id, and a result could answer either.
				return msg, "", bad(at+".id", "repeats tool_calls[%d]", k)
			}
			ids[tc.ID] = j
			if tc.Type != "" && tc.Type != "function" {
				// Left out, it is taken for "function": clients that rebuild calls by hand do.
				return msg, "", bad(at+".type", "must be \"function\"")
			}
			if err := callName(at+".function.name", tc.Function.Name); err != nil {
				return msg, "", err
			}
			args, err := callArgs(at+".function.arguments", tc.Function.Arguments)
			if err != nil {
				return msg, "", err
			}
			msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindToolCall, CallID: tc.ID, Name: tc.Function.Name, Args: args})
		}
		return msg, "", nil
	case "tool":
		text, _, err := contentText(field+".content", m.Content, false)
		if err != nil {
			return msg, "", err
		}
		if m.ToolCallID == "" {
			return msg, "", bad(field+".tool_call_id", "is required for a tool message")
		}
		return llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: m.ToolCallID, Name: m.Name, Text: text}}}, "", nil
	}
	return msg, "", bad(field+".role", "must be one of system, developer, user, assistant, tool")
}

// contentText reads a content value: a string, null, or an array of parts (text, and images
// where allowed).
func contentText(field string, raw json.RawMessage, images bool) (string, []llm.Part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", nil, bad(field, "must be a string or an array of content parts")
		}
		return s, nil, nil
	}
	if raw[0] != '[' {
		return "", nil, bad(field, "must be a string or an array of content parts")
	}
	var ps []contentPart
	// Decoded strictly: a wrong type inside a part is named by the part's own field.
	if err := strictAt(field, raw, &ps); err != nil {
		return "", nil, err
	}
	// A builder, not +=: a body may hold a million parts, and adding each to a copy of the
	// text before it was quadratic (hours of CPU for one request).
	var text strings.Builder
	var parts []llm.Part
	for j, p := range ps {
		at := fmt.Sprintf("%s[%d]", field, j)
		switch p.Type {
		case "text", "input_text", "output_text":
			if p.Text == nil {
				// A part without its text is a client's mistake, not an empty message.
				return "", nil, bad(at+".text", "is required in a part of type %s", p.Type)
			}
			text.WriteString(*p.Text)
			if images { // only a user message keeps its parts
				parts = append(parts, llm.Part{Kind: llm.KindText, Text: *p.Text})
			}
		case "image_url", "input_image":
			if !images {
				return "", nil, bad(at+".type", "images are only accepted in user messages")
			}
			url, err := partImage(at, p)
			if err != nil {
				return "", nil, err
			}
			parts = append(parts, llm.Part{Kind: llm.KindImage, ImageURL: url})
		default:
			return "", nil, bad(at+".type", "must be text or image_url (input_text or input_image)")
		}
	}
	return text.String(), parts, nil
}

// partImage is the URL of an image part at field at: an image_url part holds {"url": "…"}, as
// OpenAI's Chat Completions documents it; an input_image part (Responses API) holds the URL
// itself, or, as nodmix took before, the object.
func partImage(at string, p contentPart) (string, error) {
	raw := bytes.TrimSpace(p.ImageURL)
	field := at + ".image_url"
	var url string
	switch {
	case len(raw) == 0 || string(raw) == "null":
	case raw[0] == '"' && p.Type == "input_image":
		if err := strictAt(field, raw, &url); err != nil {
			return "", err
		}
	case raw[0] == '{':
		var obj struct {
			URL *string `json:"url"`
		}
		if err := strictAt(field, raw, &obj); err != nil {
			return "", err
		}
		if obj.URL != nil {
			url = *obj.URL
		}
		field += ".url"
	case p.Type == "image_url":
		// A bare URL string here is not OpenAI's wire format; taken, it would fail later
		// in a provider's encoder without naming the field.
		return "", bad(field, `must be an object {"url": "…"}`)
	default:
		return "", bad(field, "must be a string")
	}
	if url == "" {
		if p.Type == "image_url" && field == at+".image_url" {
			field += ".url"
		}
		return "", bad(field, "is required")
	}
	url, ok := cleanDataURL(url)
	if !ok {
		// A provider refuses it, in this turn and every later one of the session it would be
		// stored in.
		return "", bad(field, "is a base64 data URL whose data is not valid base64")
	}
	return url, nil
}

// cleanDataURL returns url without the ASCII whitespace in its data when it is a base64 data URL
// (data:<type>;base64,<data>), and whether that data is then valid base64 (standard alphabet,
// padded or not); any other URL comes back as it is. Browsers read base64 data wrapped in lines
// (as `base64` writes it), so clients send it; providers' decoders may not, and the session keeps
// what is stored, so the data is stored unwrapped. It reads the data without decoding it: an
// image may be most of a 32 MB body.
func cleanDataURL(url string) (string, bool) {
	if len(url) < 5 || !strings.EqualFold(url[:5], "data:") {
		return url, true
	}
	meta, data, ok := strings.Cut(url[5:], ",")
	if !ok || len(meta) < 7 || !strings.EqualFold(meta[len(meta)-7:], ";base64") {
		return url, true // not base64: the provider reads it as it is
	}
	if strings.ContainsAny(data, " \t\n\f\r") {
		data = strings.Map(func(r rune) rune {
			switch r {
			case ' ', '\t', '\n', '\f', '\r':
				return -1
			}
			return r
		}, data)
		url = url[:5+len(meta)+1] + data
	}
	return url, validBase64(data)
}

// validBase64 reports whether data is base64 in the standard alphabet, padded or not.
func validBase64(data string) bool {
	n := len(data)
	if n == 0 {
		return false
	}
	pad := 0
	for pad < 2 && n > 0 && data[n-1] == '=' {
		n--
		pad++
	}
	for i := 0; i < n; i++ {
		switch c := data[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/':
		default:
			return false
		}
	}
	if pad > 0 {
		return (n+pad)%4 == 0
	}
	return n%4 != 1 // unpadded: a last group of one character holds no byte
}

// toolName checks the name of the client tool at index i, a provider-facing tool name, against
// the names of the tools before it (names): a provider refuses two tools of one name, and a
// call could mean either.
func toolName(field, name string, i int, names map[string]int) error {
	if !catalog.ValidName(name) {
		return bad(field, "must match "+catalog.NamePattern)
	}
	if k, ok := names[name]; ok {
		return bad(field, "repeats tools[%d]", k)
	}
	names[name] = i
	return nil
}

// callName checks the function name of a tool call in the history: it goes back to the
// provider, which holds it to the rule tool names follow.
func callName(field, name string) error {
	if name == "" {
		return bad(field, "is required")
	}
	if !catalog.ValidName(name) {
		return bad(field, "must match "+catalog.NamePattern)
	}
	return nil
}

// callArgs is a tool call's arguments: a string holding a JSON object, as OpenAI's calls carry
// them; "" stands for a call without arguments ({}), as nodmix took it before, and so does
// "null", which models write for a function without parameters.
func callArgs(field, s string) (json.RawMessage, error) {
	if t := strings.TrimSpace(s); t == "" || t == "null" {
		return json.RawMessage(`{}`), nil
	}
	args := json.RawMessage(s)
	if t := bytes.TrimSpace(args); len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		// Providers take a call's input as an object; anything else fails the turn and
		// every later one of the session.
		return nil, bad(field, "must be a string holding a JSON object")
	}
	return args, nil
}

// toolParams is a declared tool's parameters: a JSON Schema object, or none.
func toolParams(field string, raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	if raw[0] != '{' {
		return nil, bad(field, "must be a JSON Schema object")
	}
	return raw, nil
}

// callIDs are the tool calls of a request's latest assistant message, to pair the tool results
// after it with: providers refuse a result that answers no call of the assistant message before
// it, in this turn and every later one of the session it would be stored in.
type callIDs struct {
	ids  map[string]bool // nil until an assistant message came: the results after it answer its calls
	last bool            // the message before was an assistant message
}

// see takes the next message; a tool result that answers no call is an error naming field,
// unless no assistant message came before it, when field goes to *loose (the first only).
func (c *callIDs) see(m llm.Message, field string, loose *string) error {
	if m.Role == llm.RoleAssistant && !c.last {
		// Assistant messages in a row are one (the Responses API gives each call an item).
		c.ids = map[string]bool{}
	}
	c.last = m.Role == llm.RoleAssistant
	for _, p := range m.Parts {
		switch p.Kind {
		case llm.KindToolCall:
			c.ids[p.CallID] = true
		case llm.KindToolResult:
			switch {
			case c.ids[p.CallID]:
			case c.ids != nil:
				return bad(field, "answers no tool call: the assistant message before it does not call %q", p.CallID)
			case *loose == "":
				*loose = field
			}
		}
	}
	return nil
}

// emptyAssistant refuses an assistant message with nothing in it: providers refuse it, in
// this turn and every later one of the session it would be stored in.
func emptyAssistant(field string) error {
	return bad(field, "an assistant message needs content or tool_calls")
}

// looseResult refuses a request whose tool result answers no call when there is no session
// whose calls it could answer.
func looseResult(field string, kept bool) error {
	if field == "" || kept {
		return nil
	}
	return bad(field, "answers no tool call: no earlier message calls it, and without %s or user there is no session whose calls it could answer", SessionHeader)
}

func toolChoice(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "none", "required":
			return s, nil
		}
	}
	return "", bad("tool_choice", "must be auto, none or required (naming one function is not supported)")
}

func (api *API) chat(w http.ResponseWriter, r *http.Request) {
	cr, tr, release, ok := openTurn(api, w, r, parseChat, func(cr *chatRequest) (string, string) { return cr.User, cr.loose })
	if !ok {
		return
	}
	defer release()
	id := "chatcmpl-" + randomID()
	created := time.Now().Unix()
	// The model the turn runs, when the request names none: set once, before any event.
	model := cr.Model
	tr.Planned = func(ref string) {
		if model == "" {
			model = ref
		}
	}
	if !cr.Stream {
		res, err := api.Agent.Turn(r.Context(), tr)
		if err != nil {
			writeTurnError(w, err)
			return
		}
		if model == "" {
			model = res.Model
		}
		msg := chatMessageOut{Role: "assistant", Content: ptr(res.Text), ToolCalls: toolCallsOut(res.ClientCalls, false)}
		if res.Text == "" && len(msg.ToolCalls) > 0 {
			// null, as OpenAI's: clients read a content that is not null as the answer and
			// skip the calls (the Agents SDK), and providers refuse it sent back empty.
			msg.Content = nil
		}
		if res.Levels.Reasoning == "on" || res.Levels.Reasoning == "stream" {
			msg.ReasoningContent = reasoningText(res.Message)
		}
		msg.Trace = traceOf(res)
		writeJSON(w, http.StatusOK, chatCompletion{ID: id, Object: "chat.completion", Created: created, Model: model,
			Choices: []chatChoice{{Index: 0, Message: &msg, FinishReason: finishReason(&res.Result)}}, Usage: usageOut(res.Usage)})
		return
	}
	sse := newSSE(w)
	includeUsage := cr.StreamOptions != nil && cr.StreamOptions.IncludeUsage
	chunk := func(delta chatOut, finish *string) any {
		c := chatCompletion{ID: id, Object: "chat.completion.chunk", Created: created, Model: model,
			Choices: []chatChoice{{Index: 0, Delta: &delta, FinishReason: finish}}}
		if includeUsage {
			// OpenAI: with include_usage, every chunk but the last carries "usage": null.
			return struct {
				chatCompletion
				Usage *chatUsage `json:"usage"`
			}{chatCompletion: c}
		}
		return c
	}
	// The stream opens once the turn is planned: what it refuses before that (an unknown
	// model, say) is answered with its status, as OpenAI does.
	var opened sync.Once
	open := func() {
		opened.Do(func() { sse.event("", chunk(chatOut{Role: "assistant", Content: ptr("")}, nil)) })
	}
	var showReasoning atomic.Bool
	tr.Levels = func(l directive.Resolved) {
		showReasoning.Store(l.Reasoning == "on" || l.Reasoning == "stream")
		open()
	}
	tr.Observe = func(ev agent.Event) {
		open()
		switch ev.Kind {
		case agent.EventText:
			sse.event("", chunk(chatOut{Content: ptr(ev.Text)}, nil))
		case agent.EventReasoning:
			// /reasoning on: the reasoning goes out beside the answer, in the field
			// OpenAI-compatible reasoning models use; clients that do not know it skip it.
			if showReasoning.Load() {
				sse.event("", chunk(chatOut{ReasoningContent: ev.Text}, nil))
			}
		case agent.EventToolStart, agent.EventToolEnd:
			sse.event("", toolProgress(id, created, model, ev))
		}
	}
	res, err := api.Agent.Turn(r.Context(), tr)
	if err != nil && !sse.begun() {
		writeTurnError(w, err)
		return
	}
	if err != nil {
		_, typ, code := turnStatus(err)
		sse.event("", newAPIError(typ, code, err.Error()))
		return
	}
	if model == "" {
		model = res.Model // a directive-only message is answered before any model is planned
	}
	open()
	if res.Directive && res.Text != "" {
		// A directive-only message is answered without a model: its reply was not streamed.
		sse.event("", chunk(chatOut{Content: ptr(res.Text)}, nil))
	}
	if len(res.ClientCalls) > 0 {
		sse.event("", chunk(chatOut{ToolCalls: toolCallsOut(res.ClientCalls, true)}, nil))
	}
	if trace := traceOf(res); len(trace) > 0 {
		// /trace on: the plugin trace lines follow the reply.
		sse.event("", chunk(chatOut{Trace: trace}, nil))
	}
	sse.event("", chunk(chatOut{}, finishReason(&res.Result)))
	if includeUsage {
		sse.event("", chatCompletion{ID: id, Object: "chat.completion.chunk", Created: created, Model: model, Choices: []chatChoice{}, Usage: usageOut(res.Usage)})
	}
	sse.event("", []byte("[DONE]"))
}

// toolProgress is a chunk with no choices that says a server-side tool call started or ended:
// OpenAI clients skip it, nodmix's page shows it.
func toolProgress(id string, created int64, model string, ev agent.Event) any {
	type tool struct {
		Phase   string          `json:"phase"`
		CallID  string          `json:"call_id"`
		Name    string          `json:"name"`
		Args    json.RawMessage `json:"args,omitempty"`
		IsError bool            `json:"is_error,omitempty"`
	}
	t := tool{Phase: "start", CallID: ev.Call.CallID, Name: ev.Call.Name, Args: ev.Call.Args}
	if ev.Kind == agent.EventToolEnd {
		t.Phase, t.Args = "end", nil
		t.IsError = ev.Result != nil && ev.Result.IsError
	}
	if len(t.Args) > 0 && !json.Valid(t.Args) {
		t.Args = nil
	}
	return struct {
		ID      string       `json:"id"`
		Object  string       `json:"object"`
		Created int64        `json:"created"`
		Model   string       `json:"model"`
		Choices []chatChoice `json:"choices"`
		Tool    tool         `json:"nodmix_tool"`
	}{id, "chat.completion.chunk", created, model, []chatChoice{}, t}
}

type chatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *chatUsage   `json:"usage,omitempty"`
}

type chatChoice struct {
	Index        int             `json:"index"`
	Message      *chatMessageOut `json:"message,omitempty"`
	Delta        *chatOut        `json:"delta,omitempty"`
	FinishReason *string         `json:"finish_reason"`
}

type chatOut struct {
	Role             string  `json:"role,omitempty"`
	Content          *string `json:"content,omitempty"`
	ReasoningContent string  `json:"reasoning_content,omitempty"`
	// Trace holds the /trace lines (nodmix's own field; OpenAI clients ignore it).
	Trace     []string       `json:"nodmix_trace,omitempty"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
}

// chatMessageOut is the message of a whole completion: its content is always there, null
// when the message only calls tools.
type chatMessageOut struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	Trace            []string       `json:"nodmix_trace,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
}

type chatUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usageOut(u llm.Usage) *chatUsage {
	total := u.TotalTokens
	if total == 0 {
		total = u.InputTokens + u.OutputTokens
	}
	return &chatUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: total}
}

func toolCallsOut(calls []llm.Part, indexed bool) []chatToolCall {
	var out []chatToolCall
	for i, c := range calls {
		tc := chatToolCall{ID: c.CallID, Type: "function"}
		if indexed {
			tc.Index = ptr(i)
		}
		tc.Function.Name = c.Name
		tc.Function.Arguments = string(c.Args)
		if tc.Function.Arguments == "" {
			tc.Function.Arguments = "{}"
		}
		out = append(out, tc)
	}
	return out
}

func finishReason(res *agent.Result) *string {
	switch {
	case len(res.ClientCalls) > 0:
		return ptr("tool_calls")
	case res.Finish == "length":
		return ptr("length")
	case res.Finish == "content_filter":
		return ptr("content_filter")
	}
	return ptr("stop")
}

func ptr[T any](v T) *T { return &v }

// reasoningText is the readable reasoning of a message.
func reasoningText(m llm.Message) string {
	var b bytes.Buffer
	for _, p := range m.Parts {
		if p.Kind == llm.KindReasoning && p.Text != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// traceOf is a turn's /trace lines, when the session's trace level asks for them.
func traceOf(res *app.TurnResult) []string {
	if res.Levels.Trace != "on" && res.Levels.Trace != "raw" {
		return nil
	}
	return agent.TraceLines(res.Tools)
}
