package app

import (
	"context"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/discovery"
	"github.com/nodmix/nodmix/internal/exposure"
	"github.com/nodmix/nodmix/internal/search"
	"github.com/nodmix/nodmix/internal/toolsearch"
)

// DiscoveryMode is the effective discovery mode for the current catalog.
func (a *App) DiscoveryMode() discovery.Mode {
	return discovery.Effective(a.configuredDiscoveryMode(), a.Config.MCP.DiscoveryMode, a.Catalog.Snapshot().Len())
}

// configuredDiscoveryMode is tools.discoveryMode. The config was validated on load; auto is the
// safe reading of anything else.
func (a *App) configuredDiscoveryMode() discovery.Mode {
	m, err := discovery.ParseMode(a.Config.Tools.DiscoveryMode)
	if err != nil {
		return discovery.Auto
	}
	return m
}

// assembleExposure builds discovery, Tool Search and the exposure engine.
func (a *App) assembleExposure(ctx context.Context, opts Options) {
	snap := a.Catalog.Snapshot()
	rules := discovery.NewRules(a.DiscoveryMode(), a.Config.Tools.EssentialOverride, a.Config.MCP.DiscoveryDefaultServers, snap)
	if opts.Tools != nil {
		// A catalog file is searched as a whole: every tool in it is hidden, nothing active yet.
		rules = discovery.Rules{Mode: discovery.All, Everything: true}
	}
	if opts.Mode == exposure.Discovery && !rules.Enabled() {
		rules = discovery.NewRules(discovery.MCPOnly, a.Config.Tools.EssentialOverride, a.Config.MCP.DiscoveryDefaultServers, snap)
	}
	a.Engine = &exposure.Engine{Catalog: a.Catalog, Pipeline: a.Pipeline, Log: a.Log}
	a.Discovery = discovery.NewService(rules, a.Store, a.Engine.Notify)
	a.Engine.Discovery = a.Discovery
	ts := a.Config.ToolSearch()
	a.toolSearch.opts = toolSearchOptions(ts)
	a.toolSearch.indexes = toolsearch.NewIndexCache(a.Pipeline.Policy, toolsearch.SearchRanker(search.RankerOptions{}))
	wantCode := (ts.Enabled && ts.Mode != toolsearch.ModeTools && opts.Mode == "") || opts.Mode == exposure.ToolSearchCode || opts.Code
	codeOK := wantCode && a.startSandbox(ctx, opts.SandboxCommand)
	mode := exposure.Resolve(ts.Enabled, ts.Mode, rules.Mode, codeOK)
	if opts.Mode != "" {
		mode = opts.Mode
		if mode == exposure.ToolSearchCode && !codeOK {
			// Code mode falls back to tools mode when the sandbox cannot start, as documented.
			mode = exposure.ToolSearchTools
		}
	}
	a.Engine.SetMode(mode)
	if opts.Mode == "" && opts.Tools == nil && !ts.Enabled && a.configuredDiscoveryMode() == discovery.Auto {
		// Auto mode is decided by the tool count, which grows as MCP servers connect.
		stop := a.Catalog.Watch(a.reconsiderAuto)
		a.addCloser(func() error { stop(); return nil })
	}
	a.Engine.Controls = a.toolSearchControls
	a.Engine.Askers = a
	if a.Hub != nil {
		a.Engine.Ready = a.serversListed // the engine bounds each wait
		a.Engine.ToolMeta = a.toolMeta
	}
	if opts.IndexAhead {
		a.startIndexAhead()
	}
}

// reconsiderAuto re-resolves discovery mode auto for a new snapshot: above 40 tools discovery
// switches on (MCP tools hidden), at 40 or fewer it is off.
func (a *App) reconsiderAuto(snap *catalog.Snapshot) {
	mode := discovery.Effective(discovery.Auto, a.Config.MCP.DiscoveryMode, snap.Len())
	if mode == a.Discovery.Rules().Mode {
		return
	}
	a.Discovery.SetRules(discovery.NewRules(mode, a.Config.Tools.EssentialOverride, a.Config.MCP.DiscoveryDefaultServers, snap))
	if mode == discovery.Off {
		a.Engine.SetMode(exposure.Direct)
	} else {
		a.Engine.SetMode(exposure.Discovery)
	}
}
