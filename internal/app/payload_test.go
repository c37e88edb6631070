package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/llm"
)

var update = flag.Bool("update", false, "rewrite golden files")

// payloadModels are a representative model of each family of every provider path, with the
// settings that change payloads (a proxy base URL, a custom entry's efforts).
var payloadModels = []string{
	"openai/gpt-5.2", "openai/gpt-5.1", "openai/o3", "openai/gpt-4.1",
	"anthropic/claude-opus-4-7", "anthropic/claude-sonnet-4-6", "anthropic/claude-sonnet-4-5", "claude-proxy/claude-opus-4-7",
	"google/gemini-3-pro-preview", "google/gemini-2.5-flash", "google/gemini-2.5-pro",
	"ollama/qwen3:8b", "ollama/llama3.2",
	"deepseek/deepseek-v4-pro", "deepseek/deepseek-chat",
	"openrouter/deepseek/deepseek-v4-pro", "openrouter/anthropic/claude-sonnet-4.6", "openrouter/openai/gpt-5.2", "openrouter/openrouter/hunter-alpha",
	"moonshot/kimi-k2.6", "zai/glm-4.7", "minimax/MiniMax-M2.7", "minimax/MiniMax-M3",
	"vllm/qwen3-32b",
}

var payloadLevels = []string{"", "off", "minimal", "low", "medium", "high", "xhigh", "adaptive", "max"}

const payloadConfig = `{
  models: {providers: {
    "claude-proxy": {baseUrl: "https://llm-proxy.example/anthropic/v1", api: "anthropic-messages", apiKey: {"$env": "PROXY_KEY"}},
    vllm: {baseUrl: "http://127.0.0.1:8000/v1", models: [{id: "qwen3-32b", reasoning: true, compat: {supportedReasoningEfforts: ["low", "medium", "high", "xhigh"]}}]},
  }},
  tools: {deny: ["*"]},
}`

// fakeKeys are the keys of every provider; none may appear in a dry run.
var fakeKeys = map[string]string{
	"OPENAI_API_KEY": "sk-openai-FAKE-0001", "ANTHROPIC_API_KEY": "sk-ant-FAKE-0002", "GEMINI_API_KEY": "AIza-FAKE-0003",
	"DEEPSEEK_API_KEY": "sk-ds-FAKE-0004", "OPENROUTER_API_KEY": "sk-or-FAKE-0005", "MOONSHOT_API_KEY": "sk-ms-FAKE-0006",
	"ZAI_API_KEY": "zai-FAKE-0007", "MINIMAX_API_KEY": "mm-FAKE-0008", "PROXY_KEY": "proxy-FAKE-0009",
}

// TestGoldenPayloads: for every provider path × a model of each family × every canonical level ×
// fast off/on, the exact request a turn sends (what `nodmix agent --dry-run` prints), or the
// rejection a typed level the model lacks gets. Directives are inline, as a user types them.
func TestGoldenPayloads(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(payloadConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"NODMIX_HOME": home, "HOME": home}
	for k, v := range fakeKeys {
		env[k] = v
	}
	ctx := context.Background()
	a, err := New(ctx, Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var out strings.Builder
	for _, ref := range payloadModels {
		fmt.Fprintf(&out, "## %s\n", ref)
		for _, level := range payloadLevels {
			for _, fast := range []string{"off", "on"} {
				text := "/fast " + fast + " hello"
				if level != "" {
					text = "/think:" + level + " " + text
				}
				dr, reply, err := a.Prepare(ctx, TurnRequest{Session: "golden", Ephemeral: true, Model: ref, MaxTokens: 4096,
					Input: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: text}}}}})
				label := fmt.Sprintf("%-8s fast=%-3s ", orDash(level), fast)
				switch {
				case err != nil:
					fmt.Fprintf(&out, "%serror: %v\n", label, err)
				case reply != "":
					fmt.Fprintf(&out, "%srejected: %s\n", label, strings.ReplaceAll(reply, "\n", " / "))
				default:
					hdr := ""
					for _, k := range []string{"Anthropic-Beta"} {
						if v := dr.Headers[k]; v != "" {
							hdr = " " + k + ": " + v
						}
					}
					fmt.Fprintf(&out, "%s%s %s%s\n", label, dr.URL, dr.Body, hdr)
					var v any
					if json.Unmarshal(dr.Body, &v) != nil {
						t.Errorf("%s %s: body is not JSON", ref, level)
					}
				}
			}
		}
		out.WriteString("\n")
	}
	got := out.String()
	for name, k := range fakeKeys {
		if strings.Contains(got, k) {
			t.Errorf("the %s value appears in a dry run", name)
		}
	}
	path := filepath.Join("testdata", "payloads.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("payloads differ from %s at line %d:\n got %s\nwant %s\n(run with -update after review)", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("payloads differ from %s in length (%d vs %d lines)", path, len(gl), len(wl))
	}
}

func orDash(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
