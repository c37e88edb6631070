package app

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"

	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/plugin"
	"github.com/nodmix/nodmix/internal/plugins"
)

// ValidatePlugins checks every plugins.entries.<id> against the bundled plugins: the id must exist
// and its config section must pass the plugin's decode, init and validate steps, whether or not
// the plugin is enabled. Nothing is started and nothing is sent over the network.
func ValidatePlugins(ctx context.Context, cfg *config.Config, lookupEnv func(string) (string, bool)) error {
	reg, err := plugins.Bundled()
	if err != nil {
		return err
	}
	host := plugin.Host{Log: slog.New(slog.DiscardHandler), LookupEnv: lookupEnv, HTTPClient: httpClient()}
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(cfg.Plugins.Entries)) {
		f, err := reg.Lookup(id)
		if err != nil {
			errs = append(errs, &config.Error{Path: "plugins.entries." + id, Rule: "is not a bundled plugin"})
			continue
		}
		p, err := plugin.Start(ctx, f, cfg.Plugins.Entries[id].Config, host)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		_ = p.Close()
	}
	return errors.Join(errs...)
}
