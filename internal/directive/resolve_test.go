package directive

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/thinking"
)

// profile builds a test profile from "off minimal low:on …" (id, or id:label).
func profile(spec string, def thinking.Level) thinking.Profile {
	p := thinking.Profile{Default: def}
	for _, f := range strings.Fields(spec) {
		id, label, ok := strings.Cut(f, ":")
		if !ok {
			label = id
		}
		p.Levels = append(p.Levels, thinking.Option{ID: thinking.Level(id), Label: label})
	}
	return p
}

var (
	baseProfile   = profile("off minimal low medium high", thinking.Medium)
	binaryProfile = func() thinking.Profile {
		p := profile("off low:on", thinking.Off)
		p.Binary = true
		return p
	}()
	ownedProfile = profile("low medium high xhigh adaptive max", "")
)

// step is one row of a resolution-order table: the layers after removing the ones above it.
type step struct {
	name string
	drop func(*Layers)
	want string
	src  Source
}

func TestResolveThinkOrder(t *testing.T) {
	l := Layers{
		Inline:  Parse("/think max go").Directives,
		Session: map[string]string{KeyThinking: "xhigh"},
		Agent:   Defaults{Thinking: "high", Params: map[string]any{"thinking": "medium"}},
		Global:  Defaults{Thinking: "minimal", Params: map[string]any{"thinking": "low"}},
		// A zero profile accepts every level, so each layer's own value shows.
		Reasoning: true,
	}
	steps := []step{
		{"inline", func(*Layers) {}, "max", FromInline},
		{"session", func(l *Layers) { l.Inline = nil }, "xhigh", FromSession},
		{"agent thinkingDefault", func(l *Layers) { delete(l.Session, KeyThinking) }, "high", FromAgent},
		{"agent model params", func(l *Layers) { l.Agent.Thinking = "" }, "medium", FromAgentModel},
		{"defaults model params", func(l *Layers) { l.Agent.Params = nil }, "low", FromModel},
		{"defaults thinkingDefault", func(l *Layers) { l.Global.Params = nil }, "minimal", FromConfig},
		{"reasoning model fallback", func(l *Layers) { l.Global.Thinking = "" }, "medium", FromProvider},
		{"non-reasoning fallback", func(l *Layers) { l.Reasoning = false }, "off", FromDefault},
		{"provider default", func(l *Layers) { l.Profile = profile("off low medium high", thinking.High) }, "high", FromProvider},
		{"provider-owned default", func(l *Layers) { l.Profile = ownedProfile }, "", FromProvider},
		{"non-reasoning profile", func(l *Layers) { l.Profile = profile("off", thinking.Off) }, "off", FromProvider},
	}
	for _, s := range steps {
		s.drop(&l)
		r := Resolve(l)
		if string(r.Think) != s.want || r.Sources.Think != s.src {
			t.Errorf("%s: Think = %q from %q, want %q from %q", s.name, r.Think, r.Sources.Think, s.want, s.src)
		}
	}
}

func TestResolveThinkDetails(t *testing.T) {
	tests := []struct {
		name       string
		l          Layers
		want, orig thinking.Level
		src        Source
	}{
		{"inline clear skips the session override", Layers{
			Inline:  Parse("/think default go").Directives,
			Session: map[string]string{KeyThinking: "xhigh"},
			Agent:   Defaults{Thinking: "high"},
		}, "high", "high", FromAgent},
		{"a query inline is not a level", Layers{
			Inline:  []D{{Name: Think, Query: true}},
			Session: map[string]string{KeyThinking: "low"},
		}, "low", "low", FromSession},
		{"params.thinking false is off", Layers{
			Global: Defaults{Thinking: "high", Params: map[string]any{"thinking": false}},
		}, "off", "off", FromModel},
		{"params.thinking disabled is off", Layers{
			Agent: Defaults{Params: map[string]any{"thinking": "Disabled"}},
		}, "off", "off", FromAgentModel},
		{"params.thinking true or junk is unset", Layers{
			Agent:  Defaults{Params: map[string]any{"thinking": true}},
			Global: Defaults{Thinking: "low", Params: map[string]any{"thinking": "lots"}},
		}, "low", "low", FromConfig},
		{"config words are normalized", Layers{Global: Defaults{Thinking: "Extra High"}}, "xhigh", "xhigh", FromConfig},
		{"an invalid session value falls through", Layers{
			Session: map[string]string{KeyThinking: "bogus"}, Global: Defaults{Thinking: "low"},
		}, "low", "low", FromConfig},
		// Stored levels the model lacks are remapped by rank (after a model switch).
		{"stored max on off/high", Layers{
			Session: map[string]string{KeyThinking: "max"}, Profile: profile("off high", thinking.High),
		}, "high", "max", FromSession},
		{"stored adaptive on a fixed-level model", Layers{
			Session: map[string]string{KeyThinking: "adaptive"}, Profile: baseProfile,
		}, "medium", "adaptive", FromSession},
		{"stored xhigh on ..high", Layers{
			Session: map[string]string{KeyThinking: "xhigh"}, Profile: baseProfile,
		}, "high", "xhigh", FromSession},
		{"configured level remapped too", Layers{
			Global: Defaults{Thinking: "max"}, Profile: baseProfile,
		}, "high", "max", FromConfig},
		{"binary profile maps on-levels to on", Layers{
			Session: map[string]string{KeyThinking: "high"}, Profile: binaryProfile,
		}, "low", "high", FromSession},
	}
	for _, tt := range tests {
		r := Resolve(tt.l)
		if r.Think != tt.want || r.Wanted != tt.orig || r.Sources.Think != tt.src {
			t.Errorf("%s: Think %q (wanted %q) from %q; want %q (%q) from %q",
				tt.name, r.Think, r.Wanted, r.Sources.Think, tt.want, tt.orig, tt.src)
		}
	}
}

func TestResolveFastOrder(t *testing.T) {
	l := Layers{
		Inline:  Parse("/fast on go").Directives,
		Session: map[string]string{KeyFast: "auto"},
		Agent:   Defaults{Fast: "false"},
		Global:  Defaults{Fast: "true", Params: map[string]any{"fastMode": "auto"}},
	}
	steps := []step{
		{"inline", func(*Layers) {}, "on", FromInline},
		{"session", func(l *Layers) { l.Inline = nil }, "auto", FromSession},
		{"agent fastModeDefault", func(l *Layers) { delete(l.Session, KeyFast) }, "off", FromAgent},
		{"defaults fastModeDefault", func(l *Layers) { l.Agent.Fast = "" }, "on", FromConfig},
		{"model params fastMode", func(l *Layers) { l.Global.Fast = "" }, "auto", FromModel},
		{"model params fast_mode", func(l *Layers) { l.Global.Params = map[string]any{"fast_mode": true} }, "on", FromModel},
		{"params false", func(l *Layers) { l.Global.Params = map[string]any{"fastMode": false} }, "off", FromModel},
		{"fallback", func(l *Layers) { l.Global.Params = nil }, "off", FromDefault},
	}
	for _, s := range steps {
		s.drop(&l)
		r := Resolve(l)
		if string(r.Fast) != s.want || r.Sources.Fast != s.src {
			t.Errorf("%s: Fast = %q from %q, want %q from %q", s.name, r.Fast, r.Sources.Fast, s.want, s.src)
		}
	}
	// An inline /fast default skips the session override for that message.
	r := Resolve(Layers{Inline: Parse("/fast reset go").Directives,
		Session: map[string]string{KeyFast: "on"}, Global: Defaults{Fast: "off"}})
	if r.Fast != thinking.FastOff || r.Sources.Fast != FromConfig {
		t.Errorf("inline clear: Fast = %q from %q, want off from config", r.Fast, r.Sources.Fast)
	}
}

func TestResolveWordOrder(t *testing.T) {
	for _, tt := range []struct {
		name                    Name
		key                     string
		set                     func(*Defaults, string)
		get                     func(Resolved) (string, Source)
		inline, sess, agt, glob string
	}{
		{Verbose, KeyVerbose, func(d *Defaults, v string) { d.Verbose = v },
			func(r Resolved) (string, Source) { return r.Verbose, r.Sources.Verbose }, "full", "on", "off", "full"},
		{Trace, KeyTrace, func(d *Defaults, v string) { d.Trace = v },
			func(r Resolved) (string, Source) { return r.Trace, r.Sources.Trace }, "raw", "on", "off", "raw"},
		{Reasoning, KeyReasoning, func(d *Defaults, v string) { d.Reasoning = v },
			func(r Resolved) (string, Source) { return r.Reasoning, r.Sources.Reasoning }, "stream", "on", "off", "stream"},
	} {
		l := Layers{
			Inline:  Parse("/" + string(tt.name) + " " + tt.inline + " go").Directives,
			Session: map[string]string{tt.key: tt.sess},
		}
		tt.set(&l.Agent, tt.agt)
		tt.set(&l.Global, tt.glob)
		steps := []step{
			{"inline", func(*Layers) {}, tt.inline, FromInline},
			{"session", func(l *Layers) { l.Inline = nil }, tt.sess, FromSession},
			{"agent", func(l *Layers) { delete(l.Session, tt.key) }, tt.agt, FromAgent},
			{"defaults", func(l *Layers) { tt.set(&l.Agent, "") }, tt.glob, FromConfig},
			{"fallback", func(l *Layers) { tt.set(&l.Global, "") }, "off", FromDefault},
		}
		for _, s := range steps {
			s.drop(&l)
			v, src := tt.get(Resolve(l))
			if v != s.want || src != s.src {
				t.Errorf("%s %s: %q from %q, want %q from %q", tt.name, s.name, v, src, s.want, s.src)
			}
		}
	}
}

func TestResolveEmpty(t *testing.T) {
	want := Resolved{Think: "off", Wanted: "off", Fast: "off", Verbose: "off", Trace: "off", Reasoning: "off",
		Sources: Sources{FromDefault, FromDefault, FromDefault, FromDefault, FromDefault}}
	if d := cmp.Diff(want, Resolve(Layers{})); d != "" {
		t.Errorf("Resolve(zero) (-want +got):\n%s", d)
	}
}
