package app

import (
	"context"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/nodmix/nodmix/internal/builtin/exec"
	"github.com/nodmix/nodmix/internal/builtin/websearch"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/mcphub"
	"github.com/nodmix/nodmix/internal/plugin"
	"github.com/nodmix/nodmix/internal/plugins"
	"github.com/nodmix/nodmix/internal/plugins/tavily"
	"github.com/nodmix/nodmix/internal/plugins/tokenjuice"
	"github.com/nodmix/nodmix/internal/provider"
	"github.com/nodmix/nodmix/internal/session"
)

// webSearchSource is a plugin that can serve web_search.
type webSearchSource interface {
	WebSearchProvider() websearch.Provider
}

// addSources registers the built-ins, the enabled plugins and the MCP hub with the catalog.
func (a *App) addSources(ctx context.Context, opts Options) error {
	cfg := a.Config
	builtins := exec.Tools(exec.Options{
		DefaultTimeout: cfg.Tools.Exec.Timeout,
		MaxTimeout:     cfg.Tools.Exec.MaxTimeout,
		MaxOutputBytes: cfg.Tools.Exec.MaxOutputBytes,
		Log:            a.Log,
		// A model's commands keep the user's environment but not nodmix's keys; tools.exec.env
		// passes one on purpose.
		Withhold: a.withheldEnv(),
		Env:      func() ([]string, error) { return cfg.Tools.Exec.Environ(a.lookupEnv) },
	})
	builtins = append(builtins, websearch.Tool(websearch.Select(a.Config.Tools.Web.Search.Provider, a.webSearchProvider)))
	a.Catalog.Add(catalog.Static(builtins))

	reg, err := plugins.Bundled()
	if err != nil {
		return err
	}
	host := plugin.Host{
		Log:        a.Log,
		LookupEnv:  a.lookupEnv,
		HTTPClient: httpClient(),
		Home:       a.Home,
		Settings: map[string]any{
			"tools.web.search.cacheTtlMinutes": int(cfg.Tools.Web.Search.CacheTTL.Minutes()),
			"tools.web.search.maxResults":      cfg.Tools.Web.Search.MaxResults,
		},
	}
	for _, info := range reg.List() {
		if !PluginEnabled(cfg, info.ID) {
			continue
		}
		f, _ := reg.Lookup(info.ID)
		p, err := plugin.StartWith(ctx, f, cfg.Plugins.Entries[info.ID].Config, host, a.preparePlugin)
		if err != nil {
			return err
		}
		a.Plugins[info.ID] = p
		a.addCloser(p.Close)
		if tp, ok := p.(plugin.ToolProvider); ok {
			a.Catalog.Add(catalog.Static(tp.Tools()))
		}
		if mp, ok := p.(plugin.MiddlewareProvider); ok {
			a.Pipeline.Middleware = append(a.Pipeline.Middleware, mp.Middleware())
		}
	}

	if opts.ConnectMCP && len(cfg.MCP.Servers) > 0 {
		servers, err := hubServers(cfg, a.lookupEnv)
		if err != nil {
			return err
		}
		var notify func()
		hopts := mcphub.Options{
			Servers:    servers,
			Log:        a.Log,
			Notify:     func() { notify() },
			ClientName: "nodmix",
			Version:    opts.Version,
		}
		if a.persistent {
			// Each server's last listing, so that its tools are there before it connects.
			hopts.Manifests = manifestStore{a.Store}
		}
		hub := mcphub.New(hopts)
		notify = a.Catalog.Add(hub)
		hub.Start(ctx)
		a.Hub = hub
		a.addCloser(hub.Close)
	}
	return nil
}

// preparePlugin hands plugins what only the app has: tokenjuice keeps raw outputs in the state
// store when it is persistent, so `nodmix tokenjuice raw HANDLE` finds them from another process.
func (a *App) preparePlugin(p plugin.Plugin) {
	if tj, ok := p.(*tokenjuice.Plugin); ok && a.persistent {
		tj.UseStore(rawStore{a.Store})
	}
}

// rawStore keeps tokenjuice's raw outputs in the session store.
type rawStore struct{ s session.Store }

func (r rawStore) Put(ctx context.Context, sess, handle string, data []byte) error {
	if sess == "" {
		sess = "default" // a raw output is a session's, under retention, never the app's own
	}
	return r.s.PutBlob(ctx, sess, "tokenjuice/"+handle, data)
}

func (r rawStore) Get(ctx context.Context, handle string) ([]byte, error) {
	b, err := r.s.Blob(ctx, "tokenjuice/"+handle)
	if errors.Is(err, session.ErrNotFound) {
		return nil, tokenjuice.ErrNotFound
	}
	return b, err
}

// RawOutput returns the full output kept behind a tokenjuice handle.
func (a *App) RawOutput(ctx context.Context, handle string) ([]byte, error) {
	return rawStore{a.Store}.Get(ctx, handle)
}

// PluginEnabled reports whether plugin id is on: plugins.entries.<id>.enabled, or, when that is
// not set, whether it is the chosen web_search provider (choosing a provider enables its plugin).
func PluginEnabled(cfg *config.Config, id string) bool {
	if e, ok := cfg.Plugins.Entries[id]; ok && e.Enabled != nil {
		return *e.Enabled
	}
	return cfg.Tools.Web.Search.Provider == id
}

// webSearchProvider finds the web search provider named name among the running plugins
// (bundled providers are named after their plugin).
func (a *App) webSearchProvider(name string) (websearch.Provider, bool) {
	ws, ok := a.Plugins[name].(webSearchSource)
	if !ok {
		return nil, false
	}
	return ws.WebSearchProvider(), true
}

// hubServers converts mcp.servers into the hub's options, resolving SecretRefs.
func hubServers(cfg *config.Config, lookupEnv func(string) (string, bool)) ([]mcphub.ServerConfig, error) {
	var out []mcphub.ServerConfig
	for _, name := range cfg.MCP.ServerNames() {
		s := cfg.MCP.Servers[name]
		sc := mcphub.ServerConfig{
			Name: name, Command: s.Command, Args: s.Args, Cwd: s.Cwd, URL: s.URL,
			Timeout: s.Timeout, ConnectTimeout: s.ConnectTimeout, InheritEnv: s.InheritEnv, Enabled: s.Enabled,
		}
		var err error
		if sc.Env, err = resolveSecrets(s.Env, lookupEnv); err != nil {
			return nil, err
		}
		if sc.Headers, err = resolveSecrets(s.Headers, lookupEnv); err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// resolveSecrets resolves a map of SecretRefs, in key order so that the same bad entry is reported
// on every run.
func resolveSecrets(m map[string]config.Secret, lookupEnv func(string) (string, bool)) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, err := m[k].Resolve(lookupEnv)
		if err != nil {
			return nil, err // names the path already
		}
		out[k] = v
	}
	return out, nil
}

// withheldEnv names the variables nodmix reads secrets from: every {"$env": NAME} of the config,
// the provider keys and TAVILY_API_KEY. Processes nodmix starts for models and hooks do not get
// them (stdio MCP servers get only a small default set anyway).
func (a *App) withheldEnv() []string {
	return slices.Concat(a.Config.SecretEnv(), provider.KeyEnvs(), []string{tavily.EnvAPIKey})
}

// environWithout is this process's environment without the named variables.
func environWithout(names []string) []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(names, name)
	})
}
