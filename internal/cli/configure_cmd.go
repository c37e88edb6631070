package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/plugins/tavily"
	"github.com/spf13/cobra"
)

func newConfigureCmd(g *globals) *cobra.Command {
	var section, provider, keyEnv string
	var nonInteractive bool
	cmd := &cobra.Command{
		Use:   "configure --section web",
		Short: "Set up a section of the configuration (web: the web_search provider and its key)",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if section != "web" {
				return usagef("configure: --section: must be web")
			}
			if nonInteractive && provider == "" {
				return usagef("configure: --provider is required with --non-interactive")
			}
			var apiKey string
			if !nonInteractive {
				in := bufio.NewReader(g.env.Stdin)
				out := c.OutOrStdout()
				if provider == "" {
					p, err := prompt(c.Context(), in, out, "Web search provider [tavily]: ")
					if err != nil {
						return err
					}
					provider = p
				}
				if provider == "" {
					provider = "tavily"
				}
				if keyEnv == "" {
					k, err := promptSecret(c.Context(), g.env.Stdin, in, out, g.keyPrompt())
					if err != nil {
						return err
					}
					apiKey = k
				}
			}
			edits, err := tavily.ConfigureEdits(provider, keyEnv, apiKey)
			if err != nil {
				return usageError{err}
			}
			// The same checks as `config set`: an edit that would break the plugin's section
			// (as `config validate` reports it) is refused and the file left as it was.
			f, err := g.openConfig(c.Context())
			if err != nil {
				return err
			}
			for _, e := range edits {
				if err := f.Set(e.Path, []byte(e.Value)); err != nil {
					return err
				}
			}
			if err := f.save(c.Context(), g.env.lookupEnv); err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "Web search provider set to %s; plugin %s enabled (%s).\n", strings.ToLower(provider), strings.ToLower(provider), f.Path())
			return nil
		},
	}
	cmd.Flags().StringVar(&section, "section", "", "the section to configure: web")
	cmd.Flags().StringVar(&provider, "provider", "", "web search provider (tavily)")
	cmd.Flags().StringVar(&keyEnv, "api-key-env", "", "read the API key from this environment variable at run time (stored as a SecretRef)")
	cmd.Flags().BoolVar(&nonInteractive, "non-interactive", false, "do not prompt")
	return cmd
}

// keyPrompt asks for the Tavily key saying what an empty answer does: the key the file holds
// stays (and wins over TAVILY_API_KEY); without one, the variable is used. The file is read
// again for the edit, after the answers, so that it is the file as it is then that is edited.
func (g *globals) keyPrompt() string {
	if path, err := config.Path(g.env.Getenv); err == nil {
		if f, _ := config.Load(path); f != nil {
			if _, err := f.Get(tavily.PathAPIKey); err == nil {
				return "Tavily API key (leave empty to keep the key configured now): "
			}
		}
	}
	return "Tavily API key (leave empty to use TAVILY_API_KEY from the environment): "
}

// prompt asks q and reads a line. An interrupt (ctx ending) ends the prompt at once: what is
// typed after it is no answer. The read cannot be interrupted, so it runs apart from ctx and
// ends when stdin gives a line or closes, at the latest when the process exits.
func prompt(ctx context.Context, in *bufio.Reader, out io.Writer, q string) (string, error) {
	fmt.Fprint(out, q)
	type answer struct {
		line string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		line, err := in.ReadString('\n')
		got <- answer{line, err}
	}()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case a := <-got:
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if a.err != nil && a.err != io.EOF {
			return "", a.err
		}
		return strings.TrimSpace(a.line), nil
	}
}

// promptSecret reads a line without echoing it when stdin is a terminal.
func promptSecret(ctx context.Context, stdin io.Reader, in *bufio.Reader, out io.Writer, q string) (string, error) {
	if f, ok := stdin.(*os.File); ok {
		if restore, ok := noEcho(int(f.Fd())); ok {
			defer func() {
				restore()
				fmt.Fprintln(out)
			}()
		}
	}
	return prompt(ctx, in, out, q)
}
