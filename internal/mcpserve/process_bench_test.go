package mcpserve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/e2etest"
)

// BenchmarkProxyProcess is the extra MCP hop as an agent host meets it: a Go SDK client starts
// `nodmix mcp serve` (the binary NODMIX_BIN names; make bench-compare builds it) over stdio, and
// calls server-everything's echo through it, interleaved with the same call made directly. The
// nodmix process runs as shipped, and again with GOMAXPROCS=1 (the "1p" metrics), which takes the
// scheduler's wake-ups out of each message handoff.
func BenchmarkProxyProcess(b *testing.B) {
	bin := os.Getenv("NODMIX_BIN")
	if bin == "" {
		b.Skip("NODMIX_BIN is not set")
	}
	dir := e2etest.Dir(b)
	everything := e2etest.Server(dir, "server-everything", "stdio")
	home := b.TempDir()
	args, _ := json.Marshal(everything[1:])
	cfg := fmt.Sprintf(`{mcp: {servers: {everything: {command: %q, args: %s}}}}`, everything[0], args)
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	connect := func(cmd *exec.Cmd) *mcp.ClientSession {
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	serve := func(extra ...string) *mcp.ClientSession {
		cmd := exec.Command(bin, "mcp", "serve")
		cmd.Env = append(os.Environ(), append([]string{"NODMIX_HOME=" + home}, extra...)...)
		return connect(cmd)
	}
	direct := connect(exec.Command(everything[0], everything[1:]...))
	viaNodmix, viaNodmix1 := serve(), serve("GOMAXPROCS=1")
	args2 := map[string]any{"message": "x"}
	call := func(cs *mcp.ClientSession, name string) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args2})
		if err == nil && res.IsError {
			err = fmt.Errorf("%s: tool error", name)
		}
		return err
	}
	// nodmix serves once its server is connected; until then the tool is unknown.
	for _, cs := range []*mcp.ClientSession{viaNodmix, viaNodmix1} {
		for call(cs, "mcp__everything__echo") != nil {
			if ctx.Err() != nil {
				b.Fatal("nodmix never served the echo tool")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	var tDirect, tNodmix, tNodmix1 time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := call(direct, "echo"); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := call(viaNodmix, "mcp__everything__echo"); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := call(viaNodmix1, "mcp__everything__echo"); err != nil {
			b.Fatal(err)
		}
		tDirect += t1.Sub(t0)
		tNodmix += t2.Sub(t1)
		tNodmix1 += time.Since(t2)
	}
	b.ReportMetric(float64(tDirect.Microseconds())/float64(b.N), "direct-µs/call")
	b.ReportMetric(float64(tNodmix.Microseconds())/float64(b.N), "nodmix-µs/call")
	b.ReportMetric(float64(tNodmix1.Microseconds())/float64(b.N), "nodmix-1p-µs/call")
	b.ReportMetric(float64(tNodmix)/float64(tDirect), "ratio")
	b.ReportMetric(float64(tNodmix1)/float64(tDirect), "1p-ratio")
}
