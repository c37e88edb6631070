package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/config/json5"
	"github.com/nodmix/nodmix/internal/thinking"
)

// Models is the models section: providers beyond (or overriding) the built-in ones.
type Models struct {
	Providers map[string]Provider
}

// Provider is models.providers.<id>. Empty fields keep the built-in provider's values when the
// id is a built-in one.
type Provider struct {
	BaseURL string
	API     string // one of APIs, or "" (the built-in's, else openai-completions)
	APIKey  Secret
	Headers map[string]Secret
	Models  []Model
}

// Model is one models.providers.<id>.models[] entry.
type Model struct {
	ID            string
	Name          string
	Reasoning     *bool
	ContextWindow int
	MaxTokens     int
	// SupportedReasoningEfforts is compat.supportedReasoningEfforts: thinking levels a custom
	// OpenAI-compatible model accepts beyond its profile's.
	SupportedReasoningEfforts []string
}

// APIs are the wire dialects a provider may speak (`api`).
var APIs = []string{"openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai", "ollama"}

// ThinkingLevels are the canonical thinking levels a config value may name.
var ThinkingLevels = []string{"off", "minimal", "low", "medium", "high", "xhigh", "adaptive", "max"}

// Agents is the agents section: defaults for every agent and the per-agent list. Defaults and
// List keep the section as written (for masked printing); Default and Each are decoded.
type Agents struct {
	Defaults json.RawMessage   // an object, or nil
	List     []json.RawMessage // each element as written

	Default AgentSettings
	Each    []AgentSettings // agents.list[], in order; ID is set
}

// AgentSettings are the keys agents.defaults and agents.list[] share. Empty strings and nil
// pointers mean not set: the next layer of resolution applies.
type AgentSettings struct {
	ID                 string // list entries only
	Model              string // "provider/model"
	MaxSteps           int    // 0: not set (the runtime's default is DefaultMaxSteps)
	ThinkingDefault    string
	FastModeDefault    *bool
	VerboseDefault     string
	TraceDefault       string
	ReasoningDefault   string
	ToolProgressDetail string // explain | raw
	HeartbeatReasoning *bool  // heartbeat.includeReasoning
	HeartbeatPrompt    string // heartbeat.prompt
	// Allow and Deny are agents.list[].tools.allow / deny: glob patterns that narrow, for this
	// agent's runs, what tools.allow / tools.deny permit.
	Allow, Deny []string
	// ModelParams is agents.defaults.models["<provider>/<model>"].params, decoded as JSON values.
	ModelParams map[string]map[string]any
}

// DefaultMaxSteps bounds a turn's model calls when agents.defaults.maxSteps is not set.
const DefaultMaxSteps = 32

// MaxSteps is the resolved step limit for an agent (by id; "" for the defaults), and the
// setting that gives it, for a message at the limit to name ("agents.list[1].maxSteps", else
// "agents.defaults.maxSteps", also when that is not set and the default applies).
func (a Agents) MaxSteps(agent string) (steps int, key string) {
	for i, s := range a.Each {
		if s.ID == agent && agent != "" && s.MaxSteps > 0 {
			return s.MaxSteps, fmt.Sprintf("agents.list[%d].maxSteps", i)
		}
	}
	if a.Default.MaxSteps > 0 {
		return a.Default.MaxSteps, "agents.defaults.maxSteps"
	}
	return DefaultMaxSteps, "agents.defaults.maxSteps"
}

// Agent returns agents.list[] entry id.
func (a Agents) Agent(id string) (AgentSettings, bool) {
	for _, s := range a.Each {
		if s.ID == id && id != "" {
			return s, true
		}
	}
	return AgentSettings{}, false
}

// modelRefRule is the rule of a "provider/model" reference.
const modelRefRule = `must be "<provider>/<model>" (for example openai/gpt-5.2)`

// ValidModelRef reports whether s is provider/model with a non-empty provider id that matches
// the name rule and a non-empty model (which may itself contain '/').
func ValidModelRef(s string) bool {
	p, m, ok := strings.Cut(s, "/")
	return ok && catalog.ValidName(p) && strings.TrimSpace(m) != "" && m == strings.TrimSpace(m)
}

func (d *decoder) modelRef(p string, v *json5.Node, dst *string) {
	var s string
	if !d.str(p, v, &s) {
		return
	}
	if !ValidModelRef(s) {
		d.fail(p, modelRefRule)
		return
	}
	*dst = s
}

func (d *decoder) models(p string, n *json5.Node, m *Models) {
	d.object(p, n, field{"providers", func(p string, v *json5.Node) {
		m.Providers = map[string]Provider{}
		d.each(p, v, func(p, id string, v *json5.Node) {
			if !catalog.ValidName(id) {
				d.fail(p, providerIDRule)
				return
			}
			m.Providers[id] = d.provider(p, v)
		})
	}})
}

func (d *decoder) provider(p string, n *json5.Node) Provider {
	var pr Provider
	d.object(p, n,
		field{"baseUrl", func(p string, v *json5.Node) {
			if d.nonEmpty(p, v, &pr.BaseURL) {
				if u, err := url.Parse(pr.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					d.fail(p, "must be an http or https URL")
				}
			}
		}},
		field{"api", func(p string, v *json5.Node) { d.enum(p, v, &pr.API, APIs...) }},
		field{"apiKey", func(p string, v *json5.Node) { d.secret(p, v, &pr.APIKey) }},
		field{"headers", func(p string, v *json5.Node) {
			pr.Headers = d.headerMap(p, v)
		}},
		field{"models", func(p string, v *json5.Node) {
			if v.Kind != json5.Array {
				d.fail(p, "must be an array")
				return
			}
			seen := map[string]bool{}
			for i, e := range v.Elems {
				m, ok := d.model(index(p, i), e)
				if !ok {
					continue
				}
				if seen[m.ID] {
					d.fail(index(p, i)+".id", "duplicate model id "+m.ID)
					continue
				}
				seen[m.ID] = true
				pr.Models = append(pr.Models, m)
			}
		}},
	)
	return pr
}

func (d *decoder) model(p string, n *json5.Node) (Model, bool) {
	var m Model
	before := len(d.errs)
	hasID := false
	ok := d.object(p, n,
		field{"id", func(p string, v *json5.Node) { hasID = d.nonEmpty(p, v, &m.ID) || true }},
		field{"name", func(p string, v *json5.Node) { d.str(p, v, &m.Name) }},
		field{"reasoning", func(p string, v *json5.Node) {
			var b bool
			if d.boolean(p, v, &b) {
				m.Reasoning = &b
			}
		}},
		field{"contextWindow", func(p string, v *json5.Node) { d.integer(p, v, 1, noMax, &m.ContextWindow) }},
		field{"maxTokens", func(p string, v *json5.Node) { d.integer(p, v, 1, noMax, &m.MaxTokens) }},
		field{"compat", func(p string, v *json5.Node) {
			d.object(p, v, field{"supportedReasoningEfforts", func(p string, v *json5.Node) {
				var levels []string
				if !d.strings(p, v, &levels) {
					return
				}
				for i, l := range levels {
					if !contains(ThinkingLevels, l) {
						d.fail(index(p, i), "must be one of "+strings.Join(ThinkingLevels, ", "))
						return
					}
				}
				m.SupportedReasoningEfforts = levels
			}})
		}},
	)
	if ok && !hasID {
		d.fail(p+".id", "is required")
	}
	return m, ok && len(d.errs) == before
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *decoder) agents(p string, n *json5.Node, a *Agents) {
	d.object(p, n,
		field{"defaults", func(p string, v *json5.Node) {
			if v.Kind != json5.Object {
				d.fail(p, "must be an object")
				return
			}
			a.Defaults, _ = d.raw(p, v)
			a.Default = d.agentSettings(p, v, true)
		}},
		field{"list", func(p string, v *json5.Node) {
			if v.Kind != json5.Array {
				d.fail(p, "must be an array")
				return
			}
			ids := map[string]bool{}
			for i, e := range v.Elems {
				ip := index(p, i)
				if raw, ok := d.raw(ip, e); ok {
					a.List = append(a.List, raw)
				}
				if e.Kind != json5.Object {
					d.fail(ip, "must be an object")
					continue
				}
				s := d.agentSettings(ip, e, false)
				switch {
				case s.ID == "":
					d.fail(ip+".id", "is required")
				case ids[s.ID]:
					d.fail(ip+".id", "duplicate agent id "+s.ID)
				default:
					ids[s.ID] = true
					a.Each = append(a.Each, s)
				}
			}
		}},
	)
}

// agentSettings decodes the keys agents.defaults and agents.list[] entries share; defaults has
// `models`, list entries have `id`.
func (d *decoder) agentSettings(p string, n *json5.Node, defaults bool) AgentSettings {
	var s AgentSettings
	fields := []field{
		{"model", func(p string, v *json5.Node) { d.modelRef(p, v, &s.Model) }},
		{"maxSteps", func(p string, v *json5.Node) { d.integer(p, v, 1, 1000, &s.MaxSteps) }},
		{"thinkingDefault", func(p string, v *json5.Node) { d.enum(p, v, &s.ThinkingDefault, ThinkingLevels...) }},
		{"fastModeDefault", func(p string, v *json5.Node) {
			var b bool
			if d.boolean(p, v, &b) {
				s.FastModeDefault = &b
			}
		}},
		{"verboseDefault", func(p string, v *json5.Node) { d.enum(p, v, &s.VerboseDefault, "off", "on", "full") }},
		{"traceDefault", func(p string, v *json5.Node) { d.enum(p, v, &s.TraceDefault, "off", "on") }},
		{"reasoningDefault", func(p string, v *json5.Node) { d.enum(p, v, &s.ReasoningDefault, "off", "on", "stream") }},
		{"toolProgressDetail", func(p string, v *json5.Node) { d.enum(p, v, &s.ToolProgressDetail, "explain", "raw") }},
		{"heartbeat", func(p string, v *json5.Node) {
			d.object(p, v,
				field{"includeReasoning", func(p string, v *json5.Node) {
					var b bool
					if d.boolean(p, v, &b) {
						s.HeartbeatReasoning = &b
					}
				}},
				field{"prompt", func(p string, v *json5.Node) { d.nonEmpty(p, v, &s.HeartbeatPrompt) }},
			)
		}},
	}
	if defaults {
		fields = append(fields, field{"models", func(p string, v *json5.Node) { s.ModelParams = d.modelParams(p, v) }})
	} else {
		fields = append(fields, field{"tools", func(p string, v *json5.Node) {
			d.object(p, v,
				field{"allow", func(p string, v *json5.Node) { d.globs(p, v, &s.Allow) }},
				field{"deny", func(p string, v *json5.Node) { d.globs(p, v, &s.Deny) }},
			)
		}})
		fields = append(fields, field{"id", func(p string, v *json5.Node) {
			if d.nonEmpty(p, v, &s.ID) && !catalog.ValidName(s.ID) {
				d.fail(p, nameRule)
				s.ID = ""
			}
		}})
	}
	d.object(p, n, fields...)
	return s
}

// modelParams decodes agents.defaults.models: "<provider>/<model>" → {params: {…}}.
func (d *decoder) modelParams(p string, n *json5.Node) map[string]map[string]any {
	out := map[string]map[string]any{}
	d.each(p, n, func(p, ref string, v *json5.Node) {
		if !ValidModelRef(ref) {
			d.fail(p, "key "+modelRefRule)
			return
		}
		d.object(p, v, field{"params", func(p string, v *json5.Node) {
			if v.Kind != json5.Object {
				d.fail(p, "must be an object")
				return
			}
			raw, ok := d.raw(p, v)
			if !ok {
				return
			}
			var params map[string]any
			if err := json.Unmarshal(raw, &params); err != nil {
				d.fail(p, "must be an object")
				return
			}
			if fm, ok := params["fastMode"]; ok {
				if _, isBool := fm.(bool); !isBool {
					d.fail(join(p, "fastMode"), "must be a boolean")
					return
				}
			}
			for _, k := range thinking.FastAutoKeys() { // the params that set /fast auto's window
				if v, ok := params[k]; ok {
					if f, isNum := v.(float64); !isNum || f < 0 {
						d.fail(join(p, k), "must be a number of seconds, 0 or more")
						return
					}
				}
			}
			out[ref] = params
		}})
	})
	return out
}
