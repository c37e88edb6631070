package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/exposure"
	"github.com/nodmix/nodmix/internal/gateway"
	"github.com/nodmix/nodmix/internal/mcphub"
	"github.com/nodmix/nodmix/internal/mcpserve"
	"github.com/spf13/cobra"
)

// modeFlag parses --mode; empty keeps what the config resolves to.
func modeFlag(s string) (exposure.Mode, error) {
	if s == "" {
		return "", nil
	}
	m, err := exposure.ParseMode(s)
	if err != nil {
		return "", usageError{err}
	}
	return m, nil
}

// openServing assembles nodmix for a long-running face: persistent state, downstream servers,
// and the exposure mode of --mode (or the config's).
func (g *globals) openServing(c *cobra.Command, mode string) (*app.App, error) {
	m, err := modeFlag(mode)
	if err != nil {
		return nil, err
	}
	return app.New(c.Context(), app.Options{Getenv: g.env.Getenv, Log: g.logger(), Persistent: true, ConnectMCP: true, Mode: m})
}

// note tells the user of a one-shot command, on stderr, what holds it up.
func (g *globals) note(line string) { fmt.Fprintln(g.env.Stderr, line) }

// mcpServer builds nodmix's MCP server over the app's exposure engine. A non-empty sessionID is
// the id of the stdio session (a stable id keeps discovery selections across client restarts).
func mcpServer(a *app.App, sessionID string) *mcpserve.Server {
	opts := mcpserve.Options{Name: "nodmix", Version: Version, Log: a.Log, SessionID: sessionID}
	if a.Hub != nil {
		opts.Prompts = a.Hub
		opts.Resources = a.Hub
	}
	return mcpserve.New(a.Sessions(), opts)
}

func newMCPCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "mcp", Short: "nodmix as an MCP server, and its downstream MCP servers"}
	var mode, sess string
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve the catalog over MCP on stdin/stdout",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			a, err := g.openServing(c, mode)
			if err != nil {
				return err
			}
			defer a.Close()
			srv := mcpServer(a, sess)
			defer srv.Close()
			return srv.ServeStdio(c.Context(), g.env.Stdin, g.env.Stdout)
		},
	}
	serve.Flags().StringVar(&mode, "mode", "", "exposure mode: direct, discovery, toolsearch-tools or toolsearch-code (default: from config)")
	serve.Flags().StringVar(&sess, "session", "", "session id for this connection (default: a new one each start)")

	var asJSON bool
	servers := &cobra.Command{
		Use:   "servers",
		Short: "Show the downstream MCP servers: transport, state, tool count, last error",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			a, err := app.New(c.Context(), app.Options{Getenv: g.env.Getenv, Log: g.logger(), ConnectMCP: true})
			if err != nil {
				return err
			}
			defer a.Close()
			a.AwaitServers(c.Context(), g.note)
			var st []mcphub.ServerStatus
			if a.Hub != nil {
				st = a.Hub.Status()
			}
			if st == nil {
				st = []mcphub.ServerStatus{}
			}
			if asJSON {
				return writeJSON(c.OutOrStdout(), st)
			}
			if len(st) == 0 {
				fmt.Fprintln(c.OutOrStdout(), "No MCP servers are configured (add them under mcp.servers).")
				return nil
			}
			w := tabwriter.NewWriter(c.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tTRANSPORT\tSTATE\tTOOLS\tLAST ERROR")
			for _, s := range st {
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", s.Name, s.Transport, s.State, s.Tools, truncate(sanitize(s.LastError), 80))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			// A server that died usually said why on stderr.
			for _, s := range st {
				if len(s.Stderr) > 0 {
					fmt.Fprintf(c.OutOrStdout(), "\n%s: last stderr lines\n", s.Name)
					for _, l := range s.Stderr {
						fmt.Fprintf(c.OutOrStdout(), "  %s\n", sanitize(l))
					}
				}
			}
			return nil
		},
	}
	servers.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(serve, servers)
	return cmd
}

func newGatewayCmd(g *globals) *cobra.Command {
	var listen, mode string
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "Run the HTTP gateway: MCP (streamable HTTP) at /mcp, the agent API at /v1, health at /healthz",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			a, err := g.openServing(c, mode)
			if err != nil {
				return err
			}
			defer a.Close()
			if listen == "" {
				listen = a.Config.Gateway.Listen
			}
			token, err := a.GatewayToken()
			if err != nil {
				return err
			}
			if err := gateway.CheckListen(listen, token); err != nil {
				return fmt.Errorf("%w (set gateway.auth.token)", err)
			}
			srv := mcpServer(a, "")
			defer srv.Close()
			h := gateway.WithAPI(gateway.NewHandler(srv.Handler(), nil), &gateway.API{Agent: a, Log: a.Log})
			fmt.Fprintf(g.env.Stderr, "nodmix gateway: listening on http://%s (MCP at /mcp, OpenAI-compatible API at /v1, mode %s, %d tools)\n",
				strings.TrimPrefix(listen, "http://"), a.Engine.Mode(), a.Engine.Allowed().Len())
			return gateway.ListenAndServe(c.Context(), listen, token, h)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to listen on (default: gateway.listen, 127.0.0.1:8787)")
	cmd.Flags().StringVar(&mode, "mode", "", "exposure mode (default: from config)")
	return cmd
}
