// Package plugins is the one visible registry of the plugins bundled with nodmix. Adding a plugin
// means adding its Factory here, nowhere else.
package plugins

import (
	"github.com/nodmix/nodmix/internal/plugin"
	"github.com/nodmix/nodmix/internal/plugins/tavily"
	"github.com/nodmix/nodmix/internal/plugins/tokenjuice"
)

// Bundled returns the registry of bundled plugins.
func Bundled() (*plugin.Registry, error) {
	return plugin.NewRegistry(
		tavily.Factory,
		tokenjuice.Factory,
	)
}
