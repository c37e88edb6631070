package openaichat

import "encoding/json"

// The request body. Field order is the wire's key order, so bodies are deterministic.
type request struct {
	Model               string         `json:"model"`
	Messages            []message      `json:"messages"`
	Tools               []tool         `json:"tools,omitempty"`
	ToolChoice          string         `json:"tool_choice,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`
	Stream              bool           `json:"stream,omitempty"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	ToolStream          bool           `json:"tool_stream,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type message struct {
	Role string `json:"role"`
	// Content is a string, []contentPart, or nil (null: an assistant turn of tool calls only).
	Content          any             `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content,omitempty"`
	ReasoningDetails json.RawMessage `json:"reasoning_details,omitempty"`
	ToolCalls        []toolCall      `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
}

type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type tool struct {
	Type     string   `json:"type"`
	Function function `json:"function"`
}

type function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function callFunction `json:"function"`
}

type callFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// A response: a whole completion, or one chunk of a stream. Fields nodmix does not read are
// left out, so whatever else a provider sends is ignored.
type response struct {
	Choices  []choice  `json:"choices"`
	Usage    *usage    `json:"usage"`
	Error    *apiError `json:"error"`
	BaseResp *baseResp `json:"base_resp"` // MiniMax
}

type choice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`   // a stream chunk
	Message      delta   `json:"message"` // a whole completion
	FinishReason *string `json:"finish_reason"`
	Usage        *usage  `json:"usage"` // Moonshot reports a stream's usage here
}

type delta struct {
	Content          content         `json:"content"`
	Refusal          string          `json:"refusal"`
	ReasoningContent string          `json:"reasoning_content"` // DeepSeek, Moonshot, Z.AI
	Reasoning        string          `json:"reasoning"`         // OpenRouter, vLLM, Ollama
	ReasoningDetails json.RawMessage `json:"reasoning_details"` // OpenRouter, MiniMax
	ToolCalls        []callDelta     `json:"tool_calls"`
}

type callDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a JSON string of argument text; some servers send the object itself.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"` // DeepSeek
	CachedTokens         int `json:"cached_tokens"`           // Moonshot
}

type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"` // a string (OpenAI) or a number (OpenRouter)
}

// baseResp is MiniMax's status envelope, sent with every answer: status_code 0 is success,
// anything else an error that may come with HTTP 200 and no choices.
type baseResp struct {
	StatusCode json.RawMessage `json:"status_code"` // a number; read as text, so "1004" counts too
	StatusMsg  string          `json:"status_msg"`
}
