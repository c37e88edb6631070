package cli

import (
	"fmt"
	"io"

	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/plugins/tokenjuice"
	"github.com/spf13/cobra"
)

// maxCompactInput bounds what `tokenjuice compact` reads from stdin.
const maxCompactInput = 512 << 20

func newTokenjuiceCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "tokenjuice", Short: "Compact noisy command output the way the tokenjuice plugin does"}
	var command string
	var exitCode int
	var stats bool
	compact := &cobra.Command{
		Use:   "compact --command CMD",
		Short: "Compact a command's output: stdin → stdout (the middleware's code path)",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if command == "" {
				return usagef("tokenjuice compact: --command is required")
			}
			data, err := io.ReadAll(io.LimitReader(g.env.Stdin, maxCompactInput+1))
			if err != nil {
				return err
			}
			if len(data) > maxCompactInput {
				return fmt.Errorf("tokenjuice compact: input is larger than %d bytes", maxCompactInput)
			}
			out := tokenjuice.Compact(tokenjuice.Input{Command: command, ExitCode: exitCode, Output: data})
			if _, err := io.WriteString(c.OutOrStdout(), out.Text); err != nil {
				return err
			}
			if stats {
				saved := 0.0
				if out.RawChars > 0 {
					saved = 100 * float64(out.RawChars-out.CompactChars) / float64(out.RawChars)
				}
				rule := out.Rule
				if out.Raw {
					rule += " (left raw: " + out.Reason + ")"
				}
				fmt.Fprintf(g.env.Stderr, "tokenjuice: rule %s; %d → %d bytes, %d → %d chars (%.1f%% saved), ~%d tokens saved\n",
					rule, out.RawBytes, out.CompactBytes, out.RawChars, out.CompactChars, saved, out.RawTokens-out.CompactTokens)
			}
			return nil
		},
	}
	compact.Flags().StringVar(&command, "command", "", "the command that produced the output")
	compact.Flags().IntVar(&exitCode, "exit-code", 0, "its exit code")
	compact.Flags().BoolVar(&stats, "stats", false, "print sizes, the rule and the tokens saved to stderr")

	raw := &cobra.Command{
		Use:   "raw HANDLE",
		Short: "Print the full output behind a compacted result's handle",
		Args:  exactArgs(1, "HANDLE"),
		RunE: func(c *cobra.Command, args []string) error {
			a, err := app.New(c.Context(), app.Options{Getenv: g.env.Getenv, Log: g.logger(), Persistent: true})
			if err != nil {
				return err
			}
			defer a.Close()
			b, err := a.RawOutput(c.Context(), args[0])
			if err != nil {
				return fmt.Errorf("tokenjuice raw %s: %w", args[0], err)
			}
			_, err = c.OutOrStdout().Write(b)
			return err
		},
	}
	cmd.AddCommand(compact, raw)
	return cmd
}
