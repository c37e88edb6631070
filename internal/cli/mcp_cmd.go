package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"text/tabwriter"
	"time"

	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/exposure"
	"github.com/nodmix/nodmix/internal/gateway"
	"github.com/nodmix/nodmix/internal/mcphub"
	"github.com/nodmix/nodmix/internal/mcpserve"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/webchat"
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
	return app.New(c.Context(), app.Options{Getenv: g.env.Getenv, Log: g.logger(), Persistent: true, ConnectMCP: true, Mode: m, IndexAhead: true, Version: Version})
}

// guardStderr sends the logs and notes of a long-running face through a second descriptor of
// stderr (mcpserve.UnbrokenOutput): a reader of stderr that goes away makes them write errors
// instead of ending the server at its next log line. Call it before the app is made, and the
// returned func after everything that logs has closed.
func (g *globals) guardStderr() (restore func()) {
	f := mcpserve.UnbrokenOutput(g.env.Stderr)
	if f == nil {
		return func() {}
	}
	prev := g.env.Stderr
	g.env.Stderr = f
	return func() {
		g.env.Stderr = prev
		_ = f.Close()
	}
}

// note tells the user of a one-shot command, on stderr, what holds it up.
func (g *globals) note(line string) { fmt.Fprintln(g.env.Stderr, line) }

// mcpServer builds nodmix's MCP server over the app's exposure engine. A non-empty sessionID is
// the id of the stdio session (a stable id keeps discovery selections across client restarts).
func mcpServer(a *app.App, sessionID string) *mcpserve.Server {
	opts := mcpserve.Options{Name: "nodmix", Version: Version, Log: a.Log, SessionID: sessionID, MaxSessions: a.Config.Gateway.MaxSessions}
	if a.Hub != nil {
		opts.Prompts = a.Hub
		opts.Resources = a.Hub
	}
	return mcpserve.New(a.Sessions(), opts)
}

// serverStatus is what `nodmix mcp servers` reports, never nil.
func serverStatus(a *app.App) []mcphub.ServerStatus {
	var st []mcphub.ServerStatus
	if a.Hub != nil {
		st = a.Hub.Status()
	}
	if st == nil {
		st = []mcphub.ServerStatus{}
	}
	return st
}

func newMCPCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "mcp", Short: "nodmix as an MCP server, and its downstream MCP servers"}
	var mode, sess string
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve the catalog over MCP on stdin/stdout",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			defer g.guardStderr()()
			a, err := g.openServing(c, mode)
			if err != nil {
				return err
			}
			defer a.Close()
			srv := mcpServer(a, sess)
			defer srv.Close()
			// On SIGTERM/SIGINT the context ends: ServeStdio returns without waiting for stdin,
			// and the deferred closes end the calls in progress and the downstream servers.
			return srv.ServeStdio(c.Context(), g.env.Stdin, g.env.Stdout)
		},
	}
	serve.Flags().StringVar(&mode, "mode", "", "exposure mode: direct, discovery, toolsearch-tools or toolsearch-code (default: from config)")
	serve.Flags().StringVar(&sess, "session", "", "session id for this connection (default: a new one each start)")

	var asJSON bool
	servers := &cobra.Command{
		Use:   "servers",
		Short: "Show the downstream MCP servers: transport, state, tool count, last error (a running gateway's, when it answers)",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			st, from, err := g.gatewayServers(c.Context())
			if err != nil {
				return err
			}
			if st == nil {
				a, err := app.New(c.Context(), app.Options{Getenv: g.env.Getenv, Log: g.logger(), ConnectMCP: true, Version: Version})
				if err != nil {
					return err
				}
				defer a.Close()
				a.AwaitServers(c.Context(), g.note)
				st = serverStatus(a)
			}
			if asJSON {
				return writeJSON(c.OutOrStdout(), st)
			}
			if from != "" {
				fmt.Fprintf(c.OutOrStdout(), "The servers of the gateway at %s:\n", from)
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
			// What a crashed server said last is usually why (a missing module, a bad key).
			for _, s := range st {
				if len(s.Stderr) == 0 {
					continue
				}
				fmt.Fprintf(c.OutOrStdout(), "\n%s: last stderr lines\n", s.Name)
				for _, l := range s.Stderr {
					fmt.Fprintf(c.OutOrStdout(), "  %s\n", truncate(sanitize(l), 200))
				}
			}
			return nil
		},
	}
	servers.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(serve, servers)
	return cmd
}

// gatewayAskTimeout bounds asking a gateway for its servers: loopback answers at once or
// refuses at once; anything slower is not a nodmix gateway worth waiting for.
const gatewayAskTimeout = 2 * time.Second

// gatewayServers asks the gateway of the config (gateway.listen) for its servers' status, so that
// `nodmix mcp servers` shows the servers that run rather than starting copies of its own. It
// returns nil, and no error, when no gateway answers there; an error only for a config that does
// not load. from is the gateway's URL.
func (g *globals) gatewayServers(ctx context.Context) (st []mcphub.ServerStatus, from string, err error) {
	// The whole config is checked as for every command; nothing is started.
	a, err := app.New(ctx, app.Options{Getenv: g.env.Getenv, Log: g.logger()})
	if err != nil {
		return nil, "", err
	}
	defer a.Close()
	log := a.Log.With("listen", a.Config.Gateway.Listen)
	token, err := a.GatewayToken()
	if err != nil {
		log.Debug("not asking the gateway: its token does not resolve", "err", err)
		return nil, "", nil
	}
	base := "http://" + dialAddr(a.Config.Gateway.Listen)
	ctx, cancel := context.WithTimeout(ctx, gatewayAskTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/mcp/servers", nil)
	if err != nil {
		return nil, "", nil
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Transport: &http.Transport{}} // no proxy: the gateway is our own
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		log.Debug("no gateway answers", "err", err)
		return nil, "", nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		log.Debug("the gateway did not give its servers", "status", resp.StatusCode)
		return nil, "", nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&st); err != nil || st == nil {
		log.Debug("not a nodmix gateway's answer", "err", err)
		return nil, "", nil
	}
	return st, base, nil
}

// dialAddr is the address to reach a listen address at: a wildcard host is reached on loopback.
func dialAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	switch ip := net.ParseIP(host); {
	case host == "":
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified() && ip.To4() != nil:
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified():
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}

func newGatewayCmd(g *globals) *cobra.Command {
	var listen, mode string
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "Run the HTTP gateway: MCP (streamable HTTP) at /mcp, the agent API at /v1, health at /healthz",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			defer g.guardStderr()()
			// The port is taken before anything starts: a busy port is one error, at once.
			ln, token, err := g.listenGateway(listen)
			if err != nil {
				return err
			}
			a, err := g.openServing(c, mode)
			if err != nil {
				_ = ln.Close()
				return err
			}
			defer a.Close()
			srv := mcpServer(a, "")
			defer srv.Close()
			routes := gateway.Routes{
				MCP:     srv.Handler(),
				Health:  health(a),
				Servers: func(context.Context) any { return serverStatus(a) },
			}
			h := webchat.Mount(gateway.WithAPI(gateway.NewHandler(routes), &gateway.API{Agent: a, Log: a.Log}))
			fmt.Fprintf(g.env.Stderr, "nodmix gateway: listening on http://%s (chat page at /, OpenAI-compatible API at /v1, MCP at /mcp; mode %s, %d tools)\n",
				ln.Addr(), a.Engine.Mode(), a.Engine.Allowed().Len())
			return gateway.ServeListener(c.Context(), ln, token, h, gateway.Limits{})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to listen on (default: gateway.listen, 127.0.0.1:8787)")
	cmd.Flags().StringVar(&mode, "mode", "", "exposure mode (default: from config)")
	return cmd
}

// listenGateway takes the gateway's port: --listen, else gateway.listen. It reads the config
// itself, before the app is assembled, and returns the resolved token.
func (g *globals) listenGateway(flag string) (net.Listener, string, error) {
	path, err := config.Path(g.env.Getenv)
	if err != nil {
		return nil, "", err
	}
	file, err := config.Load(path)
	if err != nil {
		return nil, "", err
	}
	cfg := file.Config()
	addr := flag
	if addr == "" {
		addr = cfg.Gateway.Listen
	}
	var token string
	if cfg.Gateway.Auth.Token.IsSet() {
		if token, err = cfg.Gateway.Auth.Token.Resolve(g.env.lookupEnv); err != nil {
			return nil, "", err // names gateway.auth.token
		}
	}
	ln, err := gateway.Listen(addr, token)
	var addrErr *net.AddrError
	switch {
	case err == nil:
		return ln, token, nil
	case errors.Is(err, gateway.ErrTokenRequired):
		return nil, "", fmt.Errorf("%w: set gateway.auth.token, or listen on loopback (127.0.0.1:8787)", err)
	case errors.As(err, &addrErr) && flag != "":
		return nil, "", usagef("--listen %q: must be host:port (for example 127.0.0.1:8787)", flag)
	}
	return nil, "", err
}

// health reports the downstream servers for /healthz. nodmix cannot serve when its state store
// does not answer; a server that is not ready makes it degraded, one that is disabled does not.
func health(a *app.App) func(context.Context) ([]gateway.ServerHealth, error) {
	return func(ctx context.Context) ([]gateway.ServerHealth, error) {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if _, err := a.Store.Blob(ctx, "nodmix-healthz"); err != nil && !errors.Is(err, session.ErrNotFound) {
			return nil, fmt.Errorf("state store: %w", err)
		}
		var out []gateway.ServerHealth
		for _, s := range serverStatus(a) {
			out = append(out, gateway.ServerHealth{
				Name:      s.Name,
				State:     string(s.State),
				Tools:     s.Tools,
				LastError: s.LastError,
				Up:        s.State == mcphub.StateReady || s.State == mcphub.StateDisabled,
			})
		}
		return out, nil
	}
}
