// Package mcphub connects nodmix to downstream MCP servers (stdio and streamable HTTP), keeps
// them running, and offers their tools, prompts and resources to the catalog and the MCP face.
package mcphub

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nodmix/nodmix/internal/catalog"
)

// ServerConfig is one downstream server, as the app converts it from mcp.servers.<name>. Secret
// references are already resolved: Env and Headers hold real values, which the hub never logs,
// reports or puts in an error; nor what Args carry of secrets (see config.ArgSecrets).
type ServerConfig struct {
	Name    string
	Command string // stdio: the program to run
	Args    []string
	Env     map[string]string // the server's own variables, added to the default set
	Cwd     string
	URL     string // streamable HTTP endpoint
	Headers map[string]string
	Timeout time.Duration // per call; 0 means DefaultCallTimeout
	// ConnectTimeout bounds one connection attempt (start, initialize, first listing) and so how
	// long a call waits for a server that is still connecting; 0 means Options.ConnectTimeout.
	ConnectTimeout time.Duration
	// InheritEnv gives a command server nodmix's whole environment instead of the small default
	// set (HOME, LOGNAME, PATH, SHELL, TERM, USER and the locale) plus Env.
	InheritEnv bool
	Enabled    bool
}

// ErrInvalidConfig is wrapped by every configuration error.
var ErrInvalidConfig = errors.New("invalid mcp server config")

// Validate checks the config. Its errors name the config path and the rule, e.g.
// `mcp.servers.x: one of command or url is required`.
func (c ServerConfig) Validate() error {
	path := "mcp.servers." + c.Name
	switch {
	case c.Name == "":
		return fmt.Errorf("%w: mcp.servers: a server name must not be empty", ErrInvalidConfig)
	case !catalog.ValidServerName(c.Name):
		return fmt.Errorf("%w: %s: %s", ErrInvalidConfig, path, catalog.ServerNameRule)
	case c.Command == "" && c.URL == "":
		return fmt.Errorf("%w: %s: one of command or url is required", ErrInvalidConfig, path)
	case c.Command != "" && c.URL != "":
		return fmt.Errorf("%w: %s: command and url are mutually exclusive", ErrInvalidConfig, path)
	case c.URL != "" && (len(c.Args) > 0 || len(c.Env) > 0 || c.Cwd != ""):
		return fmt.Errorf("%w: %s: args, env and cwd apply to command servers only", ErrInvalidConfig, path)
	case c.Command != "" && len(c.Headers) > 0:
		return fmt.Errorf("%w: %s.headers: headers apply to url servers only", ErrInvalidConfig, path)
	case c.Timeout < 0:
		return fmt.Errorf("%w: %s.timeoutMs: must not be negative", ErrInvalidConfig, path)
	case c.ConnectTimeout < 0:
		return fmt.Errorf("%w: %s.connectTimeoutMs: must not be negative", ErrInvalidConfig, path)
	case c.URL != "" && c.InheritEnv:
		return fmt.Errorf("%w: %s.inheritEnv: applies to command servers only", ErrInvalidConfig, path)
	}
	if c.URL != "" {
		if _, err := parseEndpoint(c.URL); err != nil {
			return fmt.Errorf("%w: %s.url: %v", ErrInvalidConfig, path, err)
		}
	}
	return nil
}

// Transport is "stdio" for command servers and "http" for url servers.
func (c ServerConfig) Transport() string {
	if c.URL != "" {
		return "http"
	}
	return "stdio"
}

// Defaults for the zero values of Options and ServerConfig.
const (
	DefaultCallTimeout    = 60 * time.Second
	DefaultConnectTimeout = 30 * time.Second
	DefaultTerminateGrace = 5 * time.Second
	// A connected server that has been idle (no request of the hub's in flight, nothing
	// answered) for DefaultPingInterval is pinged; one that does not answer within
	// DefaultPingTimeout is taken for hung and restarted. The timeout is long enough for a
	// loaded machine, the interval short enough that a hung server is noticed before most
	// clients' next call.
	DefaultPingInterval = 30 * time.Second
	DefaultPingTimeout  = 10 * time.Second
)

// Backoff paces restarts of a server that died or failed to connect: the delay starts at Initial,
// doubles up to Max, and goes back to Initial only once a connection stayed up for StableAfter, so
// a server that crashes right after every start is not hammered.
type Backoff struct {
	Initial     time.Duration // default 1s
	Max         time.Duration // default 30s
	StableAfter time.Duration // default 60s
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = time.Second
	}
	if b.Max <= 0 {
		b.Max = 30 * time.Second
	}
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	if b.StableAfter <= 0 {
		b.StableAfter = 60 * time.Second
	}
	return b
}

// Options configure a Hub.
type Options struct {
	Servers []ServerConfig
	Log     *slog.Logger // nil: quiet
	// Notify is called, on a hub goroutine and without hub locks held, whenever the result of
	// Tools changes. It is usually the function catalog.Catalog.Add returns; since Add needs the
	// hub, pass a closure over a variable that is set before Start:
	//	var notify func()
	//	h := mcphub.New(mcphub.Options{Notify: func() { notify() }, ...})
	//	notify = cat.Add(h)
	//	h.Start(ctx)
	Notify              func()
	ClientName, Version string // how nodmix introduces itself to servers; default "nodmix", "dev"

	ConnectTimeout time.Duration // deadline of one connection attempt (initialize and first lists)
	TerminateGrace time.Duration // how long a stdio server may take to exit after its stdin closes
	// PingInterval is how long a connected server (stdio or url) may be idle, with no request of
	// the hub's in flight and no answer from it, before the hub pings it: a server that hangs
	// while it still reads its stdin, or a url server that forgot the session, is noticed
	// without a call having to time out first. 0 means DefaultPingInterval; <0 turns pings off.
	PingInterval time.Duration
	// PingTimeout is how long a ping may go unanswered before the server is marked down and
	// restarted; 0 means DefaultPingTimeout.
	PingTimeout time.Duration
	Backoff     Backoff

	// Manifests, if set, keeps each server's last good tool listing between runs: its tools are
	// listed from the start, before it has connected.
	Manifests Manifests
	// Environ is the environment command servers take their default set (or, with InheritEnv,
	// everything) from; nil means os.Environ.
	Environ func() []string

	listingLimit int // maxListingBytes when 0; tests lower it
}
