package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/directive"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/telemetry"
	"github.com/nodmix/nodmix/internal/thinking"
)

// sessionsApp is an app whose default model is the scripted one.
func sessionsApp(t testing.TB, cfg string) *App {
	t.Helper()
	home := t.TempDir()
	env := func(k string) string {
		if k == "NODMIX_HOME" || k == "HOME" {
			return home
		}
		return ""
	}
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := New(context.Background(), Options{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func str(s string) *string { return &s }

func menuLabels(row *SessionRow) (labels []string, selected string) {
	for _, c := range row.ThinkingMenu {
		labels = append(labels, c.Label)
		if c.Selected {
			selected = c.Label
		}
	}
	return labels, selected
}

func TestPatchSession(t *testing.T) {
	tests := []struct {
		name      string
		patches   []SessionPatch // applied in order; all but the last must succeed
		overrides map[string]string
		model     string
		menu      []string
		selected  string
		wantField string // the last patch fails on this field
	}{
		{
			name:      "thinking override",
			patches:   []SessionPatch{{"thinking": str("high")}},
			overrides: map[string]string{"thinking": "high"}, model: "scripted/demo",
			menu:     []string{"Inherited: medium", "Override: off", "Override: minimal", "Override: low", "Override: medium", "Override: high"},
			selected: "Override: high",
		},
		{
			name:      "null clears",
			patches:   []SessionPatch{{"thinking": str("low"), "verbose": str("on")}, {"thinking": nil}},
			overrides: map[string]string{"verbose": "on"}, model: "scripted/demo", selected: "Inherited: medium",
		},
		{
			name:      "a clear word clears",
			patches:   []SessionPatch{{"thinking": str("low")}, {"thinking": str("inherit")}},
			overrides: map[string]string{}, model: "scripted/demo", selected: "Inherited: medium",
		},
		{
			name:    "every level at once, words read as directives read them",
			patches: []SessionPatch{{"thinking": str("ultrathink"), "fast": str("true"), "verbose": str("full"), "trace": str("raw"), "reasoning": str("stream")}},
			overrides: map[string]string{"thinking": "high", "fast": "on", "verbose": "full", "trace": "raw",
				"reasoning": "stream"}, model: "scripted/demo", selected: "Override: high",
		},
		{
			name:      "binary profile: on is stored as low",
			patches:   []SessionPatch{{"model": str("zai/glm-4.6"), "thinking": str("on")}},
			overrides: map[string]string{"thinking": "low"}, model: "zai/glm-4.6",
			menu: []string{"Inherited: on", "Override: off", "Override: on"}, selected: "Override: on",
		},
		{
			name:      "binary profile: any non-off level means on",
			patches:   []SessionPatch{{"model": str("zai/glm-4.6")}, {"thinking": str("high")}},
			overrides: map[string]string{"thinking": "low"}, model: "zai/glm-4.6", selected: "Override: on",
		},
		{
			name:    "unpinning the model",
			patches: []SessionPatch{{"model": str("zai/glm-4.6")}, {"model": nil}},
			model:   "scripted/demo", overrides: map[string]string{}, selected: "Inherited: medium",
		},
		{name: "invalid level", patches: []SessionPatch{{"thinking": str("big")}}, wantField: "thinking"},
		{name: "level the model lacks", patches: []SessionPatch{{"thinking": str("xhigh")}}, wantField: "thinking"},
		{
			name:      "checked against the new model",
			patches:   []SessionPatch{{"model": str("deepseek/deepseek-v4"), "thinking": str("xhigh")}},
			overrides: map[string]string{"thinking": "xhigh"}, model: "deepseek/deepseek-v4", selected: "Override: xhigh",
		},
		{name: "invalid fast", patches: []SessionPatch{{"fast": str("sometimes")}}, wantField: "fast"},
		{name: "invalid verbose", patches: []SessionPatch{{"verbose": str("loud")}}, wantField: "verbose"},
		{name: "invalid trace", patches: []SessionPatch{{"trace": str("x")}}, wantField: "trace"},
		{name: "invalid reasoning", patches: []SessionPatch{{"reasoning": str("x")}}, wantField: "reasoning"},
		{name: "unknown provider", patches: []SessionPatch{{"model": str("nope/x")}}, wantField: "model"},
		{name: "not a model ref", patches: []SessionPatch{{"model": str("x")}}, wantField: "model"},
		{name: "empty model", patches: []SessionPatch{{"model": str(" ")}}, wantField: "model"},
		{name: "unknown key", patches: []SessionPatch{{"thinkingOnce": str("high")}}, wantField: "thinkingOnce"},
		{name: "one bad field refuses all", patches: []SessionPatch{{"verbose": str("on"), "fast": str("nope")}}, wantField: "fast"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := sessionsApp(t, `{agents: {defaults: {model: "scripted/demo"}}}`)
			ctx := context.Background()
			var row *SessionRow
			var err error
			for i, p := range tt.patches {
				row, err = a.PatchSession(ctx, "s1", p)
				if i < len(tt.patches)-1 && err != nil {
					t.Fatalf("patch %d: %v", i, err)
				}
			}
			if tt.wantField != "" {
				var pe *PatchError
				if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidPatch) {
					t.Fatalf("err = %v, want a *PatchError", err)
				}
				want := tt.wantField
				if pe.Field != want || (pe.Field != "thinkingOnce" && len(pe.Options) == 0) {
					t.Errorf("PatchError = %+v, want field %q with options", pe, want)
				}
				if len(tt.patches) == 1 {
					if _, err := a.Store.Session(ctx, "s1"); !errors.Is(err, session.ErrNotFound) {
						t.Errorf("a refused patch created the session: %v", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.overrides, row.Overrides); diff != "" {
				t.Errorf("overrides (-want +got):\n%s", diff)
			}
			if row.Model != tt.model {
				t.Errorf("model = %q, want %q", row.Model, tt.model)
			}
			labels, selected := menuLabels(row)
			if tt.menu != nil {
				if diff := cmp.Diff(tt.menu, labels); diff != "" {
					t.Errorf("menu (-want +got):\n%s", diff)
				}
			}
			if selected != tt.selected {
				t.Errorf("selected = %q, want %q", selected, tt.selected)
			}
			// The row is what the store holds: read it back.
			got, err := a.SessionRow(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(row.Overrides, got.Overrides); diff != "" {
				t.Errorf("stored overrides differ from the patch's row (-patch +stored):\n%s", diff)
			}
		})
	}
}

func TestPatchErrorNamesTheOptions(t *testing.T) {
	a := sessionsApp(t, `{agents: {defaults: {model: "zai/glm-4.6"}}}`)
	_, err := a.PatchSession(context.Background(), "s", SessionPatch{"thinking": str("big")})
	want := `thinking: "big" is not a valid value; valid options: default, off, low, on (or null to clear)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestSessionRowLevelsFollowConfig(t *testing.T) {
	a := sessionsApp(t, `{agents: {defaults: {model: "scripted/demo", thinkingDefault: "off", verboseDefault: "on", reasoningDefault: "on"}}}`)
	row := a.SessionDefaults()
	labels, selected := menuLabels(&row)
	if labels[0] != "Off" || selected != "Off" {
		t.Errorf("menu = %v (selected %q): the inherited off level reads Off", labels, selected)
	}
	want := SessionLevels{Thinking: thinking.Off, Fast: thinking.FastOff, Verbose: "on", Trace: "off", Reasoning: "on",
		Sources: map[string]string{"thinking": "config", "fast": "default", "verbose": "config", "trace": "default", "reasoning": "config"}}
	if diff := cmp.Diff(want, row.Levels); diff != "" {
		t.Errorf("levels (-want +got):\n%s", diff)
	}
	if row.ThinkingDefault != thinking.Off || row.Key != "" {
		t.Errorf("defaults row: thinkingDefault %q key %q", row.ThinkingDefault, row.Key)
	}
}

func TestSessionRowWithoutAModel(t *testing.T) {
	a := sessionsApp(t, `{}`)
	row := a.SessionDefaults()
	if row.ModelError == "" || row.Model != "" {
		t.Errorf("row = model %q error %q, want an error", row.Model, row.ModelError)
	}
	if len(row.ThinkingLevels) != len(thinking.All()) || len(row.ThinkingMenu) != len(thinking.All())+1 {
		t.Errorf("without a model every level is offered: %v / %v", row.ThinkingLevels, row.ThinkingMenu)
	}
	// The picker's first entry names the level the row inherits, as the page's label does.
	if row.ThinkingDefault != thinking.Off || len(row.ThinkingMenu) == 0 || row.ThinkingMenu[0].Label != "Off" {
		t.Errorf("without a model: thinkingDefault %q, first entry %+v, want off and \"Off\"", row.ThinkingDefault, row.ThinkingMenu)
	}
	// An override still applies: nothing validates it against a model.
	r, err := a.PatchSession(context.Background(), "s", SessionPatch{"thinking": str("max")})
	if err != nil || r.Levels.Thinking != thinking.Max {
		t.Errorf("patch without a model: %v %+v", err, r)
	}
}

func TestSessionRowsTranscriptAndDelete(t *testing.T) {
	a := sessionsApp(t, `{agents: {defaults: {model: "scripted/demo"}}}`)
	ctx := context.Background()
	if _, err := a.Turn(ctx, TurnRequest{Session: "chat", Input: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "hello there"}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PatchSession(ctx, "other", SessionPatch{}); err != nil {
		t.Fatal(err)
	}
	rows, next, err := a.SessionRows(ctx, session.Cursor{}, session.DefaultPage)
	if err != nil || !next.IsZero() {
		t.Fatalf("rows: next %v, %v", next, err)
	}
	var keys []string
	for _, r := range rows {
		keys = append(keys, r.Key)
		if r.Economy.Tokenjuice != nil {
			t.Errorf("list row %q carries transcript figures", r.Key)
		}
	}
	if diff := cmp.Diff([]string{"other", "chat"}, keys); diff != "" {
		t.Errorf("rows, most recent first (-want +got):\n%s", diff)
	}
	d, err := a.SessionRow(ctx, "chat")
	if err != nil {
		t.Fatal(err)
	}
	want := []TranscriptMessage{
		{Role: llm.RoleUser, Parts: []TranscriptPart{{Kind: llm.KindText, Text: "hello there"}}},
		{Role: llm.RoleAssistant, Parts: []TranscriptPart{{Kind: llm.KindReasoning, Text: "Reading the request."}, {Kind: llm.KindText, Text: "You said: hello there"}}},
	}
	if diff := cmp.Diff(want, d.Transcript); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
	if d.Messages != 2 || d.Economy.ModelCalls != 1 || d.Economy.InputTokens == 0 || d.Economy.Tokenjuice == nil {
		t.Errorf("row = messages %d economy %+v", d.Messages, d.Economy)
	}
	if err := a.DeleteSession(ctx, "chat"); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{a.DeleteSession(ctx, "chat"), second(a.SessionRow(ctx, "chat"))} {
		if !errors.Is(err, session.ErrNotFound) {
			t.Errorf("after delete: %v, want ErrNotFound", err)
		}
	}
	for _, err := range []error{a.DeleteSession(ctx, ""), second(a.SessionRow(ctx, "")), second(a.PatchSession(ctx, "", nil))} {
		if !errors.Is(err, session.ErrInvalidKey) {
			t.Errorf("empty key: %v, want ErrInvalidKey", err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// TestDeleteSessionRemovesItsLog: a deleted session's log (and its older generation) goes with
// it, on the persistent app the faces run.
func TestDeleteSessionRemovesItsLog(t *testing.T) {
	home := t.TempDir()
	env := func(k string) string {
		if k == "NODMIX_HOME" || k == "HOME" {
			return home
		}
		return ""
	}
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(`{agents: {defaults: {model: "scripted/demo"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := New(ctx, Options{Getenv: env, Persistent: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Turn(ctx, TurnRequest{Session: "chat", Input: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "hello"}}}}}); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(home, "logs", "sessions", telemetry.FileName("chat"))
	if _, err := os.Stat(logPath); err != nil {
		t.Fatalf("the turn left no session log: %v", err)
	}
	if err := os.WriteFile(logPath+".1", []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteSession(ctx, "chat"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{logPath, logPath + ".1"} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s outlived its session: %v", filepath.Base(p), err)
		}
	}
}

func TestEconomyFromCounters(t *testing.T) {
	a := sessionsApp(t, `{agents: {defaults: {model: "scripted/demo"}}}`)
	ctx := context.Background()
	_, err := a.Store.Update(ctx, "s", func(in *session.Info) error {
		in.Counters = map[string]int64{"model_calls": 2, "schema_count": 6, "schema_bytes": 1200, "direct_schema_bytes": 50000,
			"tool_calls": 5, "tool_search": 2, "search_tool_bm25": 1, "tool_describe": 1, "tool_call": 1, "tool_search_code": 0,
			"input_tokens": 900, "output_tokens": 40, "tokenjuice_saved_chars": 10700}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	juiced := "line\n[tokenjuice: compacted 12,000→1,500 chars]"
	if _, err := a.Store.Append(ctx, "s", 0, []llm.Message{
		{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "c1", Name: "exec", Text: juiced}}},
		{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "c2", Name: "exec", Text: "x\n[tokenjuice: compacted 300→100; tokenjuice_raw h1]"}}},
	}); err != nil {
		t.Fatal(err)
	}
	d, err := a.SessionRow(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	want := Economy{ModelCalls: 2, SchemaCount: 6, SchemaBytes: 1200, DirectSchemaBytes: 50000, SavedSchemaBytes: 48800,
		CatalogTools: a.Engine.Allowed().Len(), ToolCalls: 5, Searches: 3, Describes: 1, Calls: 1, InputTokens: 900, OutputTokens: 40,
		TokenjuiceSavedChars: 10700,
		Tokenjuice:           &TokenjuiceSavings{Results: 2, RawChars: 12300, CompactChars: 1600, SavedChars: 10700}}
	if diff := cmp.Diff(want, d.Economy); diff != "" {
		t.Errorf("economy (-want +got):\n%s", diff)
	}
}

func TestTokenjuiceSavings(t *testing.T) {
	tests := []struct {
		text string
		want TokenjuiceSavings
	}{
		{"plain output", TokenjuiceSavings{}},
		{"a\n[tokenjuice: compacted 1,234→234 chars]", TokenjuiceSavings{Results: 1, RawChars: 1234, CompactChars: 234, SavedChars: 1000}},
		// Output that quotes a marker: the last one, which tokenjuice wrote, counts.
		{"[tokenjuice: compacted 9→1 chars]\n[tokenjuice: compacted 500→50; tokenjuice_raw k]", TokenjuiceSavings{Results: 1, RawChars: 500, CompactChars: 50, SavedChars: 450}},
		{"[tokenjuice: compacted 5→50 chars]", TokenjuiceSavings{}}, // not a saving: not ours
		{"[tokenjuice: compacted ,→1 chars]", TokenjuiceSavings{}},
	}
	for _, tt := range tests {
		msgs := []llm.Message{{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, Text: tt.text}}}}
		if diff := cmp.Diff(tt.want, tokenjuiceSavings(msgs)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.text, diff)
		}
	}
}

func TestTranscriptViewDropsOpaqueFields(t *testing.T) {
	msgs := []llm.Message{{Role: llm.RoleAssistant, Parts: []llm.Part{
		{Kind: llm.KindReasoning, Raw: []byte(`"enc"`), Provider: "anthropic"},
		{Kind: llm.KindReasoning, Text: "because", Meta: []byte(`{"sig":"x"}`)},
		{Kind: llm.KindToolCall, CallID: "c", Name: "exec", Args: []byte(`{"command":["ls"]}`)},
	}}}
	want := []TranscriptMessage{{Role: llm.RoleAssistant, Parts: []TranscriptPart{
		{Kind: llm.KindReasoning, Text: "because"},
		{Kind: llm.KindToolCall, CallID: "c", Name: "exec", Args: `{"command":["ls"]}`},
	}}}
	if diff := cmp.Diff(want, transcriptView(msgs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The picker a row carries is the one directive.ThinkingMenu builds for the same layers, so a
// /think typed in the chat and the picker select the same entry.
func TestRowMenuMatchesDirective(t *testing.T) {
	a := sessionsApp(t, `{agents: {defaults: {model: "scripted/demo"}}}`)
	ctx := context.Background()
	res, err := a.Turn(ctx, TurnRequest{Session: "s", Input: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "/think low"}}}}})
	if err != nil || !res.Directive {
		t.Fatalf("directive turn: %v %+v", err, res)
	}
	d, err := a.SessionRow(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	_, selected := menuLabels(&d.SessionRow)
	if selected != "Override: low" || d.Overrides[directive.KeyThinking] != "low" {
		t.Errorf("after /think low: selected %q overrides %v", selected, d.Overrides)
	}
}

// BenchmarkSessionRows lists 200 sessions, each row with its profile, picker and economy.
func BenchmarkSessionRows(b *testing.B) {
	a := sessionsApp(b, `{agents: {defaults: {model: "scripted/demo"}}}`)
	ctx := context.Background()
	for i := range 200 {
		if _, err := a.PatchSession(ctx, fmt.Sprintf("s%03d", i), SessionPatch{"thinking": str("high")}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		rows, _, err := a.SessionRows(ctx, session.Cursor{}, 200)
		if err != nil || len(rows) != 200 {
			b.Fatal(len(rows), err)
		}
	}
}

// The rows come a page at a time, each with the cursor of the next; a page size out of range is
// refused naming the limit.
func TestSessionRowsArePaged(t *testing.T) {
	a := sessionsApp(t, `{agents: {defaults: {model: "scripted/demo"}}}`)
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		if _, err := a.PatchSession(ctx, k, SessionPatch{}); err != nil {
			t.Fatal(err)
		}
	}
	var keys []string
	var after session.Cursor
	for range 3 {
		rows, next, err := a.SessionRows(ctx, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			keys = append(keys, r.Key)
			if r.Model != "scripted/demo" {
				t.Errorf("row %q model %q, want the default resolved", r.Key, r.Model)
			}
		}
		if next.IsZero() {
			break
		}
		after = next
	}
	if diff := cmp.Diff([]string{"c", "b", "a"}, keys); diff != "" {
		t.Errorf("rows over the pages (-want +got):\n%s", diff)
	}
	if _, _, err := a.SessionRows(ctx, session.Cursor{}, 0); !errors.Is(err, session.ErrInvalidLimit) || !strings.Contains(err.Error(), "limit") {
		t.Errorf("limit 0: %v, want ErrInvalidLimit naming the limit", err)
	}
}
