package ollama

import "encoding/json"

// The wire structs of /api/chat (ollama/ollama api/types.go). Only what nodmix reads or writes
// is modelled: unknown response fields are ignored, and request fields nodmix does not set
// (think, format, keep_alive, other options) reach the body through Request.Extra or the patch.

type chatRequest struct {
	Model    string    `json:"model"`
	Messages []message `json:"messages"`
	Tools    []tool    `json:"tools,omitempty"`
	// Stream is always sent: Ollama streams when it is absent.
	Stream  bool            `json:"stream"`
	Options json.RawMessage `json:"options,omitempty"` // an options object, merged with Extra's
}

type message struct {
	Role      string     `json:"role"`
	Content   string     `json:"content"`
	Thinking  string     `json:"thinking,omitempty"`
	Images    []string   `json:"images,omitempty"` // base64, no data: prefix
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
	// ToolName names the tool a role:"tool" message answers; ToolCallID pairs it with the
	// call where the server and template read ids (older servers ignore the field).
	ToolName   string `json:"tool_name,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string       `json:"id,omitempty"`
	Function callFunction `json:"function"`
}

type callFunction struct {
	Name string `json:"name"`
	// Arguments is a JSON object, not a string as in OpenAI's format.
	Arguments json.RawMessage `json:"arguments"`
}

type tool struct {
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type options struct {
	NumPredict  int      `json:"num_predict,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
}

// chatResponse is one NDJSON line of a stream, or the whole non-streamed answer.
type chatResponse struct {
	Message         *responseMessage `json:"message"`
	Done            bool             `json:"done"`
	DoneReason      string           `json:"done_reason"`
	PromptEvalCount int              `json:"prompt_eval_count"`
	EvalCount       int              `json:"eval_count"`
	Error           json.RawMessage  `json:"error"`
}

type responseMessage struct {
	Content   string     `json:"content"`
	Thinking  string     `json:"thinking"`
	ToolCalls []toolCall `json:"tool_calls"`
}
