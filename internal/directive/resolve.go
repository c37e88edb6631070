package directive

import (
	"strings"

	"github.com/nodmix/nodmix/internal/thinking"
)

// The keys of a session's directive overrides (session.Info.Overrides). Values are canonical:
// a thinking.Level; on, off or auto; on, off or full; on, off or raw; on, off or stream.
const (
	KeyThinking  = "thinking"
	KeyFast      = "fast"
	KeyVerbose   = "verbose"
	KeyTrace     = "trace"
	KeyReasoning = "reasoning"
)

// key is the override key a directive writes.
func (n Name) key() string {
	if n == Think {
		return KeyThinking
	}
	return string(n)
}

// Defaults is one layer of configured defaults: an agents.list[] entry, or agents.defaults.
// Values are as configured; each is read with the directive's normalizer, so "true" and "on"
// are the same fast mode, and a value that names nothing is as if unset.
type Defaults struct {
	Thinking  string // thinkingDefault
	Fast      string // fastModeDefault (a boolean is "true" / "false")
	Verbose   string // verboseDefault
	Trace     string // traceDefault
	Reasoning string // reasoningDefault
	// Params is models["<provider>/<model>"].params for the model of the turn: thinking (a
	// level, false or "disabled") and fastMode / fast_mode.
	Params map[string]any
}

// Layers is everything a turn's levels are resolved from, as plain values. Resolve and Apply
// read it and keep nothing.
type Layers struct {
	// Inline are the directives of the message itself (Parse(...).Directives); they apply to
	// that message only. An inline clear (/think default …) skips the session override.
	Inline []D
	// Session is the session's overrides, keyed KeyThinking … KeyReasoning.
	Session map[string]string
	// Agent is the session agent's agents.list[] entry; Global is agents.defaults.
	Agent, Global Defaults
	// Profile is what the model supports (thinking.ProfileFor). A zero Profile accepts every
	// level and remaps none.
	Profile thinking.Profile
	// Reasoning is the catalog's models[].reasoning, read only when Profile has no levels: a
	// model that reasons then defaults to medium, any other to off.
	Reasoning bool
	// Model is the "<provider>/<model>" ref, for the replies that name it.
	Model string
}

// Source says which layer a resolved value came from.
type Source string

// The layers, in the order they are consulted.
const (
	FromInline     Source = "inline"      // the message's own directive
	FromSession    Source = "session"     // the session override
	FromAgent      Source = "agent"       // agents.list[].<name>Default
	FromAgentModel Source = "agent model" // agents.list[].models["p/m"].params
	FromModel      Source = "model"       // agents.defaults.models["p/m"].params
	FromConfig     Source = "config"      // agents.defaults.<name>Default
	FromProvider   Source = "provider"    // the model profile's default
	FromDefault    Source = "default"     // nothing set: off
)

// Sources records where each resolved value came from.
type Sources struct {
	Think, Fast, Verbose, Trace, Reasoning Source
}

// Resolved is the levels a turn runs with.
type Resolved struct {
	// Think is the thinking level, supported by the profile. It is "" when the provider owns
	// the default (the profile's Default is ""): the request then carries no thinking fields.
	Think thinking.Level
	// Wanted is the level the winning layer named. It differs from Think when a stored level is
	// not supported by the model (after a model switch) and was remapped by rank.
	Wanted thinking.Level
	// Fast is the fast mode; FastAuto leaves the per-call choice to the agent.
	Fast thinking.FastMode
	// Verbose is on, off or full; Trace on, off or raw; Reasoning on, off or stream.
	Verbose, Trace, Reasoning string
	Sources                   Sources
}

// Resolve computes a turn's levels, each from the first layer that sets it.
//
// Thinking: the inline directive; the session override; agents.list[].thinkingDefault;
// agents.list[].models["p/m"].params.thinking; agents.defaults.models["p/m"].params.thinking;
// agents.defaults.thinkingDefault; then the profile's default (the provider's declared default,
// else the supported level nearest medium for a model that reasons, else off). A level the model
// does not support is remapped by rank (thinking.Profile.Nearest).
//
// Fast: the inline directive; the session override; agents.list[].fastModeDefault;
// agents.defaults.fastModeDefault; agents.defaults.models["p/m"].params.fastMode (or fast_mode);
// off.
//
// Verbose, trace and reasoning: the inline directive; the session override; the agent's
// verboseDefault / traceDefault / reasoningDefault; the same key of agents.defaults; off.
//
// The per-model params layers and agents.defaults.fastModeDefault are not on the documented
// lists; they sit where the reference runtime reads them, which keeps the documented order.
func Resolve(l Layers) Resolved {
	var r Resolved
	r.Think, r.Wanted, r.Sources.Think = resolveThink(l)
	r.Fast, r.Sources.Fast = resolveFast(l)
	r.Verbose, r.Sources.Verbose = resolveWord(l, Verbose, thinking.NormalizeVerbose,
		l.Agent.Verbose, l.Global.Verbose)
	r.Trace, r.Sources.Trace = resolveWord(l, Trace, thinking.NormalizeTrace,
		l.Agent.Trace, l.Global.Trace)
	r.Reasoning, r.Sources.Reasoning = resolveWord(l, Reasoning, thinking.NormalizeReasoning,
		l.Agent.Reasoning, l.Global.Reasoning)
	return r
}

// winning returns the message's winning applicable directive named n, if any.
func winning(ds []D, n Name) (D, bool) {
	for i := len(ds) - 1; i >= 0; i-- {
		if ds[i].Name == n && ds[i].Applicable() {
			return ds[i], true
		}
	}
	return D{}, false
}

// layer is one candidate value and where it came from.
type layer struct {
	v   string
	src Source
}

// first returns the first candidate norm accepts, honouring an inline directive and an inline
// clear (which drops the session layer for this message).
func first(l Layers, n Name, norm func(string) (string, bool), rest []layer) (string, Source, bool) {
	skipSession := false
	if d, ok := winning(l.Inline, n); ok {
		if !d.Clear {
			return d.Value, FromInline, true
		}
		skipSession = true
	}
	if !skipSession {
		if v, ok := norm(l.Session[n.key()]); ok {
			return v, FromSession, true
		}
	}
	for _, c := range rest {
		if v, ok := norm(c.v); ok {
			return v, c.src, true
		}
	}
	return "", "", false
}

func resolveThink(l Layers) (got, wanted thinking.Level, src Source) {
	v, src, ok := first(l, Think, normThink, []layer{
		{l.Agent.Thinking, FromAgent},
		{paramThinking(l.Agent.Params), FromAgentModel},
		{paramThinking(l.Global.Params), FromModel},
		{l.Global.Thinking, FromConfig},
	})
	if !ok {
		switch {
		case len(l.Profile.Levels) > 0:
			return l.Profile.Default, l.Profile.Default, FromProvider
		case l.Reasoning:
			return thinking.Medium, thinking.Medium, FromProvider
		}
		return thinking.Off, thinking.Off, FromDefault
	}
	wanted = thinking.Level(v)
	return supported(l.Profile, wanted), wanted, src
}

// supported is the level the profile runs for l: l itself, or its nearest by rank.
func supported(p thinking.Profile, l thinking.Level) thinking.Level {
	if len(p.Levels) == 0 {
		return l
	}
	return p.Nearest(l)
}

// paramThinking reads params.thinking: a level word, or false / "disabled" for off.
func paramThinking(params map[string]any) string {
	switch v := params["thinking"].(type) {
	case string:
		if strings.EqualFold(strings.TrimSpace(v), "disabled") {
			return string(thinking.Off)
		}
		return v // NormalizeThink decides; a word that names no level is as if unset
	case bool:
		if !v {
			return string(thinking.Off)
		}
	}
	return ""
}

func resolveFast(l Layers) (thinking.FastMode, Source) {
	v, src, ok := first(l, Fast, normFast, []layer{
		{l.Agent.Fast, FromAgent},
		{l.Global.Fast, FromConfig},
		{paramFast(l.Global.Params), FromModel},
	})
	if !ok {
		return thinking.FastOff, FromDefault
	}
	return thinking.FastMode(v), src
}

// paramFast reads params.fastMode (or fast_mode): a boolean or a fast-mode word.
func paramFast(params map[string]any) string {
	for _, k := range []string{"fastMode", "fast_mode"} {
		switch v := params[k].(type) {
		case bool:
			if v {
				return string(thinking.FastOn)
			}
			return string(thinking.FastOff)
		case string:
			return v
		}
	}
	return ""
}

func resolveWord(l Layers, n Name, norm func(string) (string, bool), agent, global string) (string, Source) {
	v, src, ok := first(l, n, norm, []layer{{agent, FromAgent}, {global, FromConfig}})
	if !ok {
		return "off", FromDefault
	}
	return v, src
}
