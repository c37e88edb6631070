package sessiontest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nodmix/nodmix/internal/llm"
)

// Raw bytes a store must keep exactly: odd spacing, key order, characters encoding/json would
// escape, a leading space, invalid JSON and invalid UTF-8.
const (
	rawThinking = `{"type":"thinking",  "thinking":"Let me check.\n",` + "\n\t" + `"signature":"a<b&c"}`
	rawReason   = `{"type": "thinking", "signature":"a<b&c"}`
	metaGemini  = `{ "thoughtSignature" : "x>y&z" }`
	argsOdd     = `{"query":  "go <1.26> & more",   "n": 3, "a": {"z":1,"b":2}}`
	argsBroken  = `{"query": "unterminated`
	rawSpaced   = "  {\"id\":\"rs_1\"}\n"
	rawNotUTF8  = "{\"s\":\"\xff\xfe\"}"
)

// Transcript returns messages that exercise every field of llm.Part, with the bytes that a store
// could lose if it re-encoded them: each store must return them exactly.
func Transcript() []llm.Message {
	return []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{
			{Kind: llm.KindText, Text: "Is <b>&</b> \"safe\"?\n\ttabbed \x01 control, emoji 🦫, line\u2028sep"},
			{Kind: llm.KindImage, ImageURL: "data:image/png;base64,iVBORw0KGgo="},
		}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Kind: llm.KindReasoning, Text: "Let me check.\n", Dialect: "anthropic-messages", Provider: "minimax", Raw: json.RawMessage(rawThinking)},
			{Kind: llm.KindReasoning, Dialect: "anthropic-messages", Raw: json.RawMessage(rawReason)},
			{Kind: llm.KindText, Text: "Searching."},
			{Kind: llm.KindToolCall, CallID: "call_1", Name: "web_search", Args: json.RawMessage(argsOdd),
				Dialect: "google-generative-ai", Meta: json.RawMessage(metaGemini)},
			{Kind: llm.KindToolCall, CallID: "call_2", Name: "mcp__fs__read", Args: json.RawMessage(argsBroken)},
		}},
		{Role: llm.RoleTool, Parts: []llm.Part{
			{Kind: llm.KindToolResult, CallID: "call_1", Name: "web_search", Text: `{"results":[]}`},
			{Kind: llm.KindToolResult, CallID: "call_2", Name: "mcp__fs__read", IsError: true, Text: "bad arguments: \xff\xfe not UTF-8"},
		}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Kind: llm.KindReasoning, Dialect: "openai-responses", Raw: json.RawMessage(rawSpaced), Meta: json.RawMessage(`null`)},
			{Kind: llm.KindReasoning, Dialect: "openai-completions", Raw: json.RawMessage(rawNotUTF8)},
			{Kind: llm.KindText, Text: "Nothing found."},
		}},
		{Role: llm.RoleUser}, // no parts at all
	}
}

// Long returns n messages of varied size, with every tenth a 16 KiB tool result.
func Long(n int) []llm.Message {
	out := make([]llm.Message, n)
	for i := range out {
		switch i % 3 {
		case 0:
			out[i] = llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: fmt.Sprintf("question %d: <what> & why?", i)}}}
		case 1:
			out[i] = llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Kind: llm.KindReasoning, Text: "thinking", Dialect: "anthropic-messages",
					Raw: json.RawMessage(fmt.Sprintf(`{"type":"thinking", "thinking":"step %d","signature":"s<%d>&"}`, i, i))},
				{Kind: llm.KindToolCall, CallID: fmt.Sprintf("call_%d", i), Name: "exec", Args: json.RawMessage(fmt.Sprintf(`{"command": "echo %d"}`, i))},
			}}
		default:
			text := fmt.Sprintf("output %d\n", i)
			if i%10 == 2 {
				text = strings.Repeat("line of output\n", 16<<10/15)
			}
			out[i] = llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: fmt.Sprintf("call_%d", i-1), Name: "exec", Text: text}}}
		}
	}
	return out
}
