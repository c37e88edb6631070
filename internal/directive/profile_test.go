package directive

import (
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/thinking"
)

// The page's provider notes, through the real profiles: what a directive may set, what a stored
// level becomes, and what the session inherits.
func TestWithProviderProfiles(t *testing.T) {
	layers := func(provider, api, model string, session ov) Layers {
		p := thinking.ProfileFor(thinking.Target{Provider: provider, API: api, Model: model, Direct: true})
		return Layers{Profile: p, Model: provider + "/" + model, Session: session}
	}
	apply := func(l Layers, msg string) Result { return Apply(Parse(msg).Directives, l) }

	// Z.AI is binary: any non-off level is "on", stored as low.
	zai := layers("zai", "", "glm-4.6", nil)
	if got := apply(zai, "/think high"); got.Reply != "Thinking level set to on." || got.Overrides[KeyThinking] != "low" {
		t.Errorf("zai /think high = %+v", got)
	}
	if got := apply(zai, "/think"); !strings.HasSuffix(got.Reply, "\nOptions: default, off, on.") {
		t.Errorf("zai /think = %q", got.Reply)
	}

	// OpenRouter DeepSeek V4 has xhigh but not max: a typed max is refused with the options, a
	// stored one (after a model switch) runs as xhigh.
	or := layers("openrouter", "", "deepseek/deepseek-v4", ov{KeyThinking: "max"})
	if got := apply(or, "/think max"); !strings.HasPrefix(got.Reply, `Thinking level "max" is not supported for openrouter/deepseek/deepseek-v4. Use one of: `) ||
		!strings.HasSuffix(got.Reply, "xhigh.") || got.Changed {
		t.Errorf("openrouter /think max = %+v", got)
	}
	if r := Resolve(or); r.Think != thinking.XHigh || r.Wanted != thinking.Max {
		t.Errorf("openrouter stored max resolved to %q (wanted %q), want xhigh", r.Think, r.Wanted)
	}
	if got, _ := RemapNotice(or); got != "Thinking level set to xhigh (max not supported for openrouter/deepseek/deepseek-v4)." {
		t.Errorf("RemapNotice = %q", got)
	}

	// Claude 4.6 defaults to adaptive; Opus 4.7 leaves the default to the provider and has max.
	if r := Resolve(layers("anthropic", "", "claude-sonnet-4-6", nil)); r.Think != thinking.Adaptive || r.Sources.Think != FromProvider {
		t.Errorf("claude 4.6 default = %q from %q, want adaptive from provider", r.Think, r.Sources.Think)
	}
	opus := layers("anthropic", "", "claude-opus-4-7", nil)
	if r := Resolve(opus); r.Think != "" {
		t.Errorf("opus 4.7 default = %q, want provider-owned", r.Think)
	}
	if got := apply(opus, "/think max"); got.Reply != "Thinking level set to max." {
		t.Errorf("opus 4.7 /think max = %q", got.Reply)
	}
	if got := apply(opus, "/status"); !strings.Contains(got.Reply, "Think: default") {
		t.Errorf("opus 4.7 /status = %q", got.Reply)
	}

	// A model that does not reason offers only off.
	if got := apply(layers("openai", "", "gpt-4o", nil), "/think high"); got.Reply != `Thinking level "high" is not supported for openai/gpt-4o. Use one of: off.` {
		t.Errorf("gpt-4o /think high = %q", got.Reply)
	}
}
