package thinking

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenCase is one target of the golden payload table, named for the file's headings.
type goldenCase struct {
	note string
	t    Target
}

// goldenTargets is a representative model of every family of every provider, plus the cases
// that change the payload (proxy base URL, explicit service tier, max_tokens, tool choice,
// compat efforts).
var goldenTargets = []goldenCase{
	{"", Target{Provider: "anthropic", Model: "claude-opus-4-7", Direct: true, MaxTokens: 32000}},
	{"proxy base URL", Target{Provider: "anthropic", Model: "claude-opus-4-7", MaxTokens: 32000}},
	{"", Target{Provider: "anthropic", Model: "claude-opus-4-6", Direct: true, MaxTokens: 32000}},
	{"serviceTier param", Target{Provider: "anthropic", Model: "claude-sonnet-4-6", Direct: true, MaxTokens: 32000, Params: map[string]any{"serviceTier": "standard_only"}}},
	{"max_tokens 8192, tool_choice required", Target{Provider: "anthropic", Model: "claude-sonnet-4-5-20250929", Direct: true, MaxTokens: 8192, ToolChoice: "required"}},
	{"max_tokens unknown", Target{Provider: "anthropic", Model: "claude-opus-4-1", Direct: true}},
	{"", Target{Provider: "anthropic", Model: "claude-3-7-sonnet-latest", Direct: true, MaxTokens: 64000}},
	{"", Target{Provider: "anthropic", Model: "claude-3-5-haiku-latest", Direct: true}},
	{"", Target{Provider: "anthropic", Model: "claude-fable-5", Direct: true, MaxTokens: 32000}},
	{"Bedrock-style id on a custom entry", Target{Provider: "bedrock-proxy", API: "anthropic-messages", Model: "us.anthropic.claude-sonnet-4-6-v1:0", MaxTokens: 16000}},

	{"", Target{Provider: "openai", API: "openai-responses", Model: "gpt-5.5"}},
	{"", Target{Provider: "openai", API: "openai-responses", Model: "gpt-5.1"}},
	{"", Target{Provider: "openai", API: "openai-responses", Model: "gpt-5-mini"}},
	{"", Target{Provider: "openai", API: "openai-responses", Model: "gpt-5.6-sol"}},
	{"", Target{Provider: "openai", API: "openai-responses", Model: "gpt-5.2-pro"}},
	{"", Target{Provider: "openai", API: "openai-responses", Model: "gpt-5-pro"}},
	{"", Target{Provider: "openai", API: "openai-responses", Model: "gpt-5.1-codex-max"}},
	{"", Target{Provider: "openai", API: "openai-responses", Model: "gpt-5.1-codex"}},
	{"", Target{Provider: "openai", API: "openai-responses", Model: "o3"}},
	{"", Target{Provider: "openai", API: "openai-responses", Model: "gpt-4.1"}},
	{"", Target{Provider: "openai", API: "openai-responses", Model: "gpt-5-chat-latest"}},
	{"Chat Completions", Target{Provider: "openai", API: "openai-completions", Model: "gpt-5.4-mini"}},
	{"service_tier param", Target{Provider: "openai", API: "openai-responses", Model: "gpt-5.4", Params: map[string]any{"service_tier": "flex"}}},
	{"", Target{Provider: "openai-codex", API: "openai-responses", Model: "gpt-5.3-codex"}},

	{"", Target{Provider: "google", API: "google-generative-ai", Model: "gemini-3-pro-preview"}},
	{"", Target{Provider: "google", API: "google-generative-ai", Model: "gemini-3.1-pro-preview"}},
	{"", Target{Provider: "google", API: "google-generative-ai", Model: "gemini-3-flash-preview"}},
	{"", Target{Provider: "google", API: "google-generative-ai", Model: "gemini-2.5-pro"}},
	{"", Target{Provider: "google", API: "google-generative-ai", Model: "gemini-2.5-flash"}},
	{"", Target{Provider: "google", API: "google-generative-ai", Model: "gemini-2.5-flash-lite"}},
	{"", Target{Provider: "google", API: "google-generative-ai", Model: "gemini-2.0-flash"}},

	{"", Target{Provider: "ollama", API: "ollama", Model: "qwen3:8b"}},
	{"", Target{Provider: "ollama", API: "ollama", Model: "gpt-oss:20b"}},
	{"catalog reasoning: true", Target{Provider: "ollama", API: "ollama", Model: "my-thinker:latest", Reasoning: true}},
	{"", Target{Provider: "ollama", API: "ollama", Model: "llama3.2"}},

	{"", Target{Provider: "deepseek", API: "openai-completions", Model: "deepseek-v4-pro"}},
	{"", Target{Provider: "deepseek", API: "openai-completions", Model: "deepseek-v4-flash"}},
	{"", Target{Provider: "deepseek", API: "openai-completions", Model: "deepseek-chat"}},
	{"", Target{Provider: "deepseek", API: "openai-completions", Model: "deepseek-reasoner"}},

	{"", Target{Provider: "openrouter", API: "openai-completions", Model: "deepseek/deepseek-v4-pro"}},
	{"", Target{Provider: "openrouter", API: "openai-completions", Model: "anthropic/claude-opus-4.7"}},
	{"", Target{Provider: "openrouter", API: "openai-completions", Model: "anthropic/claude-sonnet-4.6"}},
	{"", Target{Provider: "openrouter", API: "openai-completions", Model: "anthropic/claude-sonnet-4.5"}},
	{"", Target{Provider: "openrouter", API: "openai-completions", Model: "openai/gpt-5.2"}},
	{"", Target{Provider: "openrouter", API: "openai-completions", Model: "google/gemini-2.5-flash"}},
	{"", Target{Provider: "openrouter", API: "openai-completions", Model: "openrouter/hunter-alpha"}},
	{"catalog reasoning: true", Target{Provider: "openrouter", API: "openai-completions", Model: "qwen/qwen3-235b-a22b", Reasoning: true}},
	{"", Target{Provider: "openrouter", API: "openai-completions", Model: "meta-llama/llama-4-maverick"}},

	{"tool_choice required", Target{Provider: "moonshot", API: "openai-completions", Model: "kimi-k2.6", ToolChoice: "required"}},
	{"", Target{Provider: "moonshot", API: "openai-completions", Model: "kimi-k3"}},
	{"", Target{Provider: "moonshot", API: "openai-completions", Model: "kimi-k2.7-code"}},

	{"", Target{Provider: "zai", API: "openai-completions", Model: "glm-4.7"}},
	{"", Target{Provider: "zai", API: "openai-completions", Model: "glm-5"}},

	{"", Target{Provider: "minimax", API: "anthropic-messages", Model: "MiniMax-M2.7", Direct: true, MaxTokens: 16000}},
	{"", Target{Provider: "minimax", API: "anthropic-messages", Model: "MiniMax-M3", Direct: true, MaxTokens: 16000}},
	{"OpenAI-compatible path", Target{Provider: "minimax", API: "openai-completions", Model: "MiniMax-M2.7"}},

	{"catalog reasoning: false", Target{Provider: "my-proxy", API: "openai-completions", Model: "llama-70b"}},
	{"catalog reasoning: true", Target{Provider: "my-proxy", API: "openai-completions", Model: "my-reasoner", Reasoning: true}},
	{"compat efforts low|medium|high|xhigh", Target{Provider: "my-proxy", API: "openai-completions", Model: "gpt-5.2", Reasoning: true, Efforts: []string{"low", "medium", "high", "xhigh"}}},
	{"compat efforts none|high|max", Target{Provider: "my-proxy", API: "openai-responses", Model: "big", Reasoning: true, Efforts: []string{"none", "high", "max"}}},
	{"Gemini through a custom entry", Target{Provider: "vertex-proxy", API: "google-generative-ai", Model: "gemini-3-flash"}},
}

// golden renders one target: its profile, then the patch of every canonical level (and "", the
// provider-owned default) with fast off and on.
func golden(c goldenCase) string {
	var b strings.Builder
	t := c.t
	fmt.Fprintf(&b, "## %s %s [%s", t.Provider, t.Model, canon(t).API)
	if t.Direct {
		b.WriteString(", direct")
	}
	if c.note != "" {
		b.WriteString(", " + c.note)
	}
	b.WriteString("]\n")
	p := ProfileFor(t)
	var opts []string
	for _, o := range p.Levels {
		if o.Label != string(o.ID) {
			opts = append(opts, string(o.ID)+"("+o.Label+")")
		} else {
			opts = append(opts, string(o.ID))
		}
	}
	def := string(p.Default)
	if def == "" {
		def = "(provider)"
	}
	fmt.Fprintf(&b, "profile %s: %s; default %s", p.Family, strings.Join(opts, " "), def)
	if p.Binary {
		b.WriteString("; binary")
	}
	b.WriteString("\n")
	for _, l := range append([]Level{""}, All()...) {
		for _, fast := range []bool{false, true} {
			name := string(l)
			if name == "" {
				name = "(none)"
			}
			fmt.Fprintf(&b, "  %-8s fast=%-5v ", name, fast)
			patch, err := Map(t, l, fast)
			switch {
			case errors.Is(err, ErrUnsupported):
				b.WriteString("unsupported\n")
				continue
			case err != nil:
				fmt.Fprintf(&b, "error: %v\n", err)
				continue
			}
			b.WriteString(renderPatch(patch))
			b.WriteString("\n")
		}
	}
	return b.String()
}

func renderPatch(p llm.Patch) string {
	var parts []string
	if len(p.Body) > 0 {
		parts = append(parts, string(p.Body))
	}
	keys := make([]string, 0, len(p.Header))
	for k := range p.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("header %s: %s", k, strings.Join(p.Header[k], ",")))
	}
	if p.Model != "" {
		parts = append(parts, "model "+p.Model)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " | ")
}

func TestGoldenPatches(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Thinking level x fast mode -> request patch, per provider family.\n")
	b.WriteString("# Each line: level, fast, then the body merge patch | headers | model rename ('-' = no change).\n")
	b.WriteString("# Regenerate with: go test ./internal/thinking -run TestGoldenPatches -update\n\n")
	for _, c := range goldenTargets {
		b.WriteString(golden(c))
		b.WriteString("\n")
	}
	path := filepath.Join("testdata", "patches.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if d := cmp.Diff(string(want), b.String()); d != "" {
		t.Errorf("patches differ from %s (-want +got):\n%s", path, d)
	}
}

// TestPatchesAreObjects checks every patch of the golden table is a JSON object that the llm
// package's merge patch accepts, over a body that already has the fields the patch deletes.
func TestPatchesAreObjects(t *testing.T) {
	doc := []byte(`{"model":"m","max_tokens":100,"temperature":0.7,"top_k":5,"messages":[]}`)
	for _, c := range goldenTargets {
		for _, l := range All() {
			for _, fast := range []bool{false, true} {
				p, err := Map(c.t, l, fast)
				if err != nil {
					continue
				}
				if len(p.Body) == 0 {
					continue
				}
				var m map[string]json.RawMessage
				if err := json.Unmarshal(p.Body, &m); err != nil {
					t.Fatalf("%s/%s %s: body %s is not an object: %v", c.t.Provider, c.t.Model, l, p.Body, err)
				}
				if _, err := llm.MergePatch(doc, p.Body); err != nil {
					t.Errorf("%s/%s %s: merge: %v", c.t.Provider, c.t.Model, l, err)
				}
			}
		}
	}
}

// TestEffortsAreWireValues checks that every effort a patch of the golden table sends is one the
// APIs define (OpenAI's reasoning effort, which OpenAI-compatible servers and OpenRouter copy,
// and Anthropic's output_config.effort): "off" is nodmix's level, not a value any of them takes.
func TestEffortsAreWireValues(t *testing.T) {
	wire := []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}
	for _, c := range goldenTargets {
		for _, l := range All() {
			p, err := Map(c.t, l, false)
			if err != nil || len(p.Body) == 0 {
				continue
			}
			var body struct {
				Effort    *string `json:"reasoning_effort"`
				Reasoning struct {
					Effort *string `json:"effort"`
				} `json:"reasoning"`
				OutputConfig struct {
					Effort *string `json:"effort"`
				} `json:"output_config"`
			}
			if err := json.Unmarshal(p.Body, &body); err != nil {
				continue // a reasoning member that is not an object is not an effort
			}
			for _, e := range []*string{body.Effort, body.Reasoning.Effort, body.OutputConfig.Effort} {
				if e != nil && !slices.Contains(wire, *e) {
					t.Errorf("%s/%s (%s) level %s: effort %q in %s", c.t.Provider, c.t.Model, c.note, l, *e, p.Body)
				}
			}
		}
	}
}
