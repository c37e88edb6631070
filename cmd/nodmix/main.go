// Command nodmix is a self-hosted agent gateway: one catalog of tools, served to LLM agents through
// a CLI, an MCP server and an HTTP gateway.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/nodmix/nodmix/internal/cli"
	"github.com/nodmix/nodmix/internal/sandbox"
)

func main() {
	// The code-mode sandbox re-executes this binary as its child process.
	if len(os.Args) > 1 && os.Args[1] == sandbox.ChildArg {
		os.Exit(sandbox.ChildMain(context.Background(), os.Stdin, os.Stdout, os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, cli.Env{
		Args:   os.Args[1:],
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.Getenv,
	})
	stop()
	os.Exit(code)
}
