package provider

import (
	"fmt"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/anthropic"
	"github.com/nodmix/nodmix/internal/llm/gemini"
	"github.com/nodmix/nodmix/internal/llm/ollama"
)

// Dialect returns the built-in dialect for an api value, configured for the provider's quirks
// (kept here as data: which provider needs what of a shared wire format).
func Dialect(api, provider string) (llm.Dialect, error) {
	switch api {
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
	return nil, fmt.Errorf("api %q is not available", api)
}
