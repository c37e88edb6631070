package thinking

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ids(p Profile) string {
	var s []string
	for _, o := range p.Levels {
		s = append(s, string(o.ID))
	}
	return strings.Join(s, " ")
}

func TestProfileFor(t *testing.T) {
	tests := []struct {
		name    string
		t       Target
		levels  string
		labels  string
		def     Level
		family  string
		binary  bool
		explain string
	}{
		{name: "Claude 4.6 defaults to adaptive", t: Target{Provider: "anthropic", Model: "claude-sonnet-4-6"},
			levels: "off minimal low medium adaptive high", def: Adaptive, family: "claude-4.6"},
		{name: "Claude 4.6 dated id", t: Target{Provider: "anthropic", Model: "claude-opus-4-6-20260205"},
			levels: "off minimal low medium adaptive high", def: Adaptive, family: "claude-4.6"},
		{name: "Opus 4.7: xhigh, max, provider-owned default", t: Target{Provider: "anthropic", Model: "claude-opus-4-7"},
			levels: "off minimal low medium adaptive high xhigh max", def: "", family: "claude-opus-4.7"},
		{name: "Claude 4.5 manual budgets", t: Target{Provider: "anthropic", Model: "claude-sonnet-4-5"},
			levels: "off minimal low medium high", def: Medium, family: "claude-4"},
		{name: "Claude 3.5 does not think", t: Target{Provider: "anthropic", Model: "claude-3-5-haiku-latest"},
			levels: "off", def: Off, family: "claude-3"},
		{name: "unknown model on a custom anthropic-messages entry, reasoning", t: Target{Provider: "proxy", API: "anthropic-messages", Model: "house-model", Reasoning: true},
			levels: "off minimal low medium high", def: Medium, family: "anthropic-messages"},
		{name: "Claude via OpenRouter reuses the Claude family", t: Target{Provider: "openrouter", Model: "anthropic/claude-opus-4.7"},
			levels: "off minimal low medium adaptive high xhigh max", def: "", family: "openrouter:claude-opus-4.7"},

		{name: "GPT-5.2+ has xhigh", t: Target{Provider: "openai", Model: "gpt-5.4"},
			levels: "off minimal low medium high xhigh", def: Medium, family: "openai/gpt-5.2"},
		{name: "GPT-5.1 has no xhigh", t: Target{Provider: "openai", Model: "gpt-5.1"},
			levels: "off minimal low medium high", def: Medium, family: "openai/gpt-5.1"},
		{name: "Codex models have xhigh", t: Target{Provider: "openai-codex", Model: "gpt-5.3-codex"},
			levels: "off minimal low medium high xhigh", def: Medium, family: "openai/codex"},
		{name: "GPT-4.1 does not reason", t: Target{Provider: "openai", Model: "gpt-4.1"},
			levels: "off", def: Off, family: "openai/gpt"},
		{name: "compat efforts add xhigh", t: Target{Provider: "my-proxy", API: "openai-completions", Model: "m", Reasoning: true, Efforts: []string{"low", "high", "xhigh"}},
			levels: "off minimal low medium high xhigh", def: Medium, family: "openai-compatible"},
		{name: "compat efforts add adaptive and max", t: Target{Provider: "my-proxy", API: "openai-responses", Model: "m", Reasoning: true, Efforts: []string{"adaptive", "max"}},
			levels: "off minimal low medium adaptive high max", def: Medium, family: "openai-compatible"},
		{name: "catalog reasoning false", t: Target{Provider: "my-proxy", API: "openai-completions", Model: "m", Efforts: []string{"xhigh"}},
			levels: "off", def: Off, family: "openai-compatible"},

		{name: "Gemini 3 cannot turn thinking off", t: Target{Provider: "google", Model: "gemini-3-pro-preview"},
			levels: "minimal low medium adaptive high", def: Adaptive, family: "gemini-3-pro"},
		{name: "Gemini 2.5 Flash", t: Target{Provider: "google", Model: "gemini-2.5-flash"},
			levels: "off minimal low medium adaptive high", def: Adaptive, family: "gemini-2.5-flash"},

		{name: "Ollama low|medium|high|max", t: Target{Provider: "ollama", Model: "qwen3:14b"},
			levels: "off low medium high max", def: Medium, family: "ollama/thinking"},
		{name: "Ollama without thinking", t: Target{Provider: "ollama", Model: "llama3.2:3b"},
			levels: "off", def: Off, family: "ollama"},

		{name: "DeepSeek V4 xhigh and max", t: Target{Provider: "deepseek", Model: "deepseek-v4-pro"},
			levels: "off minimal low medium high xhigh max", def: Medium, family: "deepseek/v4"},
		{name: "OpenRouter DeepSeek V4 xhigh, no max", t: Target{Provider: "openrouter", Model: "deepseek/deepseek-v4-flash"},
			levels: "off minimal low medium high xhigh", def: Medium, family: "openrouter/deepseek-v4"},
		{name: "OpenRouter Hunter Alpha: no reasoning", t: Target{Provider: "openrouter", Model: "openrouter/hunter-alpha", Reasoning: true},
			levels: "off", def: Off, family: "openrouter/hunter-alpha"},

		{name: "Z.AI binary", t: Target{Provider: "zai", Model: "glm-4.7"},
			levels: "off low", labels: "off on", def: Low, family: "zai", binary: true},
		{name: "Moonshot Kimi binary", t: Target{Provider: "moonshot", Model: "kimi-k2.6"},
			levels: "off low", labels: "off on", def: Low, family: "moonshot/kimi", binary: true},
		{name: "MiniMax defaults to disabled", t: Target{Provider: "minimax", Model: "MiniMax-M2.7"},
			levels: "off minimal low medium high", def: Off, family: "minimax/anthropic"},

		{name: "provider id case and blanks", t: Target{Provider: " Anthropic ", Model: "Claude-Opus-4-6"},
			levels: "off minimal low medium adaptive high", def: Adaptive, family: "claude-4.6"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := ProfileFor(tc.t)
			if got := ids(p); got != tc.levels {
				t.Errorf("levels = %q, want %q", got, tc.levels)
			}
			labels := tc.labels
			if labels == "" {
				labels = tc.levels
			}
			if got := strings.Join(p.Labels(), " "); got != labels {
				t.Errorf("labels = %q, want %q", got, labels)
			}
			if p.Default != tc.def {
				t.Errorf("default = %q, want %q", p.Default, tc.def)
			}
			if p.Family != tc.family {
				t.Errorf("family = %q, want %q", p.Family, tc.family)
			}
			if p.Binary != tc.binary {
				t.Errorf("binary = %v, want %v", p.Binary, tc.binary)
			}
			if p.Default != "" && !p.Supports(p.Default) {
				t.Errorf("default %q is not supported", p.Default)
			}
		})
	}
}

func TestSupportsNearest(t *testing.T) {
	p := func(provider, model string) Profile { return ProfileFor(Target{Provider: provider, Model: model}) }
	tests := []struct {
		name     string
		p        Profile
		l        Level
		supports bool
		nearest  Level
	}{
		// The seed page's remap rules.
		{"OpenRouter DeepSeek V4: stored max falls back to xhigh", p("openrouter", "deepseek/deepseek-v4-pro"), Max, false, XHigh},
		{"adaptive falls back to medium on a non-adaptive model", p("openai", "gpt-5.2"), Adaptive, false, Medium},
		{"xhigh falls back to the largest level", p("openai", "gpt-5.1"), XHigh, false, High},
		{"max falls back to the largest level", p("anthropic", "claude-sonnet-4-6"), Max, false, High},
		{"xhigh on Ollama: the largest is max", p("ollama", "qwen3"), XHigh, false, Max},
		{"max on Claude 4.5", p("anthropic", "claude-sonnet-4-5"), Max, false, High},
		{"adaptive on Claude 4.5", p("anthropic", "claude-opus-4-5"), Adaptive, false, Medium},
		{"Opus 4.7 keeps xhigh", p("anthropic", "claude-opus-4-7"), XHigh, true, XHigh},
		{"Opus 4.7 keeps max", p("anthropic", "claude-opus-4-7"), Max, true, Max},
		{"Claude 4.6 keeps adaptive", p("anthropic", "claude-opus-4-6"), Adaptive, true, Adaptive},
		{"Ollama minimal rises to low", p("ollama", "qwen3"), Minimal, false, Low},
		{"Gemini 3 off rises to the lowest level", p("google", "gemini-3-pro"), Off, false, Minimal},
		{"off on a model that does not think", p("openai", "gpt-4.1"), Off, true, Off},
		{"high on a model that does not think", p("openai", "gpt-4.1"), High, false, Off},
		{"binary: any non-off level means on", p("zai", "glm-5"), High, true, Low},
		{"binary: xhigh means on", p("zai", "glm-5"), XHigh, true, Low},
		{"binary: off", p("moonshot", "kimi-k2.5"), Off, true, Off},
		{"always-on binary refuses off", p("deepseek", "deepseek-reasoner"), Off, false, Low},
		{"gpt-5-pro: everything is high", p("openai", "gpt-5-pro"), Low, false, High},
		{"nothing stored", p("openai", "gpt-5.2"), "", false, ""},
		{"not a level", p("openai", "gpt-5.2"), "ultra", false, Medium},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Supports(tc.l); got != tc.supports {
				t.Errorf("Supports(%q) = %v, want %v (levels %s)", tc.l, got, tc.supports, ids(tc.p))
			}
			if got := tc.p.Nearest(tc.l); got != tc.nearest {
				t.Errorf("Nearest(%q) = %q, want %q (levels %s)", tc.l, got, tc.nearest, ids(tc.p))
			}
		})
	}
}

// TestReferenceRemap is the reference's resolveSupportedThinkingLevelFromProfile cases
// (directives.md §5.5.5) on hand-built profiles.
func TestReferenceRemap(t *testing.T) {
	mk := func(ls ...Level) Profile {
		var p Profile
		for _, l := range ls {
			p.Levels = append(p.Levels, Option{ID: l, Label: string(l)})
		}
		return p
	}
	got := map[string]Level{
		"max [off high]":                   mk(Off, High).Nearest(Max),
		"adaptive [off..high]":             mk(Off, Minimal, Low, Medium, High).Nearest(Adaptive),
		"xhigh [off..high]":                mk(Off, Minimal, Low, Medium, High).Nearest(XHigh),
		"medium [off low high]":            mk(Off, Low, High).Nearest(Medium),
		"minimal [off medium high]":        mk(Off, Medium, High).Nearest(Minimal),
		"high [off]":                       mk(Off).Nearest(High),
		"low [off low medium] (supported)": mk(Off, Low, Medium).Nearest(Low),
	}
	want := map[string]Level{
		"max [off high]":                   High,
		"adaptive [off..high]":             Medium,
		"xhigh [off..high]":                High,
		"medium [off low high]":            Low,
		"minimal [off medium high]":        Medium,
		"high [off]":                       Off,
		"low [off low medium] (supported)": Low,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("remap (-want +got):\n%s", d)
	}
}

func TestMapErrors(t *testing.T) {
	_, err := Map(Target{Provider: "openai", Model: "gpt-5.1"}, XHigh, false)
	var ue *UnsupportedError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Map(gpt-5.1, xhigh) error = %v, want an UnsupportedError", err)
	}
	want := &UnsupportedError{Provider: "openai", Model: "gpt-5.1", Level: XHigh, Options: []string{"off", "minimal", "low", "medium", "high"}}
	if d := cmp.Diff(want, ue); d != "" {
		t.Errorf("error (-want +got):\n%s", d)
	}
	if _, err := Map(Target{Provider: "openai", Model: "gpt-5.1"}, "ultra", false); err == nil || errors.Is(err, ErrUnsupported) {
		t.Errorf("Map with a non-canonical level: error = %v, want a plain error", err)
	}
}

func TestMapSpecifics(t *testing.T) {
	tests := []struct {
		name string
		t    Target
		l    Level
		fast bool
		want string // rendered patch
	}{
		{"Anthropic service tier is skipped through a proxy even from params",
			Target{Provider: "anthropic", Model: "claude-opus-4-6", Params: map[string]any{"service_tier": "auto"}}, "", true, "-"},
		{"an explicit serviceTier wins over fast mode",
			Target{Provider: "anthropic", Model: "claude-opus-4-6", Direct: true, Params: map[string]any{"serviceTier": "standard_only"}}, "", true,
			`{"service_tier":"standard_only"}`},
		{"serviceTier is read before service_tier",
			Target{Provider: "openai", Model: "gpt-5.2", Params: map[string]any{"serviceTier": "flex", "service_tier": "default"}}, "", false,
			`{"service_tier":"flex"}`},
		{"OpenAI fast is priority",
			Target{Provider: "openai", Model: "gpt-5.2"}, High, true, `{"include":["reasoning.encrypted_content"],"reasoning":{"effort":"high","summary":"auto"},"service_tier":"priority","store":false}`},
		{"OpenAI off omitted where none is unsupported",
			Target{Provider: "openai", Model: "gpt-5"}, Off, false, "-"},
		{"MiniMax rename only for M2.x",
			Target{Provider: "minimax", Model: "MiniMax-M2.5"}, "", true, "model MiniMax-M2.5-highspeed"},
		{"MiniMax highspeed is not renamed again",
			Target{Provider: "minimax", Model: "MiniMax-M2.5-highspeed"}, "", true, "-"},
		{"budget fits: max_tokens left alone",
			Target{Provider: "anthropic", Model: "claude-sonnet-4-5", MaxTokens: 64000}, High, false,
			`{"temperature":null,"thinking":{"budget_tokens":16384,"type":"enabled"},"top_k":null} | header Anthropic-Beta: interleaved-thinking-2025-05-14`},
		{"budget leaves too little room: max_tokens raised",
			Target{Provider: "anthropic", Model: "claude-sonnet-4-5", MaxTokens: 17000}, High, false,
			`{"max_tokens":33384,"temperature":null,"thinking":{"budget_tokens":16384,"type":"enabled"},"top_k":null} | header Anthropic-Beta: interleaved-thinking-2025-05-14`},
		{"Moonshot auto tool choice only when forced",
			Target{Provider: "moonshot", Model: "kimi-k2.6", ToolChoice: "none"}, Low, false, `{"thinking":{"type":"enabled"}}`},
		{"Moonshot off keeps a forced tool choice",
			Target{Provider: "moonshot", Model: "kimi-k2.6", ToolChoice: "required"}, Off, false, `{"thinking":{"type":"disabled"}}`},
		{"Ollama max is sent as high", Target{Provider: "ollama", Model: "deepseek-r1:7b"}, Max, false, `{"think":"high"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Map(tc.t, tc.l, tc.fast)
			if err != nil {
				t.Fatal(err)
			}
			if got := renderPatch(p); got != tc.want {
				t.Errorf("patch = %s\nwant    %s", got, tc.want)
			}
		})
	}
}

// TestTable checks the table's own invariants: every row parses, lists its levels in rank
// order without duplicates, has a default it supports, and budget rows carry numbers.
func TestTable(t *testing.T) {
	all := append(rows()[:len(rows()):len(rows())], *openrouterRow())
	for _, r := range all {
		seen := map[Level]bool{}
		for i, l := range r.levels {
			if seen[l.id] {
				t.Errorf("row %s: %s twice", r.name, l.id)
			}
			seen[l.id] = true
			if i > 0 && r.levels[i-1].id.Rank() > l.id.Rank() {
				t.Errorf("row %s: levels out of rank order", r.name)
			}
			// Budgets are numbers: every Gemini 2.5 level (off 0, adaptive -1), and every
			// Anthropic level but off, which sends {type: disabled}.
			isBudget := r.wire == wireGeminiBudget || r.wire == wireAnthropicBudget && l.id != Off
			if isBudget {
				if strings.Trim(l.value, "-0123456789") != "" {
					t.Errorf("row %s: %s budget %q is not a number", r.name, l.id, l.value)
				}
			}
		}
		if r.def != "" && !seen[r.def] {
			t.Errorf("row %s: default %s is not one of its levels", r.name, r.def)
		}
		if r.model == nil {
			t.Errorf("row %s: no model pattern", r.name)
		}
	}
}

// TestHostileModelIDs: a model id with a line break or other control bytes, or a very long one,
// still gets its provider's family and that provider's wire. The patterns' ".*" did not cross a
// newline, so such an id matched no row of its provider, not even the catch-all, and took the
// OpenAI-compatible row: an Anthropic, Gemini or Ollama request was given reasoning_effort.
func TestHostileModelIDs(t *testing.T) {
	long := strings.Repeat("vendor/", 50000)
	tests := []struct {
		t      Target
		family string
		field  string // a member the level high puts in the body
	}{
		{Target{Provider: "anthropic", Model: "my\nmodel", Reasoning: true}, "anthropic-messages", `"thinking"`},
		{Target{Provider: "anthropic", Model: "claude-opus-4-7@\n\x00", Reasoning: true}, "claude-opus-4.7", `"output_config"`},
		{Target{Provider: "anthropic", Model: long + "claude-opus-4-7", Reasoning: true}, "claude-opus-4.7", `"output_config"`},
		{Target{Provider: "google", Model: "gemini-3-pro-\r\nx"}, "gemini-3-pro", `"thinkingConfig"`},
		{Target{Provider: "ollama", Model: "my\nmodel", Reasoning: true}, "ollama", `"think"`},
		{Target{Provider: "zai", Model: "glm\n5"}, "zai", `"thinking"`},
		{Target{Provider: "moonshot", Model: "kimi-k2\n" + long}, "moonshot/kimi", `"thinking"`},
	}
	for _, tt := range tests {
		p := ProfileFor(tt.t)
		if p.Family != tt.family {
			t.Errorf("ProfileFor(%s, %.40q) = %s, want %s", tt.t.Provider, tt.t.Model, p.Family, tt.family)
			continue
		}
		patch, err := Map(tt.t, p.Nearest(High), false)
		if err != nil || !strings.Contains(string(patch.Body), tt.field) || strings.Contains(string(patch.Body), "reasoning_effort") {
			t.Errorf("Map(%s, %.40q, high) = %s, %v; want %s and no reasoning_effort",
				tt.t.Provider, tt.t.Model, patch.Body, err, tt.field)
		}
	}
}
