package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain turns the test binary into a sandbox child when started as one, so the tests drive
// real child processes: {os.Args[0], ChildArg} is the pool's command. Extra arguments select
// misbehaving children for the failure-path tests.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ChildArg {
		os.Exit(testChild(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == hostArg {
		os.Exit(testHost(os.Args[2]))
	}
	os.Exit(m.Run())
}

// hostArg makes the test binary a nodmix that runs the code named next in a pool of its own and
// writes the pid of each child it starts to stdout, for tests that kill the host.
const hostArg = "__sandbox_host"

func testHost(code string) int {
	pids := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p, err := NewPool(Options{Command: []string{os.Args[0], ChildArg}, Warm: -1, Logger: pids})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, err = p.Run(context.Background(), code, &fakeBridge{}, Limits{Timeout: time.Hour})
	fmt.Fprintln(os.Stderr, err)
	return 1
}

func testChild(mode []string) int {
	if len(mode) == 0 {
		return ChildMain(context.Background(), os.Stdin, os.Stdout, os.Stderr)
	}
	hello, _ := encodeMessage(message{Type: msgHello, Version: protocolVersion})
	switch mode[0] {
	case "silent": // exits before saying hello
		fmt.Fprintln(os.Stderr, "not a sandbox child")
		return 0
	case "crash": // says hello, reads the run, floods stderr and dies
		os.Stdout.Write(hello)
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Stderr.WriteString(strings.Repeat("x", crashFlood) + "\n" + crashLast + "\n")
		return 3
	case "deaf": // makes a bridge call, stops reading once the answer starts, sends a result and lingers
		os.Stdout.Write(hello)
		in := bufio.NewReader(os.Stdin)
		_, _ = in.ReadString('\n')
		os.Stdout.WriteString(`{"type":"bridge","id":"1","method":"call","args":{"id":"big","args":1}}` + "\n")
		_, _ = in.ReadByte()
		os.Stdout.WriteString(`{"type":"result","ok":true,"value":"done"}` + "\n")
		time.Sleep(time.Minute)
		return 0
	case "script": // says hello, reads the run, writes the file named next and lingers
		os.Stdout.Write(hello)
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		b, err := os.ReadFile(mode[1])
		if err != nil {
			return 2
		}
		os.Stdout.Write(b)
		time.Sleep(time.Minute)
		return 0
	case "garbage": // says hello, then answers the run with something that is not the protocol
		os.Stdout.Write(hello)
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Stdout.WriteString("this is not json\n")
		time.Sleep(time.Minute)
		return 0
	}
	return 2
}

const (
	crashFlood = 70000
	crashLast  = "panic: the child broke"
)

const testToolID = "nodmix:core:issue_create"

// fakeBridge is a one-tool catalog. Hooks let tests observe and steer calls.
type fakeBridge struct {
	searches, describes, calls atomic.Int64
	mu                         sync.Mutex
	lastLimit                  int
	lastArgs                   string
	// onCall, if set, replaces Call.
	onCall func(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error)
}

var _ Bridge = (*fakeBridge)(nil)

func (f *fakeBridge) Search(_ context.Context, query string, limit int) (json.RawMessage, error) {
	f.searches.Add(1)
	f.mu.Lock()
	f.lastLimit = limit
	f.mu.Unlock()
	return json.RawMessage(`[{"id":"` + testToolID + `","name":"issue_create","source":"nodmix"}]`), nil
}

func (f *fakeBridge) Describe(_ context.Context, id string) (json.RawMessage, error) {
	f.describes.Add(1)
	if id != testToolID {
		return nil, fmt.Errorf("Unknown tool id: %s.", id)
	}
	return json.RawMessage(`{"id":"` + testToolID + `","name":"issue_create","input":{"repository":"string","title":"string"}}`), nil
}

func (f *fakeBridge) Call(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
	f.calls.Add(1)
	f.mu.Lock()
	f.lastArgs = string(args)
	f.mu.Unlock()
	if f.onCall != nil {
		return f.onCall(ctx, id, args)
	}
	if id != testToolID {
		return nil, fmt.Errorf("Unknown tool id: %s.", id)
	}
	return json.RawMessage(`{"name":"issue_create","input":` + string(args) + `}`), nil
}

// testLimits keep failing cases fast; the race detector slows the child several times over.
func testLimits() Limits {
	return Limits{Timeout: 2 * time.Second, MemoryBytes: 64 << 20}
}

// slack is what a failing run may take beyond its deadline: kill, reap, and a slow machine.
const slack = 10 * time.Second

// newTestPool returns a pool of real children (this test binary) that is closed at cleanup,
// where the test also checks that no goroutine outlives it.
func newTestPool(t testing.TB, warm int, extra ...string) *Pool {
	t.Helper()
	before := runtime.NumGoroutine()
	p, err := NewPool(Options{Command: append([]string{os.Args[0], ChildArg}, extra...), Warm: warm})
	if err != nil {
		t.Fatalf("NewPool: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		checkGoroutines(t, before)
	})
	return p
}

func checkGoroutines(t testing.TB, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("goroutines: %d before, %d after Close\n%s", before, n, buf)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// codeError asserts err is a *CodeError and returns it.
func codeError(t *testing.T, err error) *CodeError {
	t.Helper()
	var ce *CodeError
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v (%T), want *CodeError", err, err)
	}
	return ce
}

// mustRun runs code that must succeed and returns its result.
func mustRun(t *testing.T, p *Pool, code string, b Bridge) *Result {
	t.Helper()
	res, err := p.Run(context.Background(), code, b, testLimits())
	if err != nil {
		t.Fatalf("Run(%q): %v", code, err)
	}
	return res
}
