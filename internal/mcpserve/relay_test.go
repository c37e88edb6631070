package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The floor of any extra MCP hop is a relay that parses nothing: it copies the client's bytes
// to the server and the server's bytes back. The hop benchmarks time one next to nodmix, in
// this process (relaySession) and as a separate process (the test binary re-executed with
// relayEnv set), so that nodmix's figure can be read against what the hop itself costs.

// relayEnv names the variable that makes the test binary a relay: its value is the JSON array
// of the server's command line.
const relayEnv = "NODMIX_TEST_RELAY"

func TestMain(m *testing.M) {
	if argv := os.Getenv(relayEnv); argv != "" {
		if err := relayMain(argv); err != nil {
			fmt.Fprintln(os.Stderr, "relay:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// relayMain starts the server argvJSON names and relays this process's stdin and stdout to it
// until the client closes stdin and the server has exited.
func relayMain(argvJSON string) error {
	var argv []string
	if err := json.Unmarshal([]byte(argvJSON), &argv); err != nil || len(argv) == 0 {
		return fmt.Errorf("%s: want a JSON array of a command line, got %q", relayEnv, argvJSON)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		_, _ = io.Copy(stdin, os.Stdin)
		_ = stdin.Close()
	})
	wg.Go(func() { _, _ = io.Copy(os.Stdout, stdout) })
	wg.Wait()
	return cmd.Wait()
}

// relaySession connects an SDK client to the server argv starts through a relay in this
// process: two goroutines copying between OS pipes and the server's. It ends with the benchmark.
func relaySession(b *testing.B, ctx context.Context, argv []string, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	inR, inW, outR, outW := osPipes(b)
	var wg sync.WaitGroup
	wg.Go(func() {
		_, _ = io.Copy(stdin, inR)
		_ = stdin.Close()
		_ = inR.Close()
	})
	wg.Go(func() {
		_, _ = io.Copy(outW, stdout)
		_ = outW.Close()
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, opts)
	if err != nil {
		_ = cmd.Process.Kill()
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cs.Close()
		_ = inW.Close()
		// A server that does not exit when its input ends is stopped.
		stop := time.AfterFunc(10*time.Second, func() { _ = cmd.Process.Kill() })
		defer stop.Stop()
		wg.Wait()
		_ = cmd.Wait()
		_ = outR.Close()
	})
	return cs
}
