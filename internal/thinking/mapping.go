package thinking

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/nodmix/nodmix/internal/llm"
)

// Anthropic's header for thinking between tool calls with manual budgets (adaptive thinking
// interleaves on its own).
const (
	betaHeader      = "anthropic-beta"
	betaInterleaved = "interleaved-thinking-2025-05-14"
)

// answerRoom is the max_tokens an Anthropic budget request keeps for the answer when the
// request's own max_tokens is unknown (Target.MaxTokens 0), and the least it must leave beside
// the budget before Map raises it.
const (
	answerRoom    = 4096
	minAnswerRoom = 1024
)

// obj is a JSON object under construction; encoding/json writes map keys sorted, so patches are
// deterministic.
type obj = map[string]any

// Map returns the patch that puts thinking level l and fast mode on a request to t: a JSON merge
// patch over the body the dialect encodes, headers, and a model rename. l must be one the
// profile supports (a binary profile's non-off levels all mean on); an unsupported level is an
// *UnsupportedError. l == "" is "nothing set" (a provider-owned default, Profile.Default ""):
// no thinking fields are sent, only fast mode.
//
// Field paths by wire: Chat Completions reasoning_effort; DeepSeek, Z.AI and Moonshot thinking
// {type}; OpenRouter reasoning {effort} or {enabled: true}; Responses reasoning {effort,
// summary: "auto"}; Anthropic thinking {type: adaptive} + output_config.effort, or thinking
// {type: enabled, budget_tokens}; Gemini generationConfig.thinkingConfig {thinkingLevel |
// thinkingBudget, includeThoughts}; Ollama think.
//
// Anthropic constraints (reference §1.8) are kept by the patch itself:
//   - budget_tokens must stay below max_tokens. When t.MaxTokens is 0 (unknown) the patch sets
//     max_tokens to budget + 4096; when t.MaxTokens leaves the answer less than 1024 tokens
//     beside the budget, it sets max_tokens to budget + t.MaxTokens, so the answer keeps the
//     room the caller asked for. Otherwise max_tokens is left alone.
//   - with thinking on, temperature and top_k are deleted (null members), and a "required" tool
//     choice becomes {type: "auto"}: Anthropic rejects sampling changes and forced tool use
//     while thinking. Moonshot's forced tool choice becomes "auto" the same way.
//
// Fast mode: OpenAI and Codex send service_tier "priority" when on; direct Anthropic sends
// service_tier "auto" (on) or "standard_only" (off), never through a proxy base URL; MiniMax
// M2.x is renamed to its -highspeed model. A serviceTier / service_tier entry in t.Params wins
// over fast mode wherever a service tier is sent.
func Map(t Target, l Level, fast bool) (llm.Patch, error) {
	t = canon(t)
	res := resolve(t)
	var lv *level
	if l != "" {
		if !l.Valid() {
			return llm.Patch{}, fmt.Errorf("thinking level %q: not a canonical level", l)
		}
		p := profileOf(res)
		if !p.Supports(l) {
			return llm.Patch{}, &UnsupportedError{Provider: t.Provider, Model: t.Model, Level: l, Options: p.Labels()}
		}
		on := p.Nearest(l)
		for i := range res.levels {
			if res.levels[i].id == on {
				lv = &res.levels[i]
			}
		}
	}
	body := obj{}
	var h http.Header
	if lv != nil {
		h = encode(body, res, lv, t)
	}
	patch := llm.Patch{Header: h}
	fastPatch(&patch, body, res.row, t, fast)
	if len(body) > 0 {
		b, err := json.Marshal(body)
		if err != nil {
			return llm.Patch{}, fmt.Errorf("thinking patch: %w", err)
		}
		patch.Body = b
	}
	return patch, nil
}

// encode writes level lv into body for the resolved row and returns the headers it needs.
func encode(body obj, res resolved, lv *level, t Target) http.Header {
	if lv.value == omit {
		return nil
	}
	var h http.Header
	thinkingOn := lv.id != Off
	switch res.wire {
	case wireNone:
		return nil
	case wireAnthropicEffort:
		switch lv.id {
		case Off:
			body["thinking"] = obj{"type": "disabled"}
		case Adaptive:
			body["thinking"] = adaptive(res.row)
		default:
			body["thinking"] = adaptive(res.row)
			body["output_config"] = obj{"effort": lv.value}
		}
	case wireAnthropicBudget:
		if lv.id == Off {
			body["thinking"] = obj{"type": "disabled"}
			break
		}
		budget, _ := strconv.Atoi(lv.value)
		body["thinking"] = obj{"type": "enabled", "budget_tokens": budget}
		switch {
		case t.MaxTokens <= 0:
			body["max_tokens"] = budget + answerRoom
		case t.MaxTokens < budget+minAnswerRoom:
			body["max_tokens"] = budget + t.MaxTokens
		}
		if res.row.interleaved {
			h = http.Header{}
			h.Set(betaHeader, betaInterleaved)
		}
	case wireOpenAI:
		if t.API == "openai-responses" {
			r := obj{"effort": lv.value}
			if thinkingOn {
				r["summary"] = "auto"
				// nodmix keeps the transcript itself (nothing is stored at OpenAI), so a
				// tool loop sends the reasoning items back: they must come encrypted.
				body["store"] = false
				body["include"] = []any{"reasoning.encrypted_content"}
			}
			body["reasoning"] = r
		} else {
			body["reasoning_effort"] = lv.value
		}
	case wireDeepSeek:
		if !thinkingOn {
			body["thinking"] = obj{"type": "disabled"}
			break
		}
		body["thinking"] = obj{"type": "enabled"}
		body["reasoning_effort"] = lv.value
	case wireOpenRouter:
		switch lv.id {
		case Off:
			body["reasoning"] = obj{"effort": "none"}
		case Adaptive:
			body["reasoning"] = obj{"enabled": true}
		default:
			body["reasoning"] = obj{"effort": lv.value}
		}
	case wireToggle:
		if thinkingOn {
			body["thinking"] = obj{"type": "enabled"}
		} else {
			body["thinking"] = obj{"type": "disabled"}
		}
	case wireGeminiLevel:
		tc := obj{"includeThoughts": thinkingOn}
		if lv.id != Adaptive && lv.id != Off {
			tc["thinkingLevel"] = lv.value
		}
		body["generationConfig"] = obj{"thinkingConfig": tc}
	case wireGeminiBudget:
		budget, _ := strconv.Atoi(lv.value)
		tc := obj{"thinkingBudget": budget}
		if thinkingOn {
			tc["includeThoughts"] = true
		}
		body["generationConfig"] = obj{"thinkingConfig": tc}
	case wireOllama:
		if lv.value == "false" {
			body["think"] = false
		} else {
			body["think"] = lv.value
		}
	}
	if thinkingOn && res.row.claude && res.wire != wireOpenRouter {
		body["temperature"] = nil
		body["top_k"] = nil
		if t.ToolChoice == "required" {
			body["tool_choice"] = obj{"type": "auto", "name": nil}
		}
	}
	if thinkingOn && res.row.autoTool && t.ToolChoice == "required" {
		body["tool_choice"] = "auto"
	}
	return h
}

func adaptive(r *row) obj {
	if r.summarize {
		return obj{"type": "adaptive", "display": "summarized"}
	}
	return obj{"type": "adaptive"}
}

// fastPatch adds fast mode (or an explicit service tier from params) to the patch.
func fastPatch(p *llm.Patch, body obj, r *row, t Target, fast bool) {
	tier, explicit := serviceTier(t.Params)
	switch r.fast {
	case fastOpenAITier:
		if t.Provider == "openrouter" {
			return
		}
		switch {
		case explicit:
			body["service_tier"] = tier
		case fast:
			body["service_tier"] = "priority"
		}
	case fastAnthropicTier:
		if !t.Direct || t.Provider == "openrouter" {
			return // a proxy base URL: no Anthropic service-tier injection
		}
		switch {
		case explicit:
			body["service_tier"] = tier
		case fast:
			body["service_tier"] = "auto"
		default:
			body["service_tier"] = "standard_only"
		}
	case fastRename:
		if fast && r.rename != nil && r.rename.MatchString(strings.ToLower(t.Model)) {
			p.Model = t.Model + "-highspeed"
		}
	}
}

// serviceTier reads params.serviceTier or params.service_tier (in that order).
func serviceTier(params map[string]any) (string, bool) {
	for _, k := range []string{"serviceTier", "service_tier"} {
		if s, ok := params[k].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s), true
		}
	}
	return "", false
}
