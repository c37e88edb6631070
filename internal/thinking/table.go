package thinking

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// wire is how a row's levels land in a request body; mapping.go holds one encoder for each.
type wire int

const (
	wireNone            wire = iota // sends nothing (a model that does not think, a retired route)
	wireAnthropicEffort             // thinking {type: adaptive} + output_config.effort
	wireAnthropicBudget             // thinking {type: enabled, budget_tokens}
	wireOpenAI                      // Responses reasoning {effort, summary}, Chat reasoning_effort
	wireDeepSeek                    // thinking {type} + reasoning_effort
	wireOpenRouter                  // reasoning {effort} | {enabled: true}
	wireToggle                      // thinking {type: enabled | disabled}
	wireGeminiLevel                 // generationConfig.thinkingConfig.thinkingLevel
	wireGeminiBudget                // generationConfig.thinkingConfig.thinkingBudget
	wireOllama                      // think
)

// effortLike reports whether a wire's level values are effort words (so a proxy can forward them).
func (w wire) effortLike() bool {
	switch w {
	case wireAnthropicEffort, wireOpenAI, wireDeepSeek, wireOpenRouter:
		return true
	}
	return false
}

// fastKind is what fast mode does on a row.
type fastKind int

const (
	fastNone          fastKind = iota
	fastOpenAITier             // service_tier: priority
	fastAnthropicTier          // service_tier: auto | standard_only, direct endpoints only
	fastRename                 // model → model + "-highspeed"
)

// omit as a level's value: the level is accepted but sends no field (OpenAI off on a model with
// no "none" effort: the seed page's "omits the disabled reasoning payload").
const omit = "-"

// level is one supported level of a row: its wire value and menu label.
type level struct {
	id    Level
	value string
	label string
}

// row is one line of the table: which targets it covers and what they support. The first row
// that matches a target wins, so specific families come before their provider's catch-all.
type row struct {
	name      string         // the family, shown in Profile.Family and the golden file
	providers []string       // provider ids; nil: any provider
	api       string         // "" any API
	model     *regexp.Regexp // against the lowercased model id
	wire      wire
	levels    []level
	def       Level // declared default; "" applies the fallback rule
	owned     bool  // the provider owns the default: Profile.Default is "" and nothing is sent
	binary    bool
	gated     bool // a catch-all: its levels apply only when Target.Reasoning, else [off]
	fast      fastKind
	// rename is the fast-mode model pattern (fastRename): only ids it matches get "-highspeed".
	rename *regexp.Regexp
	// claude: Anthropic's own rules apply (no temperature/top_k and no forced tool with
	// thinking on); summarize: send thinking.display "summarized", the default having flipped
	// to omitted on the 4.7 generation; interleaved: send the interleaved-thinking beta header
	// with manual budgets.
	claude, summarize, interleaved bool
	// autoTool: a "required" tool choice becomes "auto" while thinking (Moonshot refuses it).
	autoTool bool
}

// spec parses a level list: space-separated items "level", "level=value" or "level=value:label"
// (or "level:label"). A level's value defaults to its own name. The table is package data, so a
// malformed spec is a programming error and panics when the table is built; TestTable covers
// every row.
func spec(s string) []level {
	var out []level
	for item := range strings.FieldsSeq(s) {
		name, label, _ := strings.Cut(item, ":")
		name, value, hasValue := strings.Cut(name, "=")
		l := Level(name)
		if !l.Valid() {
			panic(fmt.Sprintf("thinking: table spec %q: %q is not a level", s, name))
		}
		if !hasValue {
			value = name
		}
		if label == "" {
			label = name
		}
		out = append(out, level{l, value, label})
	}
	slices.SortStableFunc(out, func(a, b level) int { return a.id.Rank() - b.id.Rank() })
	return out
}

// model compiles a model pattern. It must match the whole id, after an optional "vendor/" (an
// OpenRouter or Ollama namespace) or "vendor." (a Bedrock id) prefix. "." matches any character, a
// newline too, so an id with control bytes still meets its provider's catch-all.
func model(pattern string) *regexp.Regexp {
	return regexp.MustCompile(`(?s)^(?:.*[/.])?(?:` + pattern + `)$`)
}

// Level lists shared by the rows of one family across providers, so that direct Anthropic and
// proxies of Claude agree.
const (
	baseLevels     = "off minimal low medium high"
	claudeBudgets  = "off minimal=1024 low=4096 medium=8192 high=16384"
	claude46       = "off minimal=low low medium high adaptive"
	claude47       = "off minimal=low low medium high xhigh adaptive max"
	binaryLevels   = "off low:on"
	ollamaLevels   = "off=false low medium high max=high"
	gemini25Budget = "minimal=512 low=2048 medium=8192 high=24576 adaptive=-1"
)

var openaiIDs = []string{"openai", "openai-codex"}

// rows is the table. Every provider note of the thinking page is a row (or a pair of rows);
// families are matched by pattern, never by listing models. It is built on first use: its
// patterns and level lists cost about 0.6 ms, which every process linking the package (a
// code-mode sandbox child, most CLI commands) paid at initialization without ever asking.
var rows = sync.OnceValue(func() []row {
	anyModel, minimaxFast := model(`.*`), model(`minimax-m2\.[0-9]+`)
	return []row{
		// MiniMax on the Anthropic-compatible path: thinking disabled unless set, because M2.x leaks
		// reasoning_content deltas in a non-native stream format; /fast renames M2.x to -highspeed.
		{name: "minimax/anthropic", providers: []string{"minimax"}, api: "anthropic-messages", model: anyModel,
			wire: wireAnthropicBudget, levels: spec(claudeBudgets), def: Off, fast: fastRename, rename: minimaxFast},

		// Claude, on any provider that speaks anthropic-messages (Bedrock-style proxies included).
		{name: "claude-fable-mythos", api: "anthropic-messages", model: model(`claude-(?:fable|mythos)-.*`),
			wire: wireAnthropicEffort, levels: spec("minimal=low low medium high xhigh adaptive max"), owned: true,
			fast: fastAnthropicTier, claude: true, summarize: true},
		{name: "claude-opus-4.7", api: "anthropic-messages", model: model(`claude-opus-4[.-][7-9](?:[-@:].*)?|claude-(?:opus|sonnet)-[5-9](?:[.-].*)?`),
			wire: wireAnthropicEffort, levels: spec(claude47), owned: true, fast: fastAnthropicTier, claude: true, summarize: true},
		{name: "claude-4.6", api: "anthropic-messages", model: model(`claude-(?:opus|sonnet)-4[.-]6(?:[-@:].*)?`),
			wire: wireAnthropicEffort, levels: spec(claude46), def: Adaptive, fast: fastAnthropicTier, claude: true},
		{name: "claude-4", api: "anthropic-messages", model: model(`claude-(?:opus|sonnet|haiku)-4(?:[.-].*)?|claude-4-.*`),
			wire: wireAnthropicBudget, levels: spec(claudeBudgets), fast: fastAnthropicTier, claude: true, interleaved: true},
		{name: "claude-3.7", api: "anthropic-messages", model: model(`claude-3[.-]7-sonnet.*`),
			wire: wireAnthropicBudget, levels: spec(claudeBudgets), fast: fastAnthropicTier, claude: true},
		{name: "claude-3", api: "anthropic-messages", model: model(`claude-.*`),
			wire: wireNone, levels: spec("off"), fast: fastAnthropicTier, claude: true},
		{name: "anthropic-messages", api: "anthropic-messages", model: anyModel,
			wire: wireAnthropicBudget, levels: spec(claudeBudgets), gated: true, fast: fastAnthropicTier, claude: true},

		// OpenAI (and the Codex auth path): Responses effort support per family; off sends
		// "none" only where the model has it.
		{name: "openai/pro", providers: openaiIDs, model: model(`gpt-5\.(?:[2-9]|[0-9]{2,})-pro(?:-.*)?`),
			wire: wireOpenAI, levels: spec("off=- minimal=medium low=medium medium high xhigh"), fast: fastOpenAITier},
		{name: "openai/pro-legacy", providers: openaiIDs, model: model(`(?:gpt-5|o1|o3)-pro(?:-.*)?`),
			wire: wireOpenAI, levels: spec("off=- high"), fast: fastOpenAITier},
		{name: "openai/gpt-5.6", providers: openaiIDs, model: model(`gpt-5\.6(?:-.*)?`),
			wire: wireOpenAI, levels: spec("off=none minimal=low low medium high xhigh max"), fast: fastOpenAITier},
		{name: "openai/codex", providers: openaiIDs, model: model(`gpt-5\.(?:[2-9]|[0-9]{2,})-codex(?:-.*)?|gpt-5\.1-codex-max(?:-.*)?`),
			wire: wireOpenAI, levels: spec("off=- minimal=low low medium high xhigh"), fast: fastOpenAITier},
		{name: "openai/codex-legacy", providers: openaiIDs, model: model(`gpt-5(?:\.1)?-codex(?:-.*)?`),
			wire: wireOpenAI, levels: spec("off=- minimal=low low medium high"), fast: fastOpenAITier},
		{name: "openai/chat", providers: openaiIDs, model: model(`gpt-5(?:\.[0-9]+)?-chat(?:-.*)?`),
			wire: wireNone, levels: spec("off"), fast: fastOpenAITier},
		{name: "openai/gpt-5.2", providers: openaiIDs, model: model(`gpt-5\.(?:[2-9]|[0-9]{2,})(?:-.*)?`),
			wire: wireOpenAI, levels: spec("off=none minimal=low low medium high xhigh"), fast: fastOpenAITier},
		{name: "openai/gpt-5.1", providers: openaiIDs, model: model(`gpt-5\.1(?:-.*)?`),
			wire: wireOpenAI, levels: spec("off=none minimal=low low medium high"), fast: fastOpenAITier},
		{name: "openai/gpt-5", providers: openaiIDs, model: model(`gpt-5(?:-.*)?`),
			wire: wireOpenAI, levels: spec("off=- minimal low medium high"), fast: fastOpenAITier},
		{name: "openai/o-series", providers: openaiIDs, model: model(`o[1-9](?:-.*)?`),
			wire: wireOpenAI, levels: spec("off=- minimal=low low medium high"), fast: fastOpenAITier},
		{name: "openai/gpt", providers: openaiIDs, model: model(`(?:gpt|chatgpt)-.*`),
			wire: wireNone, levels: spec("off"), fast: fastOpenAITier},
		{name: "openai", providers: openaiIDs, model: anyModel,
			wire: wireOpenAI, levels: spec("off=- minimal low medium high"), gated: true, fast: fastOpenAITier},

		// Gemini, on any provider that speaks google-generative-ai. Gemini 3 has levels and cannot
		// turn thinking off; 2.5 has budgets, -1 being dynamic. Adaptive is the provider's dynamic
		// thinking, which is also what Gemini does when nothing is sent.
		{name: "gemini-3-pro", api: "google-generative-ai", model: model(`gemini-3(?:\.0)?-pro(?:-.*)?`),
			wire: wireGeminiLevel, levels: spec("minimal=LOW low=LOW medium=HIGH high=HIGH adaptive"), def: Adaptive},
		{name: "gemini-3.x-pro", api: "google-generative-ai", model: model(`gemini-3\.[0-9]+-pro(?:-.*)?`),
			wire: wireGeminiLevel, levels: spec("minimal=LOW low=LOW medium=MEDIUM high=HIGH adaptive"), def: Adaptive},
		{name: "gemini-3", api: "google-generative-ai", model: model(`gemini-(?:[3-9]|[1-9][0-9])(?:[.-].*)?`),
			wire: wireGeminiLevel, levels: spec("minimal=MINIMAL low=LOW medium=MEDIUM high=HIGH adaptive"), def: Adaptive},
		{name: "gemini-2.5-pro", api: "google-generative-ai", model: model(`gemini-2\.5-pro(?:-.*)?`),
			wire: wireGeminiBudget, levels: spec(gemini25Budget), def: Adaptive},
		{name: "gemini-2.5-flash-lite", api: "google-generative-ai", model: model(`gemini-2\.5-flash-lite(?:-.*)?`),
			wire: wireGeminiBudget, levels: spec("off=0 " + gemini25Budget), def: Off},
		{name: "gemini-2.5-flash", api: "google-generative-ai", model: model(`gemini-2\.5-flash(?:-.*)?`),
			wire: wireGeminiBudget, levels: spec("off=0 " + gemini25Budget), def: Adaptive},
		{name: "google", api: "google-generative-ai", model: anyModel, wire: wireNone, levels: spec("off")},

		// Ollama's native API: low|medium|high|max, max sent as "high" (the efforts the native API
		// accepts). gpt-oss cannot turn its trace off.
		{name: "ollama/gpt-oss", api: "ollama", model: model(`gpt-oss(?:[:-].*)?`),
			wire: wireOllama, levels: spec("low medium high max=high")},
		{name: "ollama/thinking", api: "ollama", model: model(`(?:qwen3|qwq|deepseek-r1|deepseek-v3\.[1-9]|magistral|phi4-reasoning|cogito|exaone-deep)(?:[.:-].*)?`),
			wire: wireOllama, levels: spec(ollamaLevels)},
		{name: "ollama", api: "ollama", model: anyModel, wire: wireOllama, levels: spec(ollamaLevels), gated: true},

		// DeepSeek direct: V4 has xhigh and max, both sent as "max"; lower non-off levels as "high".
		{name: "deepseek/v4", providers: []string{"deepseek"}, model: model(`deepseek-v4(?:-.*)?`),
			wire: wireDeepSeek, levels: spec("off minimal=high low=high medium=high high xhigh=max max")},
		{name: "deepseek/reasoner", providers: []string{"deepseek"}, model: model(`deepseek-reasoner`),
			wire: wireNone, levels: spec("low:on"), binary: true, def: Low},
		{name: "deepseek/chat", providers: []string{"deepseek"}, model: model(`deepseek-chat`),
			wire: wireToggle, levels: spec(binaryLevels), binary: true, def: Off},
		{name: "deepseek", providers: []string{"deepseek"}, model: anyModel,
			wire: wireDeepSeek, levels: spec("off minimal=high low=high medium=high high"), gated: true},

		// OpenRouter: the retired Hunter Alpha route gets no reasoning injection (it could return
		// the final answer through reasoning fields); DeepSeek V4 has xhigh but not max. Other
		// "vendor/" ids take the vendor's family (see upstream in mapping.go) with OpenRouter's wire.
		{name: "openrouter/hunter-alpha", providers: []string{"openrouter"}, model: model(`hunter-alpha(?:[:-].*)?`),
			wire: wireNone, levels: spec("off")},
		{name: "openrouter/deepseek-v4", providers: []string{"openrouter"}, model: model(`deepseek-v4(?:-.*)?`),
			wire: wireOpenRouter, levels: spec("off minimal low medium high xhigh")},

		// Moonshot Kimi: K2.x thinking is enabled or disabled; K3 always reasons and takes an effort;
		// K2.7 code always thinks.
		{name: "moonshot/kimi-k3", providers: []string{"moonshot"}, model: model(`kimi-k3(?:[.-].*)?`),
			wire: wireOpenAI, levels: spec("minimal=low low medium=high high max"), owned: true},
		{name: "moonshot/kimi-k2.7-code", providers: []string{"moonshot"}, model: model(`kimi-k2\.7-code(?:-.*)?`),
			wire: wireNone, levels: spec("low:on"), binary: true, def: Low},
		{name: "moonshot/kimi", providers: []string{"moonshot"}, model: model(`kimi-.*`),
			wire: wireToggle, levels: spec(binaryLevels), binary: true, autoTool: true},
		{name: "moonshot", providers: []string{"moonshot"}, model: anyModel,
			wire: wireToggle, levels: spec(binaryLevels), binary: true, gated: true, autoTool: true},

		// Z.AI GLM: binary thinking.
		{name: "zai", providers: []string{"zai"}, model: anyModel, wire: wireToggle, levels: spec(binaryLevels), binary: true},

		// MiniMax on its OpenAI-compatible path, and every other OpenAI-compatible entry: the base
		// levels when the catalog says the model reasons, mapped onto compat.supportedReasoningEfforts.
		// Off sends nothing unless the entry lists "none": "off" is no effort the API defines.
		{name: "openai-compatible", model: anyModel, wire: wireOpenAI, levels: spec("off=- minimal low medium high"), gated: true},
	}
})

// upstream maps an OpenRouter "vendor/" prefix to the built-in provider whose families it routes.
var upstream = map[string]string{
	"anthropic":  "anthropic",
	"openai":     "openai",
	"google":     "google",
	"deepseek":   "deepseek",
	"moonshotai": "moonshot",
	"z-ai":       "zai",
}

// upstreamAPI is the API the upstream provider's rows are written for.
var upstreamAPI = map[string]string{
	"anthropic": "anthropic-messages",
	"google":    "google-generative-ai",
	"openai":    "openai-responses",
	"deepseek":  "openai-completions",
	"moonshot":  "openai-completions",
	"zai":       "openai-completions",
}

func (r *row) matches(provider, api, model string) bool {
	if r.providers != nil && !slices.Contains(r.providers, provider) {
		return false
	}
	if r.api != "" && r.api != api {
		return false
	}
	return r.model.MatchString(model)
}

// lookup returns the row for t. For OpenRouter, a row written for OpenRouter wins; else a
// "vendor/" id takes the vendor's row, whose wire the caller replaces with OpenRouter's.
func lookup(t Target) (r *row, proxied bool) {
	rows := rows()
	provider := t.Provider
	id := strings.ToLower(strings.TrimSpace(t.Model))
	if provider == "openrouter" {
		for i := range rows {
			if rows[i].providers != nil && slices.Contains(rows[i].providers, "openrouter") && rows[i].matches(provider, t.API, id) {
				return &rows[i], false
			}
		}
		if vendor, rest, ok := strings.Cut(id, "/"); ok {
			if p, ok := upstream[vendor]; ok {
				for i := range rows {
					if !rows[i].gated && rows[i].matches(p, upstreamAPI[p], rest) {
						return &rows[i], true
					}
				}
			}
		}
		return openrouterRow(), false
	}
	if slices.Contains(builtin, provider) {
		for i := range rows {
			if rows[i].matches(provider, t.API, id) {
				return &rows[i], false
			}
		}
	}
	// A custom entry: the rows of its API (Claude, Gemini, Ollama families by model id), or
	// the OpenAI-compatible catch-all.
	for i := range rows {
		if rows[i].providers == nil && rows[i].matches(provider, t.API, id) {
			return &rows[i], false
		}
	}
	return &rows[len(rows)-1], false
}

// openrouterRow is OpenRouter's catch-all: any reasoning model, the effort named as the level.
var openrouterRow = sync.OnceValue(func() *row {
	return &row{name: "openrouter", model: model(`.*`), wire: wireOpenRouter, levels: spec(baseLevels), gated: true}
})

// builtin is the provider ids whose rows are written by provider.
var builtin = []string{"openai", "openai-codex", "anthropic", "google", "ollama", "deepseek", "openrouter", "moonshot", "zai", "minimax"}

// resolved is a row applied to one target: its levels after the reasoning gate and compat
// efforts, and the wire that carries them.
type resolved struct {
	row     *row
	proxied bool // an OpenRouter id routed to a vendor's row
	wire    wire
	levels  []level
}

// defaultAPI is each built-in provider's API when the target names none.
var defaultAPI = map[string]string{
	"openai": "openai-responses", "openai-codex": "openai-responses", "anthropic": "anthropic-messages",
	"google": "google-generative-ai", "ollama": "ollama", "deepseek": "openai-completions",
	"openrouter": "openai-completions", "moonshot": "openai-completions", "zai": "openai-completions",
	"minimax": "anthropic-messages",
}

// canon trims and lowercases the provider id and fills in a built-in provider's default API.
func canon(t Target) Target {
	t.Provider = strings.ToLower(strings.TrimSpace(t.Provider))
	t.API = strings.ToLower(strings.TrimSpace(t.API))
	if t.API == "" {
		t.API = defaultAPI[t.Provider]
	}
	return t
}

// resolve finds t's row and applies it; t must have been through canon.
func resolve(t Target) resolved {
	r, proxied := lookup(t)
	res := resolved{row: r, proxied: proxied, wire: r.wire, levels: r.levels}
	if r.gated && !t.Reasoning {
		res.wire, res.levels = wireNone, spec("off")
	}
	if proxied {
		res.wire = wireOpenRouter
		if !r.wire.effortLike() { // budgets and Gemini enums: OpenRouter takes the effort word
			res.levels = slices.Clone(res.levels)
			for i := range res.levels {
				res.levels[i].value = string(res.levels[i].id)
			}
		}
	}
	if res.wire == wireOpenAI || res.wire == wireOpenRouter {
		res.levels = withEfforts(res.levels, t.Efforts, r.gated && t.Reasoning && r.wire == wireOpenAI)
	}
	return res
}

// withEfforts applies compat.supportedReasoningEfforts: listed xhigh, max and adaptive join the
// menu; and for a custom entry (remap) every level's effort becomes one the entry lists — the
// level itself, else the highest listed below it, else the lowest listed — with off sent as
// "none" only when "none" is listed.
func withEfforts(ls []level, efforts []string, remap bool) []level {
	if len(efforts) == 0 {
		return ls
	}
	var listed []Level
	hasNone := false
	for _, e := range efforts {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "none" {
			hasNone = true
			continue
		}
		if l := Level(e); l.Valid() && l != Off {
			listed = append(listed, l)
		}
	}
	out := slices.Clone(ls)
	for _, extra := range []Level{XHigh, Adaptive, Max} {
		if slices.Contains(listed, extra) && !slices.ContainsFunc(out, func(x level) bool { return x.id == extra }) {
			out = append(out, level{extra, string(extra), string(extra)})
		}
	}
	slices.SortStableFunc(out, func(a, b level) int { return a.id.Rank() - b.id.Rank() })
	if !remap {
		return out
	}
	fixed := slices.DeleteFunc(slices.Clone(listed), func(l Level) bool { return l == Adaptive })
	for i := range out {
		switch l := out[i].id; {
		case l == Off:
			out[i].value = omit
			if hasNone {
				out[i].value = "none"
			}
		case l == Adaptive:
			out[i].value = string(Adaptive)
		case len(fixed) > 0:
			out[i].value = string(nearestIn(fixed, l))
		}
	}
	return out
}

// nearestIn returns l if set has it, else the highest member ranked below l, else the lowest.
func nearestIn(set []Level, l Level) Level {
	if slices.Contains(set, l) {
		return l
	}
	var best, low Level
	for _, s := range set {
		if s.Rank() <= l.Rank() && (best == "" || s.Rank() > best.Rank()) {
			best = s
		}
		if low == "" || s.Rank() < low.Rank() {
			low = s
		}
	}
	if best != "" {
		return best
	}
	return low
}

// ProfileFor returns the thinking profile of t: the levels menus offer and directives accept,
// and the default. It never fails: a target no row knows gets the base levels when the catalog
// says it reasons, else off only.
func ProfileFor(t Target) Profile { return profileOf(resolve(canon(t))) }

func profileOf(res resolved) Profile {
	p := Profile{Family: res.row.name, Binary: res.row.binary}
	if res.proxied {
		p.Family = "openrouter:" + p.Family
	}
	if res.wire == wireNone && len(res.levels) == 1 && res.levels[0].id == Off {
		p.Binary = false
	}
	for _, l := range res.levels {
		p.Levels = append(p.Levels, Option{ID: l.id, Label: l.label})
	}
	switch {
	case res.row.owned && len(p.Levels) > 1:
		p.Default = ""
	case res.row.def != "" && p.has(res.row.def):
		p.Default = res.row.def
	case len(p.Levels) == 1 && p.Levels[0].ID == Off:
		p.Default = Off
	default:
		p.Default = p.Nearest(Medium)
	}
	return p
}
