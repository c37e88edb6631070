package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nodmix/nodmix/internal/plugins/tavily"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
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
			var apiKey string
			if !nonInteractive {
				in := bufio.NewReader(g.env.Stdin)
				out := c.OutOrStdout()
				if provider == "" {
					p, err := prompt(in, out, "Web search provider [tavily]: ")
					if err != nil {
						return err
					}
					provider = p
				}
				if provider == "" {
					provider = "tavily"
				}
				if keyEnv == "" {
					k, err := promptSecret(g.env.Stdin, in, out, "Tavily API key (leave empty to use TAVILY_API_KEY from the environment): ")
					if err != nil {
						return err
					}
					apiKey = k
				}
			} else if provider == "" {
				return usagef("configure: --provider is required with --non-interactive")
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

func prompt(in *bufio.Reader, out io.Writer, q string) (string, error) {
	fmt.Fprint(out, q)
	line, err := in.ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	return strings.TrimSpace(line), nil
}

// promptSecret reads a line without echoing it when stdin is a terminal.
func promptSecret(stdin io.Reader, in *bufio.Reader, out io.Writer, q string) (string, error) {
	if f, ok := stdin.(*os.File); ok {
		fd := int(f.Fd())
		if old, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
			noEcho := *old
			noEcho.Lflag &^= unix.ECHO
			if err := unix.IoctlSetTermios(fd, unix.TCSETS, &noEcho); err == nil {
				defer func() {
					_ = unix.IoctlSetTermios(fd, unix.TCSETS, old)
					fmt.Fprintln(out)
				}()
			}
		}
	}
	return prompt(in, out, q)
}
