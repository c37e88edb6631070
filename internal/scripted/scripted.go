// Package scripted is a model that needs no account: it follows a fixed, documented script, so
// `make demo`, the web page's tests and a newcomer can watch the turn loop call tools.
package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	"github.com/nodmix/nodmix/internal/llm"
)

// Model is the scripted model. It is stateless: its answer depends only on the request.
//
// The script, for the last message of the request:
//   - a tool result: answer "<tool> returned: <the result's first 300 characters>";
//   - a user message that names a tool offered in the request (its exact name as a word): call
//     that tool, with the JSON object in the message as arguments if there is one, else with
//     {"query": <the rest of the message>} when the tool's schema has a "query" property, else {};
//   - a user message starting with "search " when tool_search or search_tool_bm25 is offered:
//     call it with the rest as the query;
//   - anything else: answer "You said: <text>".
//
// Text is streamed a word at a time; reasoning ("Reading the request.") comes first.
type Model struct{}

// Stream implements the agent's Model.
func (Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		msg := respond(req)
		for _, p := range msg.Parts {
			if ctx.Err() != nil {
				yield(llm.Event{}, ctx.Err())
				return
			}
			switch p.Kind {
			case llm.KindReasoning:
				if !yield(llm.Event{Kind: llm.EventReasoning, Text: p.Text}, nil) {
					return
				}
			case llm.KindText:
				for _, w := range strings.SplitAfter(p.Text, " ") {
					if !yield(llm.Event{Kind: llm.EventText, Text: w}, nil) {
						return
					}
				}
			case llm.KindToolCall:
				if !yield(llm.Event{Kind: llm.EventToolCall, CallID: p.CallID, Name: p.Name}, nil) ||
					!yield(llm.Event{Kind: llm.EventToolArgs, CallID: p.CallID, Text: string(p.Args)}, nil) {
					return
				}
			}
		}
		finish := "stop"
		if len(msg.ToolCalls()) > 0 {
			finish = "tool_calls"
		}
		in := 0
		for _, m := range req.Messages {
			for _, p := range m.Parts {
				in += len(p.Text) + len(p.Args)
			}
		}
		usage := &llm.Usage{InputTokens: in/4 + 1, OutputTokens: len(msg.Text())/4 + 1}
		usage.TotalTokens = usage.InputTokens + usage.OutputTokens
		yield(llm.Event{Kind: llm.EventDone, Message: &msg, Usage: usage, Finish: finish}, nil)
	}
}

func respond(req *llm.Request) llm.Message {
	think := llm.Part{Kind: llm.KindReasoning, Text: "Reading the request."}
	if len(req.Messages) == 0 {
		return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{think, {Kind: llm.KindText, Text: "Hello."}}}
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role == llm.RoleTool {
		var lines []string
		for _, m := range trailingTools(req.Messages) {
			for _, p := range m.Parts {
				if p.Kind == llm.KindToolResult {
					lines = append(lines, fmt.Sprintf("%s returned: %s", p.Name, clip(p.Text, 300)))
				}
			}
		}
		return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{think, {Kind: llm.KindText, Text: strings.Join(lines, "\n")}}}
	}
	text := strings.TrimSpace(last.Text())
	n := 0
	for _, m := range req.Messages {
		n += len(m.ToolCalls())
	}
	callID := fmt.Sprintf("call_%d", n+1)
	for _, t := range req.Tools {
		if hasWord(text, t.Name) {
			return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{think, {Kind: llm.KindToolCall, CallID: callID, Name: t.Name, Args: argsFor(text, t)}}}
		}
	}
	if q, ok := strings.CutPrefix(text, "search "); ok {
		for _, name := range []string{"tool_search", "search_tool_bm25"} {
			for _, t := range req.Tools {
				if t.Name == name {
					args, _ := json.Marshal(map[string]string{"query": q})
					return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{think, {Kind: llm.KindToolCall, CallID: callID, Name: name, Args: args}}}
				}
			}
		}
	}
	return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{think, {Kind: llm.KindText, Text: "You said: " + text}}}
}

func trailingTools(msgs []llm.Message) []llm.Message {
	i := len(msgs)
	for i > 0 && msgs[i-1].Role == llm.RoleTool {
		i--
	}
	return msgs[i:]
}

func hasWord(text, word string) bool {
	for _, f := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		if f == word {
			return true
		}
	}
	return false
}

// argsFor takes the first JSON object in text, else a query from the rest of the message.
func argsFor(text string, t llm.Tool) json.RawMessage {
	if i := strings.IndexByte(text, '{'); i >= 0 {
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		var obj map[string]any
		if dec.Decode(&obj) == nil {
			b, _ := json.Marshal(obj)
			return b
		}
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(t.Parameters, &schema)
	if _, ok := schema.Properties["query"]; ok {
		rest := strings.TrimSpace(strings.Replace(text, t.Name, "", 1))
		b, _ := json.Marshal(map[string]string{"query": rest})
		return b
	}
	return json.RawMessage(`{}`)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
