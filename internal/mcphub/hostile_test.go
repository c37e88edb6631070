package mcphub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/leaktest"
)

// A tool whose model-facing name is another tool's (across servers, since server names may hold
// "__", or within one server, by a name made to match SafeName's replacement) must not make the
// catalog refuse every rebuild: the first in server and id order keeps the name, the other is
// left out with a log line.
func TestMappedNameCollisionsLeaveTheCatalogWorking(t *testing.T) {
	leaktest.Check(t)
	odd := "x.y"
	// The name SafeName gives "x.y", without the server prefix: a valid tool name of its own. "x.y"
	// sorts first by id, so it keeps the name.
	lookalike := strings.TrimPrefix(catalog.MCPName("s", odd), "mcp__s__")
	f := newFakeNet()
	f.servers["a"] = newTestServer("a", nil, "b__c")
	f.servers["a__b"] = newTestServer("a__b", nil, "c")
	f.servers["s"] = newTestServer("s", nil, odd, lookalike)
	f.servers["z"] = newTestServer("z", nil)
	log, logs := captureLog(t)
	cat := catalog.New(nil)
	var notify func()
	h := New(Options{Log: log, Notify: func() { notify() },
		Servers: []ServerConfig{enabled("a"), enabled("a__b"), enabled("s"), enabled("z")}})
	h.dial = f.dial
	notify = cat.Add(h)
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	for _, s := range []string{"a", "a__b", "s", "z"} {
		waitState(t, h, s, StateReady)
	}
	cat.Rebuild()
	if err := cat.Err(); err != nil {
		t.Fatalf("catalog refused the hub's tools: %v", err)
	}
	var got []string
	for _, e := range cat.Snapshot().Entries() {
		got = append(got, e.Tool.ID+" "+e.Tool.Name)
	}
	want := []string{
		"mcp:a:b__c mcp__a__b__c",
		"mcp:a:echo mcp__a__echo",
		"mcp:a__b:echo mcp__a__b__echo",
		"mcp:s:echo mcp__s__echo",
		"mcp:s:" + odd + " " + catalog.MCPName("s", odd),
		"mcp:z:echo mcp__z__echo",
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("catalog (-want +got):\n%s", diff)
	}
	for _, w := range []string{`left_out_server=a__b left_out_tool=c`, `server=s tool=` + lookalike} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("no log line for the left-out tool (%s) in:\n%s", w, logs)
		}
	}
}

// toolsList answers tools/list with the tools, given as JSON, on one page.
func toolsList(tools ...string) rawHandler {
	return func(_ *rawPeer, method string, _, _ json.RawMessage) any {
		if method != "tools/list" {
			return nil
		}
		return map[string]any{"tools": json.RawMessage("[" + strings.Join(tools, ",") + "]")}
	}
}

// A tool whose input schema is not an object schema would be sent to providers as is, and a
// provider refuses the whole request over one such tool: every turn would fail. Such tools are
// left out with a log line; the server's other tools stay.
func TestToolsWithoutAnObjectSchemaAreLeftOut(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	t.Cleanup(f.rawWG.Wait)
	f.raw["odd"] = toolsList(
		`{"name":"ok","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}`,
		`{"name":"untyped","inputSchema":{"properties":{}}}`,
		`{"name":"absent"}`,
		`{"name":"nullschema","inputSchema":null}`,
		`{"name":"str","inputSchema":"string"}`,
		`{"name":"arr","inputSchema":[{"type":"object"}]}`,
		`{"name":"num","inputSchema":7}`,
		`{"name":"typed","inputSchema":{"type":"string"}}`,
		`{"name":"typelist","inputSchema":{"type":["object","null"]}}`,
	)
	log, logs := captureLog(t)
	h, _ := testHub(t, f, Options{Log: log}, enabled("odd"))
	waitState(t, h, "odd", StateReady)
	var got []string
	for _, e := range h.Tools() {
		got = append(got, e.Tool.MCPToolName)
		var s map[string]any
		if err := json.Unmarshal(e.Tool.Schema(), &s); err != nil || (s["type"] != nil && s["type"] != "object") {
			t.Errorf("%s: schema %s is not an object schema", e.Tool.MCPToolName, e.Tool.Schema())
		}
	}
	if diff := cmp.Diff([]string{"absent", "nullschema", "ok", "untyped"}, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	for _, name := range []string{"str", "arr", "num", "typed", "typelist"} {
		if !strings.Contains(logs.String(), "tool="+name+"\n") {
			t.Errorf("no log line for the left-out tool %s", name)
		}
	}
}

// A secret in a stderr line longer than the log's cap must not be cut in two by the cap: the
// part before the cut no longer matches the secret, so it went to the log and the tail as is.
// Nor may a line's rest, written later, start inside the secret.
func TestStderrSecretsAtTheCapAreMaskedWhole(t *testing.T) {
	const secret = "Qx7Vt-secret-Kp2Zm-9WrLb"
	pad := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name   string
		writes []string
	}{
		{"one line over the cap", []string{pad(maxLogLine-6) + secret + " tail\n"}},
		{"cap reached without a newline", []string{pad(maxLogLine-6) + secret + pad(300)}},
		{"secret across writes over the cap", []string{pad(maxLogLine + 10), pad(20) + secret[:9], secret[9:] + " tail\n"}},
		{"secret across writes at the cap", []string{pad(maxLogLine - 4), secret[:9], secret[9:] + pad(5000) + "\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, logs := captureLog(t)
			s := newScrubber(ServerConfig{Env: map[string]string{"KEY": secret}}, nil)
			// As a server's stderr logs: through the scrubbing handler.
			l := newLineLogger(slog.New(scrubHandler{log.Handler(), s}), s)
			for _, w := range tt.writes {
				_, _ = l.Write([]byte(w))
			}
			_, _ = l.Write([]byte("\nnext line\n"))
			out := logs.String() + strings.Join(l.tail(), "\n")
			for n := 6; n <= len(secret); n++ {
				for i := 0; i+n <= len(secret); i++ {
					if strings.Contains(out, secret[i:i+n]) {
						t.Fatalf("the log or the tail holds %q of the secret", secret[i:i+n])
					}
				}
			}
			if !strings.Contains(logs.String(), "line=\"next line\"") {
				t.Errorf("the line after the long one is not logged:\n%s", logs)
			}
		})
	}
}

// A server that sends requests (pings) and never reads the answers held a goroutine and memory
// for every one, without bound (300,000 pings: 100,000 goroutines, 200 MB). Past a bound of
// unanswered requests the connection ends with an error saying why, and the server restarts.
func TestServerFloodingRequestsIsCutOff(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	t.Cleanup(f.rawWG.Wait)
	const flood = 300000
	var sent atomic.Int64
	done := make(chan struct{})
	f.raw["flood"] = func(p *rawPeer, method string, id, _ json.RawMessage) any {
		if method != "tools/list" {
			return nil
		}
		p.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"tools": []any{}}})
		// From here on the server no longer reads its stdin.
		defer close(done)
		for i := range flood {
			if p.line(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","method":"ping"}`, i)) != nil {
				break
			}
			sent.Add(1)
		}
		return nil
	}
	h, _ := testHub(t, f, Options{Backoff: Backoff{Initial: time.Hour}}, enabled("flood"))
	waitState(t, h, "flood", StateDown)
	<-done
	if st := statusOf(h, "flood"); !strings.Contains(st.LastError, fmt.Sprintf("more than %d requests", maxUnanswered)) {
		t.Errorf("last error = %q, want the flood named", st.LastError)
	}
	if n := sent.Load(); n >= flood/10 {
		t.Errorf("the hub read %d of the server's pings before it ended the connection", n)
	}
}

// A server's listing is bounded in bytes (64 MiB; 1 MiB here), not only in pages: 1,000 pages of
// up to 16 MiB each (the frame limit) would be held at once. Past the bound the connection
// attempt fails, naming the bound, and the server restarts.
func TestHugeListingFails(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	t.Cleanup(f.rawWG.Wait)
	desc := strings.Repeat("d", 80<<10)
	pages := 0
	f.raw["huge"] = func(_ *rawPeer, method string, _, params json.RawMessage) any {
		if method != "tools/list" {
			return nil
		}
		pages++
		var tools []any
		for i := range 10 {
			tools = append(tools, map[string]any{"name": fmt.Sprintf("t%d_%d", pages, i), "description": desc,
				"inputSchema": map[string]any{"type": "object"}})
		}
		next := fmt.Sprintf("c%d", pages)
		if pages == 2 { // 1.6 MB in all, over the bound of this test
			next = ""
		}
		return map[string]any{"tools": tools, "nextCursor": next}
	}
	h, _ := testHub(t, f, Options{Backoff: Backoff{Initial: time.Hour}, listingLimit: 1 << 20}, enabled("huge"))
	waitState(t, h, "huge", StateDown)
	if st := statusOf(h, "huge"); !strings.Contains(st.LastError, "tools/list: the listing exceeds 1 MiB") || st.Tools != 0 {
		t.Errorf("status = %+v, want no tools and the bound named", st)
	}
}

// A server's refusal that quotes a secret of its config is scrubbed in the error's text and in
// the JSON-RPC error the chain holds, which the MCP face passes on to its client as it is.
func TestRefusalKeepsSecretsOut(t *testing.T) {
	leaktest.Check(t)
	const secret = "tok-Zr8Qm-secret"
	f := newFakeNet()
	srv := newTestServer("p", nil)
	srv.AddPrompt(&mcp.Prompt{Name: "greet"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad key " + secret,
			Data: json.RawMessage(`{"key":"` + secret + `"}`)}
	})
	f.servers["p"] = srv
	cfg := enabled("p")
	cfg.Env = map[string]string{"KEY": secret}
	h, _ := testHub(t, f, Options{}, cfg)
	waitState(t, h, "p", StateReady)
	_, err := h.GetPrompt(t.Context(), "p__greet", nil)
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) {
		t.Fatalf("GetPrompt = %v, want the server's JSON-RPC error in the chain", err)
	}
	if wire.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("code = %d, want the server's", wire.Code)
	}
	for what, text := range map[string]string{"error": err.Error(), "wire message": wire.Message, "wire data": string(wire.Data)} {
		if strings.Contains(text, secret) {
			t.Errorf("the %s holds the secret: %s", what, text)
		}
	}
}

// A server that refused its listing is down, and the error of a call to one of its (cached)
// tools held that refusal as a *jsonrpc.Error, unscrubbed: the MCP face, which passes such an
// error on as the answer, sent the client the server's old refusal, secret and all, in place
// of the call's own error (the server is down).
func TestDownServerErrorHoldsNoStaleRefusal(t *testing.T) {
	leaktest.Check(t)
	const secret = "tok-Qx81-secret"
	f := newFakeNet()
	f.raw["r"] = func(p *rawPeer, method string, id, _ json.RawMessage) any {
		if method == "tools/list" {
			p.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32602, "message": "bad key " + secret}})
		}
		return nil
	}
	cfg := enabled("r")
	cfg.Env = map[string]string{"KEY": secret}
	store := newMemManifests()
	seedManifest(t, store, cfg, "echo")
	h, _ := testHub(t, f, Options{Manifests: store, Backoff: Backoff{Initial: time.Hour}}, cfg)
	waitState(t, h, "r", StateDown)
	_, err := callByID(t, h, "mcp:r:echo", `{}`)
	if !errors.Is(err, catalog.ErrUnavailable) || !strings.Contains(err.Error(), `mcp server "r": down`) {
		t.Fatalf("call = %v, want the server down", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the error holds the secret: %v", err)
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		t.Errorf("the error unwraps to the server's refusal of its listing (%d %q), which the MCP face would send as the call's", wire.Code, wire.Message)
	}
}
