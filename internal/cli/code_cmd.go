package cli

import (
	"os"

	"github.com/nodmix/nodmix/internal/app"
	"github.com/spf13/cobra"
)

func newToolsCodeCmd(g *globals) *cobra.Command {
	var file, code, sess string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "code (--file F | -e CODE)",
		Short: "Run a tool_search_code snippet against the live catalog in the sandbox",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if (file == "") == (code == "") {
				return usagef("tools code: give exactly one of --file and -e")
			}
			if err := sessionFlag(sess); err != nil {
				return err
			}
			if file != "" {
				b, err := os.ReadFile(file)
				if err != nil {
					return err
				}
				code = string(b)
			}
			a, err := app.New(c.Context(), app.Options{Getenv: g.env.Getenv, Log: g.logger(), Persistent: true, ConnectMCP: true, Code: true, Version: Version})
			if err != nil {
				return err
			}
			defer a.Close()
			a.AwaitServers(c.Context(), g.note)
			a.SetAsker(g.terminalAsker())
			if sess == "" {
				sess = "cli"
			}
			rt, err := a.ToolSearch(sess)
			if err != nil {
				return err
			}
			res, err := rt.RunCode(c.Context(), code)
			if err != nil {
				return err
			}
			return printResult(c.OutOrStdout(), res, asJSON)
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "a file with the code (the body of an async function)")
	cmd.Flags().StringVarP(&code, "eval", "e", "", "the code")
	cmd.Flags().StringVar(&sess, "session", "", "session id (default \"cli\")")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the MCP-shaped result as JSON")
	return cmd
}
