package thinking

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Target is the model a request goes to, as the provider layer resolved it. It is a plain value;
// ProfileFor and Map read it and keep nothing.
type Target struct {
	// Provider is the provider id: a built-in one (openai, openai-codex, anthropic, google,
	// ollama, deepseek, openrouter, moonshot, zai, minimax) selects that provider's rows; any
	// other id, or "", is a custom entry described by API, Reasoning and Efforts.
	Provider string
	// API is the wire format: openai-completions, openai-responses, anthropic-messages,
	// google-generative-ai or ollama.
	API string
	// Model is the provider's model id (an OpenRouter id keeps its "vendor/" prefix).
	Model string
	// Direct: the base URL is the provider's own endpoint, not a proxy. Anthropic service tiers
	// are sent only then.
	Direct bool
	// Reasoning is models[].reasoning from config. It decides the profile of a model no row of
	// the table knows (custom entries, new ids); a known model family ignores it.
	Reasoning bool
	// Efforts is models[].compat.supportedReasoningEfforts: the reasoning_effort values an
	// OpenAI-compatible entry accepts. It adds xhigh, max and adaptive to the menu when listed,
	// and for custom entries it is also the set outbound efforts are mapped onto.
	Efforts []string
	// Params is agents.defaults.models["provider/model"].params. Map reads serviceTier /
	// service_tier, which win over fast mode.
	Params map[string]any

	// MaxTokens is the max_tokens the request will carry (the request's own, else the model's
	// configured maxTokens); 0 when unknown. Only budget-based thinking reads it (see Map).
	MaxTokens int
	// ToolChoice is the request's tool choice ("", "auto", "none", "required"). Providers that
	// refuse a forced tool call while thinking get "auto" instead (see Map).
	ToolChoice string
}

// Option is one level of a profile as menus show it: the canonical id that is stored and a label
// (the id itself unless the provider names it otherwise, e.g. binary providers show low as "on").
type Option struct {
	ID    Level  `json:"id"`
	Label string `json:"label"`
}

// Profile is what one model supports: the levels menus offer and directives accept, and the level
// used when nothing sets one. A Profile is a value; callers may keep and compare it.
type Profile struct {
	// Family names the table row the profile came from ("anthropic/claude-opus-4.7"), for
	// diagnostics and tests.
	Family string `json:"family"`
	// Levels is every supported level in rank order.
	Levels []Option `json:"levels"`
	// Default is the level to use when no directive, session override or config default sets
	// one: the provider's declared default, else the supported level nearest medium for a model
	// that reasons, else off. "" means the provider owns the default (Claude Opus 4.7): Map then
	// sends no thinking fields at all, and a status reply shows "default".
	Default Level `json:"default,omitempty"`
	// Binary: thinking is on or off (shown "off, on"). Every non-off level is accepted and means
	// on, which is stored as low.
	Binary bool `json:"binary,omitempty"`
}

// Supports reports whether a directive may set l on this model. For a binary profile every
// non-off canonical level is accepted (and Nearest maps it to the "on" level). Callers store
// p.Nearest(l) after a successful Supports(l).
func (p Profile) Supports(l Level) bool {
	if !l.Valid() {
		return false
	}
	if p.Binary && l != Off {
		return len(p.Levels) > 0
	}
	return p.has(l)
}

func (p Profile) has(l Level) bool {
	return slices.ContainsFunc(p.Levels, func(o Option) bool { return o.ID == l })
}

// Nearest returns the supported level to use for a stored level l, after a model switch made it
// unsupported. A supported level is returned unchanged (a binary profile's "on" for any non-off
// level). Otherwise, by rank: xhigh and max fall back to the largest supported fixed level (the
// page's rule, so a stored max is xhigh on OpenRouter's DeepSeek V4); any other level to the
// highest supported fixed level ranked at most as high (adaptive to medium); else the lowest
// supported level above off, else off. Adaptive is never a fallback for a fixed level. "" stays
// "" (nothing stored); a word that is not a canonical level gives the profile's Default.
func (p Profile) Nearest(l Level) Level {
	if l == "" {
		return ""
	}
	if !l.Valid() {
		return p.Default
	}
	if p.Binary && l != Off {
		for _, o := range p.Levels {
			if o.ID != Off {
				return o.ID
			}
		}
	}
	if p.has(l) {
		return l
	}
	best := Level("")
	for _, o := range p.Levels {
		if o.ID == Off || o.ID == Adaptive || (o.ID.Rank() > l.Rank() && l != XHigh && l != Max) {
			continue
		}
		if best == "" || o.ID.Rank() >= best.Rank() {
			best = o.ID
		}
	}
	if best != "" {
		return best
	}
	for _, o := range p.Levels { // rank order: the first above off is the lowest
		if o.ID != Off {
			return o.ID
		}
	}
	if p.has(Off) {
		return Off
	}
	return p.Default
}

// Label returns how menus show l on this model: its option's label, else the level itself.
func (p Profile) Label(l Level) string {
	for _, o := range p.Levels {
		if o.ID == l {
			return o.Label
		}
	}
	return string(l)
}

// Labels returns the labels of the profile's levels in order, for replies such as
// "Use one of: off, on."
func (p Profile) Labels() []string {
	out := make([]string, len(p.Levels))
	for i, o := range p.Levels {
		out[i] = o.Label
	}
	return out
}

// ErrUnsupported is what Map's error matches when the level is not one the model supports.
var ErrUnsupported = errors.New("thinking level not supported")

// UnsupportedError reports a level a model's profile does not have. Options are the profile's
// labels, for the reply that lists them.
type UnsupportedError struct {
	Provider, Model string
	Level           Level
	Options         []string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("thinking level %q is not supported for %s/%s (use one of: %s)",
		e.Level, e.Provider, e.Model, strings.Join(e.Options, ", "))
}

// Is makes errors.Is(err, ErrUnsupported) true.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }
