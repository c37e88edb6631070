//go:build unix

package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/mcphub"
)

// homeWith writes cfg as the config of a fresh NODMIX_HOME and returns its getenv.
func homeWith(t *testing.T, cfg string) func(string) string {
	t.Helper()
	getenv := testEnv(t)
	if err := os.WriteFile(filepath.Join(getenv("NODMIX_HOME"), "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return getenv
}

// TestAwaitServersSaysWhoHoldsItUp: a server that never answers holds a one-shot command only
// for its connectTimeoutMs, and the command is told which server it waits for.
func TestAwaitServersSaysWhoHoldsItUp(t *testing.T) {
	getenv := homeWith(t, `{mcp: {servers: {
		mute: {command: "sleep", args: ["30"], connectTimeoutMs: 1500},
	}}}`)
	a, err := New(t.Context(), Options{Getenv: getenv, ConnectMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var mu sync.Mutex
	var notes []string
	a.AwaitServers(t.Context(), func(line string) {
		mu.Lock()
		notes = append(notes, line)
		mu.Unlock()
	})
	want := []string{
		`nodmix: waiting for mcp server "mute" to connect (at most 1s more)`,
		`nodmix: gave up on mcp server "mute" after 2s; its tools are left out (mcp.servers.<name>.connectTimeoutMs sets a server's deadline)`,
	}
	// The hub ends the attempt at its deadline, so the wait ends there and Settled succeeds:
	// only the first note is certain; a second one appears only when the bound cut the wait.
	if len(notes) == 0 || notes[0] != want[0] {
		t.Fatalf("notes = %q, want first %q", notes, want[0])
	}
	if len(notes) > 1 && notes[1] != want[1] {
		t.Errorf("second note = %q, want %q", notes[1], want[1])
	}
	st := a.Hub.Status()
	if len(st) != 1 || st[0].State != mcphub.StateDown || st[0].LastError != "no answer to initialize within 1.5s" {
		t.Errorf("status = %+v", st)
	}
}

// TestCachedManifestAcrossRuns: a persistent nodmix keeps each server's listing in state.db; the
// next run lists the tools before the server has connected, marked for MCP clients.
func TestCachedManifestAcrossRuns(t *testing.T) {
	script := filepath.Join(t.TempDir(), "server.sh")
	// A stdio MCP server in sh: answers initialize and tools/list, then waits for stdin to end.
	// With SLOW set it sleeps first, as a server that starts slowly does; with RETIRED set it
	// lists a second tool.
	body := `#!/bin/sh
[ -n "$SLOW" ] && sleep "$SLOW"
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
  *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}\n' "$id" ;;
  *'"tools/list"'*)
    extra=''
    [ -n "$RETIRED" ] && extra=',{"name":"retired","inputSchema":{"type":"object"}}'
    printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"hello","description":"Says hello.","inputSchema":{"type":"object"}}%s]}}\n' "$id" "$extra" ;;
  esac
done
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	getenv := homeWith(t, `{mcp: {servers: {shell: {command: "`+script+`", env: {RETIRED: "1"}}}}}`)
	open := func() *App {
		t.Helper()
		a, err := New(t.Context(), Options{Getenv: getenv, ConnectMCP: true, Persistent: true})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	a := open()
	if err := a.Hub.WaitState(ctx, "shell", mcphub.StateReady); err != nil {
		t.Fatal(err)
	}
	// The manifest is saved right after the server became ready.
	var data []byte
	for {
		var err error
		if data, err = a.Store.Blob(ctx, "mcp-manifest:shell"); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("manifest after the first run: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var m struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(data, &m); err != nil || len(m.Tools) != 2 || m.Tools[0].Name != "hello" {
		t.Fatalf("manifest = %s (%v)", data, err)
	}
	hello := &catalog.Tool{Source: catalog.SourceMCP, Server: "shell"}
	if meta := a.toolMeta(hello); meta != nil {
		t.Errorf("a connected server's tools are not marked: %v", meta)
	}
	_ = a.Close()

	// Second run, the server slow to start (env is not part of what the manifest depends on) and
	// without its second tool: both are there at once, from the cache, and marked until the
	// server has connected; then the retired one goes, and sessions are told.
	if err := os.WriteFile(filepath.Join(getenv("NODMIX_HOME"), "nodmix.json5"),
		[]byte(`{mcp: {servers: {shell: {command: "`+script+`", env: {SLOW: "3"}}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	a = open()
	defer a.Close()
	var listed []string
	for _, e := range a.Engine.Allowed().Entries() {
		if e.Tool.Source == catalog.SourceMCP {
			listed = append(listed, e.Tool.ID)
		}
	}
	if diff := cmp.Diff([]string{"mcp:shell:hello", "mcp:shell:retired"}, listed); diff != "" {
		t.Errorf("MCP tools right after New (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{MetaConnected: false}, a.toolMeta(hello)); diff != "" {
		t.Errorf("mark of a cached tool (-want +got):\n%s", diff)
	}
	v, err := a.Engine.Open(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 1)
	defer v.Subscribe(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})()
	if err := a.Hub.WaitState(ctx, "shell", mcphub.StateReady); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("the session was not told that its tools changed")
	}
	var names []string
	for _, tool := range v.Tools() {
		if tool.Source == catalog.SourceMCP {
			names = append(names, tool.Name)
		}
	}
	if diff := cmp.Diff([]string{"mcp__shell__hello"}, names); diff != "" {
		t.Errorf("the session's MCP tools after the server connected (-want +got):\n%s", diff)
	}
	if meta := a.toolMeta(hello); meta != nil {
		t.Errorf("still marked after connecting: %v", meta)
	}
}

// TestServersAreToldTheVersion: the hub introduces nodmix to its servers with the version the
// app is given, not the hub's "dev".
func TestServersAreToldTheVersion(t *testing.T) {
	seen := filepath.Join(t.TempDir(), "initialize.json")
	script, _ := json.Marshal("head -n 1 > '" + seen + "'")
	getenv := homeWith(t, `{mcp: {servers: {
		rec: {command: "sh", args: ["-c", `+string(script)+`], connectTimeoutMs: 2000},
	}}}`)
	a, err := New(t.Context(), Options{Getenv: getenv, ConnectMCP: true, Version: "1.2.3-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.AwaitServers(t.Context(), func(string) {})
	var msg struct {
		Method string `json:"method"`
		Params struct {
			ClientInfo struct{ Name, Version string } `json:"clientInfo"`
		} `json:"params"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(seen)
		if err == nil && len(data) > 0 {
			if err := json.Unmarshal(data, &msg); err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server was sent no initialize")
		}
		time.Sleep(20 * time.Millisecond)
	}
	want := struct{ Name, Version string }{"nodmix", "1.2.3-test"}
	if msg.Method != "initialize" || msg.Params.ClientInfo != want {
		t.Fatalf("first message %q with clientInfo %+v, want initialize with %+v", msg.Method, msg.Params.ClientInfo, want)
	}
}
