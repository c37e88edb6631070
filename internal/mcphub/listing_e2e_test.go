//go:build unix

package mcphub

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/e2etest"
	"github.com/nodmix/nodmix/internal/leaktest"
)

// partialServer is a server of the TypeScript SDK's low-level kind, as many in the wild are: it
// declares tools, prompts and resources but answers only tools/list, tools/call, resources/list
// and resources/read; prompts/list and resources/templates/list get "method not found".
const partialServer = `
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema, ListResourcesRequestSchema, ReadResourceRequestSchema } from "@modelcontextprotocol/sdk/types.js";
const server = new Server({ name: "partial", version: "1.0.0" }, { capabilities: { tools: {}, prompts: {}, resources: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: "hello", inputSchema: { type: "object" } }] }));
server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: "text", text: "hi" }] }));
server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [{ uri: "file:///a", name: "a" }] }));
server.setRequestHandler(ReadResourceRequestSchema, async () => ({ contents: [{ uri: "file:///a", text: "A" }] }));
await server.connect(new StdioServerTransport());
`

// A server that declared prompts or resources and refused one of their listings never became
// ready: the connection attempt failed over the refusal and was retried for ever, and its tools
// were never listed. A refused listing of those kinds is now an empty one.
func TestE2ERefusedOptionalListingsKeepTheTools(t *testing.T) {
	dir := e2etest.Dir(t)
	leaktest.Check(t)
	cfg := stdioServer("partial", "node", []string{"--input-type=module", "-e", partialServer})
	cfg.Cwd = dir // where node finds the SDK
	h, _ := e2eHub(t, Options{Backoff: Backoff{Initial: time.Hour}}, cfg)
	waitState(t, h, "partial", StateReady, StateDown)
	st := statusOf(h, "partial")
	if st.State != StateReady {
		t.Fatalf("the server is %s: %s", st.State, st.LastError)
	}
	got := []int{st.Tools, st.Prompts, st.Resources, len(h.ResourceTemplates())}
	if diff := cmp.Diff([]int{1, 0, 1, 0}, got); diff != "" {
		t.Errorf("tools, prompts, resources, templates (-want +got):\n%s", diff)
	}
	if res, err := callByID(t, h, "mcp:partial:hello", `{}`); err != nil || res.Text() != "hi" {
		t.Errorf("call = %v, %v", res, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if res, err := h.ReadResource(ctx, "file:///a"); err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "A" {
		t.Errorf("read = %v, %v", res, err)
	}
}

// slowManifests takes its time to save, as a state store another process holds does, and says
// when a save is done.
type slowManifests struct {
	*memManifests
	delay time.Duration
	saved chan struct{}
}

func (m *slowManifests) SaveManifest(ctx context.Context, server string, data []byte) error {
	time.Sleep(m.delay)
	defer func() { m.saved <- struct{}{} }()
	return m.memManifests.SaveManifest(ctx, server, data)
}

// A server that had connected and listed was killed when the connect deadline passed while its
// manifest was being saved, and restarted: the deadline now ends with the listing. (The save
// takes the whole connect timeout, so it ends past the deadline, which began before it.)
func TestE2EConnectDeadlineSparesAListedServer(t *testing.T) {
	dir := e2etest.Dir(t)
	leaktest.Check(t)
	cfg := stdioServer("fx", "node", []string{filepath.Join(dir, "fixture-server.mjs")})
	cfg.ConnectTimeout = 6 * time.Second // node starting on a loaded machine stays within it
	store := &slowManifests{memManifests: newMemManifests(), delay: cfg.ConnectTimeout, saved: make(chan struct{}, 1)}
	h, _ := e2eHub(t, Options{Manifests: store, Backoff: Backoff{Initial: time.Hour}}, cfg)
	waitFor(t, h, "the manifest saved, or the server down", func() bool {
		select {
		case <-store.saved:
			return true
		default:
			return statusOf(h, "fx").State == StateDown
		}
	})
	if res, err := callByID(t, h, "mcp:fx:echo", `{"message":"still here"}`); err != nil || res.Text() != "echo: still here" {
		t.Errorf("call after the save = %v, %v (status %+v)", res, err, statusOf(h, "fx"))
	}
}

// A server that died while a process it had started kept its stdout open (a helper it ran in
// the background, a shell wrapper's leftover) stayed "ready" for ever: its stdout never ended,
// and every call to it waited for its timeout. The server's exit now ends the connection, and
// the hub restarts it.
func TestE2EDeadServerWithChildHoldingStdout(t *testing.T) {
	dir := e2etest.Dir(t)
	leaktest.Check(t)
	script := `sleep 300 & exec node "$1"`
	fx := stdioServer("fx", "sh", []string{"-c", script, "sh", filepath.Join(dir, "fixture-server.mjs")})
	h, _ := e2eHub(t, Options{Backoff: Backoff{Initial: time.Hour}}, fx)
	waitState(t, h, "fx", StateReady)
	if err := syscall.Kill(statusOf(h, "fx").PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitState(t, h, "fx", StateDown)
	if st := statusOf(h, "fx"); !strings.Contains(st.LastError, "signal: killed") {
		t.Errorf("last error = %q, want the server's exit", st.LastError)
	}
}

// A server that exits by itself is reported by how it exited (once its process was waited for
// from its start, the close of its stdin, which Wait had closed, was reported instead).
func TestE2EExitedServerSaysHow(t *testing.T) {
	leaktest.Check(t)
	cfg := stdioServer("quits", "sh", []string{"-c", strings.Replace(deafServer, "exec sleep 1000", "exit 7", 1)})
	cfg.Env = map[string]string{"PINGS": "0"}
	h, _ := e2eHub(t, Options{Backoff: Backoff{Initial: time.Hour}}, cfg)
	waitState(t, h, "quits", StateDown)
	if st := statusOf(h, "quits"); !strings.Contains(st.LastError, "exit status 7") {
		t.Errorf("last error = %q, want the server's exit status", st.LastError)
	}
}
