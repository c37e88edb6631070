package mcphub

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/leaktest"
)

func toolIDs(h *Hub) []string {
	var out []string
	for _, e := range h.Tools() {
		out = append(out, e.Tool.ID)
	}
	return out
}

// seedManifest stores a manifest for cfg listing the named tools, as a previous run would have.
func seedManifest(t *testing.T, m *memManifests, cfg ServerConfig, names ...string) {
	t.Helper()
	var tools []*mcp.Tool
	for _, n := range names {
		tools = append(tools, &mcp.Tool{Name: n, Description: "The cached " + n + " tool.", InputSchema: map[string]any{"type": "object"}})
	}
	data, err := encodeManifest(cfg, tools, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_ = m.SaveManifest(t.Context(), cfg.Name, data)
}

func TestManifestSavedAndListedNextRun(t *testing.T) {
	leaktest.Check(t)
	store := newMemManifests()
	f := newFakeNet()
	f.servers["srv"] = newTestServer("srv", nil, "extra")

	// First run: nothing cached; the listing is saved once the server is ready. The server is
	// held back until the catalog has been looked at: a fast connection would fill it first.
	first := make(chan struct{})
	f.gate["srv"] = first
	h1, _ := testHub(t, f, Options{Manifests: store}, enabled("srv"))
	if got := toolIDs(h1); got != nil {
		t.Fatalf("tools before the first connection, without a manifest: %v", got)
	}
	close(first)
	waitState(t, h1, "srv", StateReady)
	// The save follows the installation of the listing, on the server's goroutine.
	waitFor(t, h1, "the manifest saved", func() bool { return store.saveCount() == 1 })
	if h1.FromCache("srv") {
		t.Error("a connected server's tools are not from the cache")
	}
	_ = h1.Close()

	// Second run: the server is slow to start, and its tools are there from Start.
	gate := make(chan struct{})
	f.gate["srv"] = gate
	h2, notified := testHub(t, f, Options{Manifests: store}, enabled("srv"))
	want := []string{"mcp:srv:echo", "mcp:srv:extra"}
	if diff := cmp.Diff(want, toolIDs(h2)); diff != "" {
		t.Fatalf("cached tools right after Start (-want +got):\n%s", diff)
	}
	if !h2.FromCache("srv") || notified.Load() < 1 {
		t.Errorf("FromCache = %v, notified %d times; want true and at least once", h2.FromCache("srv"), notified.Load())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := h2.Listed(ctx); err != nil {
		t.Errorf("Listed with every server cached: %v", err)
	}
	if got := h2.Unsettled(); !cmp.Equal(got, []string{"srv"}) {
		t.Errorf("Unsettled = %v, want [srv]", got)
	}

	// A call made now waits for the connection instead of failing.
	type out struct {
		text string
		err  error
	}
	done := make(chan out, 1)
	go func() {
		res, err := callByID(t, h2, "mcp:srv:echo", `{"message":"early"}`)
		if err != nil {
			done <- out{err: err}
			return
		}
		done <- out{text: res.Text()}
	}()
	select {
	case o := <-done:
		t.Fatalf("the call did not wait for the server: %+v", o)
	case <-time.After(50 * time.Millisecond):
	}
	n := notified.Load()
	close(gate)
	if o := <-done; o.err != nil || o.text != "srv: early" {
		t.Fatalf("call to a connecting server = %+v, want its answer", o)
	}
	waitState(t, h2, "srv", StateReady)
	// Same tools, but the cache mark went: the catalog is told so that clients hear of it.
	waitFor(t, h2, "Notify after the cached server connected", func() bool { return notified.Load() > n })
	if h2.FromCache("srv") {
		t.Error("FromCache after connecting")
	}
	// One save per run keeps the manifest fresh in the store.
	waitFor(t, h2, "the second run's save", func() bool { return store.saveCount() == 2 })
}

func TestManifestToolGoneOnReconnect(t *testing.T) {
	leaktest.Check(t)
	store := newMemManifests()
	cfg := enabled("srv")
	seedManifest(t, store, cfg, "echo", "retired")
	f := newFakeNet()
	f.servers["srv"] = newTestServer("srv", nil)
	gate := make(chan struct{})
	f.gate["srv"] = gate
	h, notified := testHub(t, f, Options{Manifests: store}, cfg)
	if diff := cmp.Diff([]string{"mcp:srv:echo", "mcp:srv:retired"}, toolIDs(h)); diff != "" {
		t.Fatalf("cached tools (-want +got):\n%s", diff)
	}
	n := notified.Load()
	close(gate)
	waitState(t, h, "srv", StateReady)
	waitFor(t, h, "Notify for the removed tool", func() bool { return notified.Load() > n })
	waitFor(t, h, "the manifest saved", func() bool { return store.saveCount() == 2 })
	if diff := cmp.Diff([]string{"mcp:srv:echo"}, toolIDs(h)); diff != "" {
		t.Errorf("tools after connecting (-want +got):\n%s", diff)
	}
	var m manifest
	data, _ := store.LoadManifest(t.Context(), "srv")
	if err := json.Unmarshal(data, &m); err != nil || len(m.Tools) != 1 || m.Tools[0].Name != "echo" {
		t.Errorf("saved manifest = %s (%v), want only echo", data, err)
	}
}

func TestManifestCallWaitsUpToConnectDeadline(t *testing.T) {
	leaktest.Check(t)
	store := newMemManifests()
	cfg := enabled("stuck")
	cfg.ConnectTimeout = 100 * time.Millisecond
	seedManifest(t, store, cfg, "echo")
	f := newFakeNet()
	f.silent["stuck"] = true
	h, _ := testHub(t, f, Options{Manifests: store, ConnectTimeout: time.Hour, Backoff: Backoff{Initial: time.Hour}}, cfg)
	_, err := callByID(t, h, "mcp:stuck:echo", `{}`)
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.State != StateDown || !strings.Contains(err.Error(), "no answer to initialize within 100ms") {
		t.Fatalf("call = %v, want the server down after its 100ms connect deadline", err)
	}
	if got := toolIDs(h); !cmp.Equal(got, []string{"mcp:stuck:echo"}) {
		t.Errorf("a server that failed to connect keeps its cached tools; have %v", got)
	}
	if !h.FromCache("stuck") {
		t.Error("the tools of a server that never connected are still the cache's")
	}
}

func TestManifestIgnoredWhenStale(t *testing.T) {
	tests := []struct {
		name string
		data func(cfg ServerConfig) []byte
	}{
		{"other command", func(cfg ServerConfig) []byte {
			cfg.Args = []string{"--new"}
			b, _ := encodeManifest(cfg, []*mcp.Tool{{Name: "old"}}, time.Now())
			return b
		}},
		{"other server", func(cfg ServerConfig) []byte {
			cfg.Name = "other"
			b, _ := encodeManifest(cfg, []*mcp.Tool{{Name: "old"}}, time.Now())
			return b
		}},
		{"other version", func(cfg ServerConfig) []byte {
			return []byte(`{"version":99,"server":"srv","config":"` + configPrint(cfg) + `","tools":[{"name":"old"}]}`)
		}},
		{"not JSON", func(ServerConfig) []byte { return []byte("{") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leaktest.Check(t)
			cfg := enabled("srv")
			store := newMemManifests()
			store.data["srv"] = tt.data(cfg)
			f := newFakeNet()
			f.silent["srv"] = true
			h, _ := testHub(t, f, Options{Manifests: store}, cfg)
			if got := toolIDs(h); got != nil || h.FromCache("srv") {
				t.Errorf("tools from a stale manifest: %v", got)
			}
		})
	}
}

func TestConfigPrintKeepsSecretsOut(t *testing.T) {
	a := ServerConfig{Name: "x", URL: "https://u:pw@h/mcp?token=abc", Headers: map[string]string{"Authorization": "Bearer one"}}
	b := a
	b.URL = "https://u:other@h/mcp?token=def"
	b.Headers = map[string]string{"Authorization": "Bearer two"}
	if configPrint(a) != configPrint(b) {
		t.Error("a rotated credential must not make the cached manifest stale")
	}
	data, _ := encodeManifest(a, nil, time.Now())
	for _, secret := range []string{"pw", "abc", "one"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("manifest holds %q: %s", secret, data)
		}
	}
	c := ServerConfig{Name: "x", Command: "node", Args: []string{"a.js"}}
	d := c
	d.Args = []string{"b.js"}
	if configPrint(c) == configPrint(d) {
		t.Error("another command line must make the manifest stale")
	}
}

// FuzzDecodeManifest: whatever the store holds, decoding never panics, a manifest it accepts
// turns into catalog entries, and it survives a round trip.
func FuzzDecodeManifest(f *testing.F) {
	cfg := ServerConfig{Name: "srv", Command: "node", Args: []string{"server.js"}, Enabled: true}
	good, _ := encodeManifest(cfg, []*mcp.Tool{{Name: "echo", Description: "Echoes.", InputSchema: map[string]any{"type": "object"}}}, time.Unix(0, 0))
	f.Add(good)
	f.Add([]byte(`{"version":1,"server":"srv","config":"` + configPrint(cfg) + `","tools":[{"name":""},{"name":"a"},{"name":"a"},null]}`))
	f.Add([]byte(`{"version":1,"server":"srv","config":"` + configPrint(cfg) + `","tools":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tools, err := decodeManifest(cfg, data)
		if err != nil {
			return
		}
		tools = slices.DeleteFunc(tools, func(x *mcp.Tool) bool { return x == nil })
		h := New(Options{Servers: []ServerConfig{cfg}})
		_ = h.servers[0].entries(tools)
		again, err := encodeManifest(cfg, tools, time.Unix(0, 0))
		if err != nil {
			return // a schema the encoder refuses (e.g. a NaN) is dropped, not kept
		}
		if _, err := decodeManifest(cfg, again); err != nil {
			t.Fatalf("round trip: %v\n%s", err, again)
		}
	})
}
