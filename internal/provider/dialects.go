package provider

import (
	"fmt"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/anthropic"
	"github.com/nodmix/nodmix/internal/llm/gemini"
	"github.com/nodmix/nodmix/internal/llm/ollama"
	"github.com/nodmix/nodmix/internal/llm/openaichat"
	"github.com/nodmix/nodmix/internal/llm/openairesp"
)

// Dialect returns the built-in dialect for an api value, configured for the provider's quirks
// (kept here as data: which provider needs what of a shared wire format).
func Dialect(api, provider string) (llm.Dialect, error) {
	switch api {
	case openaichat.Name:
		return openaichat.New(quirksFor(provider)), nil
	case openairesp.Name:
		return openairesp.New(), nil
	case anthropic.Name:
		o := anthropic.Options{}
		if provider == "minimax" {
			o.TextOnly = true
			o.MinTemperature = 0.01 // MiniMax documents (0, 1]
		}
		return anthropic.New(o), nil
	case gemini.Name:
		return gemini.New(), nil
	case ollama.Name:
		return ollama.New(), nil
	}
	return nil, fmt.Errorf("api %q is not one of openai-completions, openai-responses, anthropic-messages, google-generative-ai, ollama", api)
}

// chatQuirks are the Chat Completions differences of the OpenAI-compatible providers. A custom
// entry (any other id) gets the zero value but for max_tokens, which every server knows.
var chatQuirks = map[string]openaichat.Quirks{
	"openai":     {MaxTokensField: "max_completion_tokens"},
	"deepseek":   {MaxTokensField: "max_tokens", ReasoningContent: true, ReasoningRequired: true, ReasoningEvery: true},
	"openrouter": {MaxTokensField: "max_tokens", ReasoningDetails: true},
	"moonshot":   {MaxTokensField: "max_tokens", ReasoningContent: true, ReasoningRequired: true, ReasoningPlaceholder: " ", AutoToolChoiceWhenThinking: true},
	"zai":        {MaxTokensField: "max_tokens", ReasoningContent: true, ReasoningKept: true, ToolStream: true},
	// MiniMax's OpenAI-compatible API (a custom entry at its hosts, see thinkTagHosts): with
	// reasoning_split on, the reasoning comes as OpenRouter's reasoning_details instead of
	// <think> tags in content, and goes back the same way in a tool loop. Its streaming example
	// reads each piece's text as the whole text so far; pieces of either form merge.
	"minimax": {MaxTokensField: "max_tokens", ReasoningDetails: true, DetailsCumulative: true},
}

func quirksFor(provider string) openaichat.Quirks {
	if q, ok := chatQuirks[provider]; ok {
		return q
	}
	return openaichat.Quirks{MaxTokensField: "max_tokens"}
}
