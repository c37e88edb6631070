package openairesp

import "encoding/json"

// The request body. Field order is the wire's key order, so bodies are deterministic.
type request struct {
	Model           string   `json:"model"`
	Instructions    string   `json:"instructions,omitempty"`
	Input           []any    `json:"input"`
	Tools           []tool   `json:"tools,omitempty"`
	ToolChoice      string   `json:"tool_choice,omitempty"`
	MaxOutputTokens int      `json:"max_output_tokens,omitempty"`
	Temperature     *float64 `json:"temperature,omitempty"`
	Stream          bool     `json:"stream,omitempty"`
}

type tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// Input items.

type userMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // a string or []inputPart
}

type inputPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

// plainAssistant is assistant text this dialect did not produce (no item id to keep).
type plainAssistant struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content string `json:"content"`
	Phase   string `json:"phase,omitempty"`
}

// outputMessage is an assistant message item sent back as the API produced it.
type outputMessage struct {
	Type    string       `json:"type"`
	ID      string       `json:"id"`
	Role    string       `json:"role"`
	Status  string       `json:"status"`
	Phase   string       `json:"phase,omitempty"`
	Content []outputText `json:"content"`
}

type outputText struct {
	Type        string     `json:"type"`
	Text        string     `json:"text"`
	Annotations []struct{} `json:"annotations"`
}

type functionCall struct {
	Type      string `json:"type"`
	ID        string `json:"id,omitempty"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type callOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// The response side: the Response object (whole, or inside the stream's lifecycle events)
// and one stream event. Fields nodmix does not read are left out and ignored.

type responseObject struct {
	Status            string            `json:"status"`
	Output            []json.RawMessage `json:"output"`
	Usage             *usage            `json:"usage"`
	Error             *apiError         `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

type event struct {
	Type         string          `json:"type"`
	OutputIndex  int             `json:"output_index"`
	SummaryIndex int             `json:"summary_index"`
	ContentIndex int             `json:"content_index"`
	Delta        string          `json:"delta"`
	Item         json.RawMessage `json:"item"`
	Response     *responseObject `json:"response"`
	// An `error` event: the fields at the top level, or inside "error".
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Error   *apiError       `json:"error"`
}

// item is what nodmix reads of an output item.
type item struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Phase   string `json:"phase"`
	Content []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type usage struct {
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

type apiError struct {
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
}
