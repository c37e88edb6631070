package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/e2etest"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
	"github.com/nodmix/nodmix/internal/session/sqlite"
)

// The web chat page in real headless Chromium (Debian's package, which `make test` installs),
// driven by playwright-core from testdata/e2e/webchat.mjs, against the built gateway with the
// scripted model. NODMIX_WEBCHAT_SHOTS=DIR keeps the screenshots there (docs/ holds the
// committed ones).

const chromiumPath = "/usr/bin/chromium"

// browserDir is testdata/e2e with playwright-core and Chromium present, else the test is skipped
// (or fails under NODMIX_E2E=1).
func browserDir(t *testing.T) string {
	t.Helper()
	dir := e2etest.Dir(t)
	_, errChrome := os.Stat(chromiumPath)
	_, errPW := os.Stat(filepath.Join(dir, "node_modules", "playwright-core"))
	if errChrome != nil || errPW != nil {
		if os.Getenv("NODMIX_E2E") == "1" {
			t.Fatalf("NODMIX_E2E=1 but the browser test's dependencies are missing (make e2e-deps): %v %v", errChrome, errPW)
		}
		t.Skip("chromium or playwright-core missing; set NODMIX_E2E=1 to require them")
	}
	return dir
}

// runPage runs webchat.mjs and decodes what it printed.
func runPage(t *testing.T, dir string, out any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(dir, "webchat.mjs")}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("webchat.mjs %s: %v\n%s", args[0], err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("webchat.mjs output: %v\n%s", err, stdout.String())
	}
}

// apiGet reads a JSON API response.
func apiGet(t *testing.T, url, token string, v any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil && resp.StatusCode == 200 {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

// waitHealthy waits until every downstream server of the gateway serves.
func waitHealthy(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		var h struct {
			Status string `json:"status"`
		}
		if apiGet(t, base+"/healthz", "", &h) == 200 && h.Status == "ok" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway's servers did not all come up (last status %q)", h.Status)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

type picker struct {
	Options  []string `json:"options"`
	Selected string   `json:"selected"`
}

func TestE2EWebChat(t *testing.T) {
	dir := browserDir(t)
	// Tool Search over the npm servers and the 36-tool fake catalog, so the token economy has
	// something to show; a Z.AI model for the binary thinking profile; tokenjuice on.
	home := e2eHome(t, dir, `agents: { defaults: { model: "scripted/demo" } },
  tools: { toolSearch: { mode: "tools" } },
  models: { providers: { zai: { models: [{ id: "glm-4.6", name: "GLM 4.6" }] } } },
  plugins: { entries: { tokenjuice: { enabled: true } } },`)
	base := strings.TrimSuffix(startGateway(t, baseEnv(home)), "/mcp")
	waitHealthy(t, base)

	shots := os.Getenv("NODMIX_WEBCHAT_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if abs, err := filepath.Abs(shots); err == nil {
		shots = abs
	}
	var got struct {
		Foreign, ConsoleErrors       []string
		CSP                          string
		Key, KeyAfterReload, NewKey  string
		KeyAfterDelete               string
		PickerFirst, PickerAfterPick picker
		PickerAfterReload            picker
		PickerAfterDirective         picker
		PickerAfterStaleRow          picker
		HeldRows                     int
		TitleWhileBusy               string
		NoticeWhileBusy              string
		AnswerAfterHold              string
		PickerBinary, PickerNew      picker
		Mutations                    int
		Tools                        []struct{ Text, State string }
		Answers                      []string
		PatchStatus                  int
		StoredAfterPick              map[string]string
		TranscriptAfterReload        int
		Economy                      string
		LastAnswer                   string
		SessionsBeforeDelete         int
		SessionsAfterDelete          int
	}
	runPage(t, dir, &got, "chat", base, shots)

	if len(got.Foreign) > 0 || len(got.ConsoleErrors) > 0 {
		t.Errorf("the page fetched elsewhere %v or logged errors %v", got.Foreign, got.ConsoleErrors)
	}
	if !strings.Contains(got.CSP, "script-src 'self'") {
		t.Errorf("Content-Security-Policy = %q", got.CSP)
	}
	scripted := []string{"Inherited: medium", "Override: off", "Override: minimal", "Override: low", "Override: medium", "Override: high"}
	checks := []struct {
		name      string
		got, want any
	}{
		{"picker on load", got.PickerFirst, picker{scripted, "Inherited: medium"}},
		{"picker after picking high", got.PickerAfterPick, picker{scripted, "Override: high"}},
		{"stored after the pick", got.StoredAfterPick["thinking"], "high"},
		{"PATCH status", got.PatchStatus, 200},
		{"session after reload", got.KeyAfterReload, got.Key},
		{"picker after reload", got.PickerAfterReload, picker{scripted, "Override: high"}},
		{"picker after /think low", got.PickerAfterDirective, picker{scripted, "Override: low"}},
		{"reply to /think low", got.LastAnswer, "Thinking level set to low."},
		{"rows held back", got.HeldRows, 1},
		{"picker after a stale row", got.PickerAfterStaleRow, picker{scripted, "Override: high"}},
		{"binary profile picker", got.PickerBinary, picker{[]string{"Inherited: on", "Override: off", "Override: on"}, "Override: on"}},
		{"a new session inherits", got.PickerNew, picker{scripted, "Inherited: medium"}},
		{"session while its turn runs", got.TitleWhileBusy, got.NewKey},
		{"notice while a turn runs", got.NoticeWhileBusy, "A turn is still running in this session: wait for its answer, then switch."},
		{"answer after the hold", got.AnswerAfterHold, "You said: hello while held"},
		{"sessions after delete", got.SessionsAfterDelete, got.SessionsBeforeDelete - 1},
		{"open session after delete", got.KeyAfterDelete, got.Key},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	if got.Mutations < 4 {
		t.Errorf("the answers changed %d times while they streamed: not rendered as they came", got.Mutations)
	}
	var toolLines []string
	for _, tl := range got.Tools {
		toolLines = append(toolLines, tl.Text+" ["+tl.State+"]")
	}
	wantTools := []string{"🛠️ Tool search: echo a message [done]", "🛠️ Tool call: mcp:everything:echo [done]", "🛠️ Tool call: nodmix:core:exec [done]"}
	if diff := cmp.Diff(wantTools, toolLines); diff != "" {
		t.Errorf("tool lines (-want +got):\n%s", diff)
	}
	all := strings.Join(got.Answers, "\n")
	for _, want := range []string{"Verbose logging enabled.", "tool_search returned:", "Echo: hi from the page", "tokenjuice: compacted"} {
		if !strings.Contains(all, want) {
			t.Errorf("answers lack %q:\n%s", want, all)
		}
	}
	if got.TranscriptAfterReload < 6 || !strings.Contains(got.Economy, "Saved") {
		t.Errorf("after reload: %d transcript items; economy %q", got.TranscriptAfterReload, got.Economy)
	}

	// What the page did, read back through the API.
	var row struct {
		Model       string            `json:"model"`
		ModelPinned bool              `json:"modelPinned"`
		Overrides   map[string]string `json:"overrides"`
		Economy     struct {
			Searches, Calls, SchemaBytes, DirectSchemaBytes int
			Tokenjuice                                      struct{ SavedChars int }
		} `json:"economy"`
	}
	if code := apiGet(t, base+"/v1/sessions/"+got.Key, "", &row); code != 200 {
		t.Fatalf("GET the page's session = %d", code)
	}
	// The last pick (high, made after /think low) is what the session keeps.
	if diff := cmp.Diff(map[string]string{"thinking": "high", "verbose": "on"}, row.Overrides); diff != "" {
		t.Errorf("stored overrides (-want +got):\n%s", diff)
	}
	e := row.Economy
	if row.Model != "zai/glm-4.6" || !row.ModelPinned || e.Searches != 1 || e.Calls != 2 ||
		e.SchemaBytes == 0 || e.SchemaBytes*4 > e.DirectSchemaBytes || e.Tokenjuice.SavedChars < 1000 {
		t.Errorf("session row: model %q pinned %v economy %+v", row.Model, row.ModelPinned, e)
	}

	for _, name := range []string{"webchat.png", "webchat-economy.png"} {
		b, err := os.ReadFile(filepath.Join(shots, name))
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || len(b) < 5000 {
			t.Errorf("screenshot %s: %v (%d bytes)", name, err, len(b))
		}
	}
}

func TestE2EWebChatToken(t *testing.T) {
	dir := browserDir(t)
	home := t.TempDir()
	const token = "e2e-web-token-4711"
	cfg := `{agents: {defaults: {model: "scripted/demo"}}, gateway: {auth: {token: "` + token + `"}}}`
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(startGateway(t, baseEnv(home)), "/mcp")
	var got struct {
		Foreign, ConsoleErrors                             []string
		PageStatus                                         int
		AskedFirst, RefusedShown, Stored, AskedAfterReload bool
		Answers                                            []string
		Key                                                string
	}
	runPage(t, dir, &got, "token", base, token)
	if got.PageStatus != 200 || !got.AskedFirst || !got.RefusedShown || !got.Stored || got.AskedAfterReload {
		t.Errorf("token flow: %+v", got)
	}
	if len(got.Foreign) > 0 || len(got.ConsoleErrors) > 0 {
		t.Errorf("the page fetched elsewhere %v or logged errors %v", got.Foreign, got.ConsoleErrors)
	}
	if !slices.Contains(got.Answers, "You said: hello through the token") {
		t.Errorf("answers = %q", got.Answers)
	}
	if code := apiGet(t, base+"/v1/sessions", "", nil); code != http.StatusUnauthorized {
		t.Errorf("sessions without the token = %d", code)
	}
	var list struct {
		Data []struct{ Key string } `json:"data"`
	}
	if code := apiGet(t, base+"/v1/sessions", token, &list); code != 200 || len(list.Data) != 1 || list.Data[0].Key != got.Key {
		t.Errorf("sessions with the token = %d %+v (page session %q)", code, list, got.Key)
	}
}

// The sidebar of a gateway keeping 250 sessions shows the latest 100 and a "More sessions"
// button that loads the next page, until none follows; sessions updated between two pages are
// not listed twice.
func TestE2EWebChatSidebarPages(t *testing.T) {
	dir := browserDir(t)
	ctx := context.Background()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(`{agents: {defaults: {model: "scripted/demo"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	keys := sessiontest.Make(ctx, t, st, 250)
	st.Close()
	base := strings.TrimSuffix(startGateway(t, baseEnv(home)), "/mcp")

	var got struct {
		Foreign, ConsoleErrors []string
		First, Second, Third   []string
		MoreAfterFirst         bool
		Patched                []string
	}
	runPage(t, dir, &got, "pages", base)
	if len(got.Foreign) > 0 || len(got.ConsoleErrors) > 0 {
		t.Errorf("the page fetched elsewhere %v or logged errors %v", got.Foreign, got.ConsoleErrors)
	}
	if diff := cmp.Diff(keys[:100], got.First); diff != "" {
		t.Errorf("the first page (-want +got):\n%s", diff)
	}
	if !got.MoreAfterFirst {
		t.Error("no More sessions button after the first page")
	}
	if diff := cmp.Diff(keys[:200], got.Second); diff != "" {
		t.Errorf("after More sessions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{keys[10], keys[230]}, got.Patched); diff != "" {
		t.Fatalf("the sessions updated (-want +got):\n%s", diff)
	}
	// The last page leaves out the one updated before it was read (it moved to the front).
	want := append(slices.Clone(keys[:230]), keys[231:]...)
	if diff := cmp.Diff(want, got.Third); diff != "" {
		t.Errorf("after the last page (-want +got):\n%s", diff)
	}
}
