package mcpserve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/e2etest"
)

// BenchmarkProxyProcess is the extra MCP hop as an agent host meets it: a Go SDK client starts
// `nodmix mcp serve` (the binary NODMIX_BIN names; make bench-compare builds it) over stdio, and
// calls server-everything's echo through it, interleaved with the same call made directly. The
// nodmix process runs as shipped. Next to it the same call goes through a relay process that
// copies bytes and parses nothing (the test binary re-executed, the "relay" metrics): the floor
// of any extra process on the path, against which nodmix's figure is to be read.
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
	var nodmixCmd *exec.Cmd
	serve := func(extra ...string) *mcp.ClientSession {
		cmd := exec.Command(bin, "mcp", "serve")
		cmd.Env = append(os.Environ(), append([]string{"NODMIX_HOME=" + home}, extra...)...)
		nodmixCmd = cmd
		return connect(cmd)
	}
	direct := connect(exec.Command(everything[0], everything[1:]...))
	viaNodmix := serve()
	relay := exec.Command(os.Args[0])
	relay.Env = append(os.Environ(), relayEnvVar+"="+string(mustJSON(b, everything)))
	relayed := connect(relay)
	args2 := map[string]any{"message": "x"}
	call := func(cs *mcp.ClientSession, name string) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args2})
		if err == nil && res.IsError {
			err = fmt.Errorf("%s: tool error", name)
		}
		return err
	}
	// nodmix serves once its server is connected; until then the tool is unknown.
	for call(viaNodmix, "mcp__everything__echo") != nil {
		if ctx.Err() != nil {
			b.Fatal("nodmix never served the echo tool")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var tDirect, tNodmix, tRelay time.Duration
	nodmixCPU, relayCPU := procCPU(nodmixCmd), procCPU(relay)
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
		if err := call(relayed, "echo"); err != nil {
			b.Fatal(err)
		}
		tDirect += t1.Sub(t0)
		tNodmix += t2.Sub(t1)
		tRelay += time.Since(t2)
	}
	b.ReportMetric(float64(tDirect.Microseconds())/float64(b.N), "direct-µs/call")
	b.ReportMetric(float64(tNodmix.Microseconds())/float64(b.N), "nodmix-µs/call")
	b.ReportMetric(float64(tRelay.Microseconds())/float64(b.N), "relay-µs/call")
	b.ReportMetric(float64(tNodmix)/float64(tDirect), "ratio")
	b.ReportMetric(float64(tRelay)/float64(tDirect), "relay-ratio")
	// The CPU time of the nodmix and relay processes themselves (not of the server behind them
	// or of this client): steadier than the latencies on a loaded machine.
	if n, r := nodmixCPU(), relayCPU(); n >= 0 && r >= 0 {
		b.ReportMetric(float64(n.Microseconds())/float64(b.N), "nodmix-cpu-µs/call")
		b.ReportMetric(float64(r.Microseconds())/float64(b.N), "relay-cpu-µs/call")
	}
}

// procCPU returns a function that reports the CPU time cmd's process has used since procCPU
// was called (all its threads, from /proc/<pid>/task/*/schedstat), or -1 where that cannot be
// read (not Linux, the process gone).
func procCPU(cmd *exec.Cmd) func() time.Duration {
	read := func() time.Duration {
		if cmd.Process == nil {
			return -1
		}
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", cmd.Process.Pid))
		if err != nil || len(tasks) == 0 {
			return -1
		}
		var total time.Duration
		for _, t := range tasks {
			data, err := os.ReadFile(t)
			if err != nil {
				return -1
			}
			ns, _, _ := strings.Cut(string(data), " ")
			v, err := strconv.ParseInt(ns, 10, 64)
			if err != nil {
				return -1
			}
			total += time.Duration(v)
		}
		return total
	}
	start := read()
	return func() time.Duration {
		end := read()
		if start < 0 || end < 0 {
			return -1
		}
		return end - start
	}
}

// relayEnvVar is relayEnv of the package's own tests, whose TestMain makes the test binary a
// relay when it is set.
const relayEnvVar = "NODMIX_TEST_RELAY"

func mustJSON(b *testing.B, v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return data
}
