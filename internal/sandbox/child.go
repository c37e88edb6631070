package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// maxChildLine bounds one message from the host; bridge results are the large ones.
const maxChildLine = 64 << 20

// ChildMain is the whole life of a sandbox child process: cmd/nodmix calls it when os.Args[1]
// is [ChildArg] and exits with its return value. It assumes it owns the process — it lowers
// resource limits and the Go memory limit — so it must not run inside a process that does
// anything else. It serves exactly one run: it builds a locked-down runtime, says hello on out,
// reads the run from in, and returns after writing the result. Diagnostics go to errOut, whose
// tail the parent shows if the child dies. Cancelling ctx interrupts running code.
func ChildMain(ctx context.Context, in io.Reader, out, errOut io.Writer) int {
	hardenProcess()
	// A child started for a run that is waiting skips the warm-up: it would only delay the run.
	return serveChild(ctx, in, out, errOut, applyRunLimits, os.Getenv(coldEnvKey) == "")
}

// coldEnvKey is set in the environment of a child started for a waiting run.
const coldEnvKey = "NODMIX_SANDBOX_COLD"

// serveChild is ChildMain without the process-wide hardening, so tests can drive the protocol
// in-process. setLimits, if non-nil, applies process-wide limits once the run's are known. A
// warm child warms up after its hello, while it waits for a run, so that a start (the pool's
// first child, which start-up waits for) does not wait for the warm-up too.
func serveChild(ctx context.Context, in io.Reader, out, errOut io.Writer, setLimits func(wireLimits, processBase), warm bool) int {
	w := &childOut{w: bufio.NewWriterSize(out, 32<<10)}
	rt, err := newJSRuntime()
	if err != nil {
		fmt.Fprintln(errOut, err)
		return 1
	}
	// The hello is written ready-made: encoding it would build encoding/json's encoder of the
	// protocol's messages first, which prepare does once the parent already knows the child.
	if _, err := w.w.WriteString(helloLine); err != nil {
		fmt.Fprintf(errOut, "sandbox: say hello: %v\n", err)
		return 1
	}
	if err := w.flush(); err != nil {
		fmt.Fprintf(errOut, "sandbox: say hello: %v\n", err)
		return 1
	}
	if warm {
		warmUp()
	}
	// A warm child prepares while it is idle; a cold one, while its run is on the way.
	base := prepare()
	r := bufio.NewReaderSize(in, 64<<10)
	line, err := readLine(r, maxChildLine)
	if errors.Is(err, io.EOF) {
		// A warm child the parent no longer needs.
		return 0
	}
	if err != nil {
		fmt.Fprintf(errOut, "sandbox: read run: %v\n", err)
		return 1
	}
	m, err := decodeMessage(line)
	if err == nil && m.Type != msgRun {
		err = fmt.Errorf("got %q message before run", m.Type)
	}
	if err != nil {
		fmt.Fprintf(errOut, "sandbox: %v\n", err)
		return 1
	}
	if setLimits != nil {
		setLimits(*m.Limits, base)
	}
	rt.lim, rt.out = *m.Limits, w

	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		rt.watch(ctx, rt.lim.MemoryBytes, stop)
	}()
	res := rt.execute(m.Code, r)
	close(stop)
	<-watched

	if !res.OK {
		// Thrown text is bounded like a result: `throw new Error("E".repeat(7e6))` must come
		// back as an error the model can read, not as a message too large for the protocol.
		if res.Error == "" {
			res.Error = msgEmptyThrow
		}
		res.Error = boundText(res.Error, rt.lim.MaxResultBytes)
	}
	if res.Kind == wireInternal {
		fmt.Fprintln(errOut, res.Error)
	}
	w.send(res)
	if err := w.flush(); err != nil {
		fmt.Fprintf(errOut, "sandbox: send result: %v\n", err)
		return 1
	}
	return 0
}

// childOut writes protocol messages. Each is flushed at once: a bridge call must reach the host
// even if the code then spins, and logs must survive a kill. The first write error sticks and
// later sends are no-ops, because a child whose parent stopped listening has nobody to tell.
type childOut struct {
	w   *bufio.Writer
	err error
}

func (o *childOut) send(m message) {
	if o.err != nil {
		return
	}
	b, err := encodeMessage(m)
	if err != nil && m.Type == msgResult {
		// A result the wire cannot carry still ends the run with a result rather than with the
		// child dying on an encoder's message.
		b, err = encodeMessage(failureMessage(failure{wireInternal, "tool_search_code internal error: encode result: " + err.Error()}))
	}
	if err != nil {
		o.err = err
		return
	}
	if _, o.err = o.w.Write(b); o.err == nil {
		o.err = o.w.Flush()
	}
}

func (o *childOut) flush() error {
	if o.err != nil {
		return o.err
	}
	o.err = o.w.Flush()
	return o.err
}

// applyRunLimits sets the process-wide limits of a run: the Go memory limit, so the collector
// works harder before the watchdog has to fail the run, and on Linux an address-space cap that
// turns a single huge allocation, which the watchdog cannot interrupt, into a prompt crash.
func applyRunLimits(l wireLimits, base processBase) {
	debug.SetMemoryLimit(l.MemoryBytes)
	limitAddressSpace(base, l.MemoryBytes)
}

// processBase is what the child measures of itself before a run, for the run's limits.
type processBase struct {
	vmKiB uint64 // the mapped address space (VmSize); 0 when unknown
}

// prepare does the work of a run that does not depend on the run: it builds encoding/json's
// encoder and decoder of the protocol's messages and measures the address space the run's cap
// is relative to (reading /proc/self/status takes about 0.1 ms). In a cold child it runs while
// the parent answers the hello; done in line, the encoder delayed the hello and the rest was
// paid between the run's first message and its result.
func prepare() processBase {
	_, _ = encodeMessage(message{Type: msgResult, OK: true, Value: json.RawMessage("null"), Limits: &wireLimits{}})
	_, _ = decodeMessage([]byte(`{"type":"run","code":"0","limits":{"memoryBytes":1,"maxLogBytes":1,"maxResultBytes":1,"maxBridgeCalls":1}}`))
	return processBase{vmKiB: mappedKiB()}
}

// childProcs is a child's GOMAXPROCS: one P runs the VM; the other serves the watchdog and the
// collector. childProcsEnv passes it in the child's environment.
const (
	childProcs    = 2
	childProcsEnv = "GOMAXPROCS=2"
)

// hardenProcess applies what holds for any run: no core dumps, no file growth, a bounded Go
// stack (deep native recursion crashes early instead of eating memory), childProcs Ps (already
// so when the pool started the child, which sets childProcsEnv).
func hardenProcess() {
	setProcessRlimits()
	debug.SetMaxStack(128 << 20)
	runtime.GOMAXPROCS(childProcs)
}

// warmUpCode exercises what a typical run touches: compiling an async body, promises, JSON.
const warmUpCode = `const xs = [1, 2, 3].map(x => ({x, s: String(x)}));
await Promise.all(xs.map(async x => x));
return JSON.parse(JSON.stringify({xs, ok: true}));`

// warmUp runs representative code once in a throwaway runtime while the child is still idle,
// so the first real run does not pay for faulting in the compiler and interpreter. The run
// itself gets its own runtime, built before this one; nothing of this one survives.
func warmUp() {
	rt, err := newJSRuntime()
	if err != nil {
		return
	}
	rt.lim = wireLimits{MemoryBytes: 1 << 30, MaxLogBytes: 1 << 10, MaxResultBytes: 1 << 10, MaxBridgeCalls: 1}
	rt.out = &childOut{w: bufio.NewWriter(io.Discard)}
	_ = rt.execute(warmUpCode, bufio.NewReader(strings.NewReader("")))
}
