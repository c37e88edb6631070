// Command nodmix is a self-hosted agent gateway: one catalog of tools, served to LLM agents through
// a CLI, an MCP server and an HTTP gateway.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/nodmix/nodmix/internal/cli"
	"github.com/nodmix/nodmix/internal/sandbox"
)

func main() {
	harden()
	// The code-mode sandbox re-executes this binary as its child process.
	if len(os.Args) > 1 && os.Args[1] == sandbox.ChildArg {
		os.Exit(sandbox.ChildMain(context.Background(), os.Stdin, os.Stdout, os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(os.Stderr, func() int {
		return cli.Execute(ctx, cli.Env{
			Args:   os.Args[1:],
			Stdin:  os.Stdin,
			Stdout: os.Stdout,
			Stderr: os.Stderr,
			Getenv: os.Getenv,
			Batch:  batchGC,
		})
	})
	stop()
	os.Exit(code)
}

// batchHeap is the memory a batch command grows to before the garbage collector runs.
const batchHeap = 512 << 20

// batchGC lets a batch command (a catalog search, say) run without garbage collection until
// its memory reaches batchHeap. Such a process lives for tens of milliseconds and allocates a few
// tens of megabytes it mostly keeps to the end: at 10,000 tools the collector took a fifth of
// `tools search --catalog` and freed nothing it could reuse. Past batchHeap the collector works
// as usual against that limit. GOGC or GOMEMLIMIT set by the user win.
func batchGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(batchHeap)
}

// run returns what execute returns. A panic that escapes it (a bug: nodmix never panics on what a
// user or a provider sends) becomes one line on stderr, naming where it happened, and exit code 1
// instead of a goroutine dump. Panics in other goroutines cannot be caught here and still crash.
func run(stderr io.Writer, execute func() int) (code int) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		msg := fmt.Sprint(r)
		if at := panicSite(); at != "" {
			msg += " (at " + at + ")"
		}
		fmt.Fprintf(stderr, "nodmix: internal error: %s; please report it\n", strings.Join(strings.Fields(msg), " "))
		code = cli.ExitFailure
	}()
	return execute()
}

// panicSite is the function and line that panicked: the first frame below the runtime's own on
// the panicking goroutine's stack, which is still in place while a deferred recover runs.
func panicSite() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs) // skip Callers, panicSite and the deferred function
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function != "" && !strings.HasPrefix(f.Function, "runtime.") {
			fn := f.Function[strings.LastIndexByte(f.Function, '/')+1:]
			file := f.File[strings.LastIndexByte(f.File, '/')+1:]
			return fmt.Sprintf("%s %s:%d", fn, file, f.Line)
		}
		if !more {
			return ""
		}
	}
}
