package app

import (
	"context"

	"github.com/nodmix/nodmix/internal/discovery"
	"github.com/nodmix/nodmix/internal/exposure"
	"github.com/nodmix/nodmix/internal/toolsearch"
)

// DiscoveryMode is the effective discovery mode for the current catalog.
func (a *App) DiscoveryMode() discovery.Mode {
	configured, err := discovery.ParseMode(a.Config.Tools.DiscoveryMode)
	if err != nil {
		configured = discovery.Auto
	}
	return discovery.Effective(configured, a.Config.MCP.DiscoveryMode, a.Catalog.Snapshot().Len())
}

// assembleExposure builds discovery, Tool Search and the exposure engine.
func (a *App) assembleExposure(ctx context.Context, opts Options) {
	snap := a.Catalog.Snapshot()
	mode := a.DiscoveryMode()
	rules := discovery.NewRules(mode, a.Config.Tools.EssentialOverride, a.Config.MCP.DiscoveryDefaultServers, snap)
	if opts.Tools != nil {
		// A catalog file is searched as a whole: every tool in it is hidden, nothing active yet.
		rules = discovery.Rules{Mode: discovery.All, Everything: true}
	}
	if opts.Mode == exposure.Discovery && !rules.Enabled() {
		rules = discovery.NewRules(discovery.MCPOnly, a.Config.Tools.EssentialOverride, a.Config.MCP.DiscoveryDefaultServers, snap)
	}
	a.Engine = &exposure.Engine{Catalog: a.Catalog, Pipeline: a.Pipeline}
	a.Discovery = discovery.NewService(rules, a.Store, a.Engine.Notify)
	a.Engine.Discovery = a.Discovery
	ts := a.Config.ToolSearch()
	a.toolSearch.opts = a.toolSearchOptions()
	a.toolSearch.indexes = toolsearch.NewIndexCache(a.Pipeline.Policy, toolSearchRanker)
	wantCode := (ts.Enabled && ts.Mode != toolsearch.ModeTools && opts.Mode == "") || opts.Mode == exposure.ToolSearchCode || opts.Code
	codeOK := wantCode && a.startSandbox(ctx, opts.SandboxCommand)
	a.Engine.Mode = exposure.Resolve(ts.Enabled, ts.Mode, rules.Mode, codeOK)
	if opts.Mode != "" {
		a.Engine.Mode = opts.Mode
		if opts.Mode == exposure.ToolSearchCode && !codeOK {
			// Code mode falls back to tools mode before compaction, as documented.
			a.Engine.Mode = exposure.ToolSearchTools
		}
	}
	a.Engine.Controls = a.toolSearchControls
	if a.Hub != nil {
		a.Engine.Ready = a.WaitForServers
	}
}
