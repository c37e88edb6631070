// Package cli is nodmix's command line: cobra commands that assemble the app and print for people
// (or, with --json, in the stable formats the README documents). It is the only package that prints.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/spf13/cobra"
)

// Version is set at build time with -ldflags "-X github.com/nodmix/nodmix/internal/cli.Version=...".
var Version = "0.1.0-dev"

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Env is what the command line runs with; main passes the process's, tests their own.
type Env struct {
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Batch, when not nil, is called once before a batch command runs: one that reads its input,
	// answers and exits (a catalog search, a listing, an evaluation), as opposed to a server, an
	// agent turn or a tool call, which may run for long. main tunes the garbage collector with it.
	Batch func()
}

// batchAnnotation marks the commands Env.Batch is called for.
const batchAnnotation = "nodmix.batch"

// batch marks c as a batch command and returns it.
func batch(c *cobra.Command) *cobra.Command {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[batchAnnotation] = "true"
	return c
}

func (e Env) lookupEnv(k string) (string, bool) {
	v := e.Getenv(k)
	return v, v != ""
}

// usageError marks a mistake in how a command was called (exit code 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// Execute runs the command line and returns the exit code.
func Execute(ctx context.Context, env Env) int {
	root := newRoot(env)
	root.SetArgs(env.Args)
	root.SetIn(env.Stdin)
	out := &outputWriter{w: env.Stdout}
	root.SetOut(out)
	root.SetErr(env.Stderr)
	if env.Batch != nil {
		if c, _, err := root.Find(env.Args); err == nil && c.Annotations[batchAnnotation] != "" {
			env.Batch()
		}
	}
	err := root.ExecuteContext(ctx)
	if err == nil {
		err = out.Err()
	}
	if err == nil {
		return ExitOK
	}
	// An error may quote what a file or a server said (a config key, a tool's message): its
	// control characters are not let act on the terminal.
	fmt.Fprintf(env.Stderr, "nodmix: %s\n", sanitizeLines(err.Error()))
	var u usageError
	if errors.As(err, &u) {
		return ExitUsage
	}
	return ExitFailure
}

// outputWriter is the commands' stdout. It keeps the first write error, which fails a command
// that otherwise succeeded: output lost to a full disk is not a success. Later writes return
// that error without trying. Agent turns write from their observer, hence the lock.
type outputWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (o *outputWriter) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = fmt.Errorf("write output: %w", err)
		return n, o.err
	}
	return n, nil
}

// Err returns the first write error, or nil.
func (o *outputWriter) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

type globals struct {
	env     Env
	verbose bool
}

func (g *globals) logger() *slog.Logger {
	if !g.verbose {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(g.env.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func newRoot(env Env) *cobra.Command {
	g := &globals{env: env}
	root := &cobra.Command{
		Use:           "nodmix",
		Short:         "A self-hosted agent gateway: one catalog of tools for every LLM agent",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "log to stderr")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(
		&cobra.Command{
			Use:   "version",
			Short: "Print the version",
			Args:  noArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				fmt.Fprintf(c.OutOrStdout(), "nodmix %s\n", Version)
				return nil
			},
		},
		newConfigCmd(g),
		newPluginsCmd(g),
		newConfigureCmd(g),
		newToolsCmd(g),
		newSearchCmd(g),
		newMCPCmd(g),
		newGatewayCmd(g),
		newTokenjuiceCmd(g),
		newAgentCmd(g),
		newSessionsCmd(g),
	)
	groups(root)
	return root
}

// groups makes every command that only holds subcommands refuse an unknown one as a usage error
// (exit 2); cobra would print help and succeed, or fail with a plain error.
func groups(c *cobra.Command) {
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for %q (see %s --help)", args[0], c.CommandPath(), c.CommandPath())
			}
			return nil
		}
		c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	}
	for _, sub := range c.Commands() {
		groups(sub)
	}
}

// noArgs and exactArgs return usage errors (exit 2) rather than cobra's plain errors.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s: unexpected argument %q", c.CommandPath(), args[0])
	}
	return nil
}

func exactArgs(n int, names ...string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s: needs %d argument(s): %v", c.CommandPath(), n, names)
		}
		return nil
	}
}
