package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/nodmix/nodmix/internal/agent"
	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/directive"
	"github.com/nodmix/nodmix/internal/llm"
)

// respRequest is the Responses API request as nodmix reads it; other fields pass through.
type respRequest struct {
	Model           string          `json:"model"`
	Input           json.RawMessage `json:"input"`
	Instructions    string          `json:"instructions"`
	Tools           []respTool      `json:"tools"`
	ToolChoice      json.RawMessage `json:"tool_choice"`
	Stream          bool            `json:"stream"`
	MaxOutputTokens int             `json:"max_output_tokens"`
	Temperature     *float64        `json:"temperature"`
	User            string          `json:"user"`
	PreviousID      string          `json:"previous_response_id"`

	loose string // as chatRequest.loose
}

var respKnown = map[string]bool{"model": true, "input": true, "instructions": true, "tools": true, "tool_choice": true,
	"stream": true, "max_output_tokens": true, "temperature": true, "user": true, "store": true, "parallel_tool_calls": true,
	"previous_response_id": true, "include": true}

type respTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type respItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

func parseResponses(body []byte) (*respRequest, app.TurnRequest, error) {
	var rr respRequest
	var tr app.TurnRequest
	if err := strictTypes(body, &rr); err != nil {
		return nil, tr, err
	}
	tr.Model, tr.Stream, tr.Temperature, tr.MaxTokens, tr.System = rr.Model, rr.Stream, rr.Temperature, rr.MaxOutputTokens, rr.Instructions
	if rr.PreviousID != "" {
		// nodmix keeps no response objects to continue from; ignored, the turn would run
		// without the conversation the client means.
		return nil, tr, bad("previous_response_id", "is not kept by nodmix: continue a conversation with the %s header or user, or send it whole in input", SessionHeader)
	}
	if tr.MaxTokens < 0 {
		return nil, tr, bad("max_output_tokens", "must be positive")
	}
	tc, err := toolChoice(rr.ToolChoice)
	if err != nil {
		return nil, tr, err
	}
	tr.ToolChoice = tc
	names := map[string]int{}
	for i, t := range rr.Tools {
		if t.Type != "function" {
			return nil, tr, bad(fmt.Sprintf("tools[%d].type", i), "must be \"function\" (built-in OpenAI tools run at OpenAI, not here)")
		}
		if err := toolName(fmt.Sprintf("tools[%d].name", i), t.Name, i, names); err != nil {
			return nil, tr, err
		}
		params, err := toolParams(fmt.Sprintf("tools[%d].parameters", i), t.Parameters)
		if err != nil {
			return nil, tr, err
		}
		tr.ClientTools = append(tr.ClientTools, llm.Tool{Name: t.Name, Description: t.Description, Parameters: params})
	}
	in := bytes.TrimSpace(rr.Input)
	switch {
	case len(in) == 0 || string(in) == "null":
		return nil, tr, bad("input", "is required")
	case in[0] == '"':
		var s string
		_ = json.Unmarshal(in, &s)
		tr.Input = []llm.Message{textMessage(llm.RoleUser, s)}
	default:
		if in[0] != '[' {
			return nil, tr, bad("input", "must be a string or an array of input items")
		}
		var items []respItem
		if err := strictAt("input", in, &items); err != nil {
			return nil, tr, err
		}
		var sys []string
		if tr.System != "" {
			sys = append(sys, tr.System)
		}
		var calls callIDs
		empty := "" // an assistant message item with no text, unless calls follow it
		// The call items of the assistant message being built, by call_id.
		callAt := map[string]int{}
		for i, it := range items {
			field := fmt.Sprintf("input[%d]", i)
			if empty != "" && it.Type != "function_call" {
				return nil, tr, emptyAssistant(empty)
			}
			empty = ""
			if it.Type == "function_call_output" || (it.Type == "" || it.Type == "message") && it.Role != "assistant" {
				clear(callAt) // the assistant message the calls were part of is over
			}
			switch {
			case it.Type == "function_call":
				if it.CallID == "" {
					return nil, tr, bad(field+".call_id", "is required")
				}
				if k, ok := callAt[it.CallID]; ok {
					// The calls become one assistant message, which providers refuse with
					// two calls of one id.
					return nil, tr, bad(field+".call_id", "repeats input[%d]", k)
				}
				callAt[it.CallID] = i
				if err := callName(field+".name", it.Name); err != nil {
					return nil, tr, err
				}
				args, err := callArgs(field+".arguments", it.Arguments)
				if err != nil {
					return nil, tr, err
				}
				p := llm.Part{Kind: llm.KindToolCall, CallID: it.CallID, Name: it.Name, Args: args}
				_ = calls.see(llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{p}}, "", &rr.loose)
				tr.Input = appendAssistant(tr.Input, p)
			case it.Type == "function_call_output":
				if it.CallID == "" {
					return nil, tr, bad(field+".call_id", "is required")
				}
				text, _, err := outputText(field+".output", it.Output)
				if err != nil {
					return nil, tr, err
				}
				m := llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: it.CallID, Text: text}}}
				if err := calls.see(m, field+".call_id", &rr.loose); err != nil {
					return nil, tr, err
				}
				tr.Input = append(tr.Input, m)
			case it.Type == "reasoning":
				// Reasoning items of another provider's run are not sent on.
			case it.Type == "" || it.Type == "message":
				m := chatMessage{Role: it.Role, Content: it.Content}
				msg, system, err := chatToCanonical(field, m)
				if err != nil {
					return nil, tr, err
				}
				if system != "" {
					sys = append(sys, system)
					continue
				}
				_ = calls.see(msg, "", &rr.loose)
				if msg.Role == llm.RoleAssistant && len(msg.Parts) == 0 {
					empty = field + ".content"
				}
				tr.Input = append(tr.Input, msg)
			default:
				return nil, tr, bad(field+".type", "must be message, function_call or function_call_output")
			}
		}
		if empty != "" {
			return nil, tr, emptyAssistant(empty)
		}
		tr.System = strings.Join(sys, "\n\n")
	}
	if len(tr.Input) == 0 {
		return nil, tr, bad("input", "must hold at least one message")
	}
	tr.ExtraAPI = "openai-responses"
	tr.Extra, err = extraFields(body, respKnown)
	return &rr, tr, err
}

// appendAssistant adds a tool call to the trailing assistant message, or starts one.
func appendAssistant(msgs []llm.Message, p llm.Part) []llm.Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == llm.RoleAssistant {
		msgs[n-1].Parts = append(msgs[n-1].Parts, p)
		return msgs
	}
	return append(msgs, llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{p}})
}

func outputText(field string, raw json.RawMessage) (string, []llm.Part, error) {
	return contentText(field, raw, false)
}

// Response objects.
type respObject struct {
	ID        string     `json:"id"`
	Object    string     `json:"object"`
	CreatedAt int64      `json:"created_at"`
	Status    string     `json:"status"`
	Model     string     `json:"model"`
	Output    []respOut  `json:"output"`
	Usage     *respUsage `json:"usage"`
	Error     *apiErrObj `json:"error"`
	// IncompleteDetails says why a response with status incomplete stopped; null otherwise.
	IncompleteDetails *incompleteDetails `json:"incomplete_details"`
}

type incompleteDetails struct {
	Reason string `json:"reason"` // max_output_tokens or content_filter
}

// finish sets the status of a response whose turn ended with finish: completed, or
// incomplete with its reason when the output was cut short.
func (o *respObject) finish(finish string) {
	o.Status = "completed"
	switch finish {
	case "length":
		o.Status, o.IncompleteDetails = "incomplete", &incompleteDetails{Reason: "max_output_tokens"}
	case "content_filter":
		o.Status, o.IncompleteDetails = "incomplete", &incompleteDetails{Reason: "content_filter"}
	}
}

type apiErrObj struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type respOut struct {
	Type      string        `json:"type"`
	ID        string        `json:"id"`
	Status    string        `json:"status"`
	Role      string        `json:"role,omitempty"`
	Content   []respContent `json:"content,omitempty"`
	CallID    string        `json:"call_id,omitempty"`
	Name      string        `json:"name,omitempty"`
	Arguments *string       `json:"arguments,omitempty"`
}

type respContent struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

type respUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	TotalTokens        int `json:"total_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

func respUsageOut(u llm.Usage) *respUsage {
	r := &respUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
	if r.TotalTokens == 0 {
		r.TotalTokens = u.InputTokens + u.OutputTokens
	}
	r.InputTokensDetails.CachedTokens = u.CacheReadTokens
	r.OutputTokensDetails.ReasoningTokens = u.ReasoningTokens
	return r
}

func (api *API) responses(w http.ResponseWriter, r *http.Request) {
	rr, tr, release, ok := openTurn(api, w, r, parseResponses, func(rr *respRequest) (string, string) { return rr.User, rr.loose })
	if !ok {
		return
	}
	defer release()
	id := "resp_" + randomID()
	msgID := "msg_" + randomID()
	created := time.Now().Unix()
	base := respObject{ID: id, Object: "response", CreatedAt: created, Status: "in_progress", Model: rr.Model, Output: []respOut{}}
	// The model the turn runs, when the request names none: set once, before any event.
	tr.Planned = func(ref string) {
		if base.Model == "" {
			base.Model = ref
		}
	}
	// finalOutput is the turn's output items; streamed says a message item was opened for text
	// streamed before the client calls, which keeps it (and output index 0) though the last step
	// said nothing.
	finalOutput := func(res *agent.Result, streamed bool) []respOut {
		out := []respOut{}
		if res.Text != "" || len(res.ClientCalls) == 0 || streamed {
			status := "completed"
			if res.Finish == "length" || res.Finish == "content_filter" {
				status = "incomplete" // the message cut short is itself incomplete, as OpenAI marks it
			}
			out = append(out, respOut{Type: "message", ID: msgID, Status: status, Role: "assistant",
				Content: []respContent{{Type: "output_text", Text: res.Text, Annotations: []any{}}}})
		}
		for _, c := range res.ClientCalls {
			args := string(c.Args)
			if args == "" {
				args = "{}"
			}
			out = append(out, respOut{Type: "function_call", ID: "fc_" + c.CallID, Status: "completed", CallID: c.CallID, Name: c.Name, Arguments: &args})
		}
		return out
	}
	if !rr.Stream {
		res, err := api.Agent.Turn(r.Context(), tr)
		if err != nil {
			writeTurnError(w, err)
			return
		}
		if base.Model == "" {
			base.Model = res.Model
		}
		done := base
		done.Output, done.Usage = finalOutput(&res.Result, false), respUsageOut(res.Usage)
		done.finish(res.Finish)
		writeJSON(w, http.StatusOK, done)
		return
	}
	sse := newSSE(w)
	var mu sync.Mutex
	seq := 0
	emit := func(typ string, fields map[string]any) {
		mu.Lock()
		defer mu.Unlock()
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		sse.event(typ, fields)
	}
	// The stream opens once the turn is planned, as in chat.
	var started sync.Once
	start := func() {
		started.Do(func() {
			emit("response.created", map[string]any{"response": base})
			emit("response.in_progress", map[string]any{"response": base})
		})
	}
	tr.Levels = func(directive.Resolved) { start() }
	var text bytes.Buffer
	opened := false
	openMessage := func() {
		if opened {
			return
		}
		opened = true
		emit("response.output_item.added", map[string]any{"output_index": 0, "item": respOut{Type: "message", ID: msgID, Status: "in_progress", Role: "assistant", Content: []respContent{}}})
		emit("response.content_part.added", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "part": respContent{Type: "output_text", Annotations: []any{}}})
	}
	tr.Observe = func(ev agent.Event) {
		start()
		switch ev.Kind {
		case agent.EventText:
			openMessage()
			mu.Lock()
			text.WriteString(ev.Text)
			mu.Unlock()
			emit("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "delta": ev.Text})
		case agent.EventToolStart, agent.EventToolEnd:
			phase := "start"
			if ev.Kind == agent.EventToolEnd {
				phase = "end"
			}
			emit("nodmix.tool", map[string]any{"phase": phase, "call_id": ev.Call.CallID, "name": ev.Call.Name})
		}
	}
	res, err := api.Agent.Turn(r.Context(), tr)
	if err != nil && !sse.begun() {
		writeTurnError(w, err)
		return
	}
	if err != nil {
		_, typ, code := turnStatus(err)
		failed := base
		failed.Status, failed.Error = "failed", &apiErrObj{Code: code, Message: err.Error()}
		emit("error", map[string]any{"code": code, "message": err.Error(), "param": nil, "error_type": typ})
		emit("response.failed", map[string]any{"response": failed})
		return
	}
	if base.Model == "" {
		base.Model = res.Model // a directive-only message is answered before any model is planned
	}
	start()
	out := finalOutput(&res.Result, opened)
	if out[0].Type == "message" {
		openMessage()
		if res.Directive && res.Text != "" {
			// A directive-only message is answered without a model: its reply was not streamed.
			emit("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "delta": res.Text})
		}
		// The final message carries the last step's answer.
		emit("response.output_text.done", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "text": res.Text})
		emit("response.content_part.done", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "part": out[0].Content[0]})
		emit("response.output_item.done", map[string]any{"output_index": 0, "item": out[0]})
	}
	for i, item := range out {
		if item.Type != "function_call" {
			continue
		}
		added := item
		added.Status, added.Arguments = "in_progress", ptr("")
		emit("response.output_item.added", map[string]any{"output_index": i, "item": added})
		emit("response.function_call_arguments.delta", map[string]any{"item_id": item.ID, "output_index": i, "delta": *item.Arguments})
		emit("response.function_call_arguments.done", map[string]any{"item_id": item.ID, "output_index": i, "arguments": *item.Arguments})
		emit("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	done := base
	done.Output, done.Usage = out, respUsageOut(res.Usage)
	done.finish(res.Finish)
	// OpenAI ends a stream cut short with response.incomplete, which its clients look for.
	emit("response."+done.Status, map[string]any{"response": done})
}
