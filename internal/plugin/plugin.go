// Package plugin defines the lifecycle of nodmix's bundled plugins (decode → init → validate →
// close) and the capabilities a plugin may contribute: tools, result middleware, providers.
package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"

	"github.com/nodmix/nodmix/internal/config"
)

// Plugin is one bundled plugin instance. The lifecycle is strictly Decode, Init, Validate, then the
// capabilities are read, and Close when nodmix shuts down (Close is also called after a failed
// Init or Validate). Methods are called from one goroutine; capabilities it hands out (executors,
// middleware) must be safe for concurrent use.
type Plugin interface {
	// Decode decodes plugins.entries.<id>.config strictly: unknown fields are errors. raw is nil when
	// the section is absent. Errors about one value are FieldErrors, with paths inside the section.
	Decode(raw json.RawMessage) error
	// Init prepares the plugin; it may not do network I/O.
	Init(ctx context.Context, host Host) error
	// Validate checks the decoded configuration as a whole; errors as for Decode.
	Validate() error
	// Close releases what Init acquired.
	Close() error
}

// Host is what nodmix lends a plugin. Fields are read-only for the plugin.
type Host struct {
	Log        *slog.Logger
	LookupEnv  func(string) (string, bool) // the gateway's environment; never logged
	HTTPClient *http.Client                // shared client; plugins set per-request timeouts
	Home       string                      // nodmix's state directory
	// Settings holds plain values of other config sections that plugins read, by dotted path
	// (e.g. "tools.web.search.cacheTtlMinutes"); the app fills in what bundled plugins need.
	Settings map[string]any
}

// Info describes a bundled plugin for `nodmix plugins list` and for the registry.
type Info struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	Tools       []string `json:"tools"`     // tool names the plugin contributes
	Providers   []string `json:"providers"` // e.g. "web_search:tavily"
	Middleware  []string `json:"middleware,omitempty"`
}

// Factory creates a plugin instance.
type Factory struct {
	Info Info
	New  func() Plugin
}

// Registry is the one visible list of bundled plugins.
type Registry struct {
	factories map[string]Factory
}

// ErrUnknownPlugin is returned for an id no bundled plugin has.
var ErrUnknownPlugin = errors.New("unknown plugin")

// NewRegistry returns a registry of the given factories; ids must be unique.
func NewRegistry(fs ...Factory) (*Registry, error) {
	r := &Registry{factories: make(map[string]Factory, len(fs))}
	for _, f := range fs {
		if _, dup := r.factories[f.Info.ID]; dup {
			return nil, fmt.Errorf("plugin %q registered twice", f.Info.ID)
		}
		r.factories[f.Info.ID] = f
	}
	return r, nil
}

// List returns every plugin's Info sorted by id.
func (r *Registry) List() []Info {
	out := make([]Info, 0, len(r.factories))
	for _, f := range r.factories {
		out = append(out, f.Info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Lookup returns the factory of id.
func (r *Registry) Lookup(id string) (Factory, error) {
	f, ok := r.factories[id]
	if !ok {
		return Factory{}, fmt.Errorf("%w %q", ErrUnknownPlugin, id)
	}
	return f, nil
}

// Start runs the lifecycle up to Validate for one plugin. On failure the plugin is closed and the
// error names the plugin and its step.
func Start(ctx context.Context, f Factory, raw json.RawMessage, host Host) (Plugin, error) {
	return StartWith(ctx, f, raw, host, nil)
}

// StartWith is Start with a prepare step that runs on the new instance before Decode, for the
// app to hand a plugin what only it has (a persistent store).
func StartWith(ctx context.Context, f Factory, raw json.RawMessage, host Host, prepare func(Plugin)) (Plugin, error) {
	p := f.New()
	if prepare != nil {
		prepare(p)
	}
	if err := step(func() error { return p.Decode(raw) }); err != nil {
		return nil, sectionError(f.Info.ID, "config", err)
	}
	if err := step(func() error { return p.Init(ctx, host) }); err != nil {
		_ = step(p.Close)
		return nil, fmt.Errorf("plugin %q: init: %w", f.Info.ID, err)
	}
	if err := step(p.Validate); err != nil {
		_ = step(p.Close)
		return nil, sectionError(f.Info.ID, "validate", err)
	}
	return p, nil
}

// FieldError is a plugin's error about one value of its config section: path is the dotted path
// inside plugins.entries.<id>.config ("" for the section itself), rule what the value breaks.
func FieldError(path, rule string) error { return &config.Error{Path: path, Rule: rule} }

// sectionError names a plugin's config errors by their whole path, the one `nodmix config set`
// takes (plugins.entries.tavily.config.webSearch.colour: unknown field), in the order of the
// file's own (by path, then rule), whatever order the plugin found them in. Other errors name the
// plugin and the step.
func sectionError(id, stepName string, err error) error {
	fields := fieldErrors(err)
	if fields == nil {
		return fmt.Errorf("plugin %q: %s: %w", id, stepName, err)
	}
	section := "plugins.entries." + id + ".config"
	out := make([]*config.Error, len(fields))
	for i, e := range fields {
		path := section
		if e.Path != "" {
			path += "." + e.Path
		}
		out[i] = &config.Error{Path: path, Rule: e.Rule}
	}
	return config.JoinErrors(out)
}

// fieldErrors returns err's FieldErrors when err is one or a join of them, else nil: an error
// that wraps one with more context keeps its own words.
func fieldErrors(err error) []*config.Error {
	if e, ok := err.(*config.Error); ok {
		return []*config.Error{e}
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	var out []*config.Error
	for _, inner := range j.Unwrap() {
		e, ok := inner.(*config.Error)
		if !ok {
			return nil
		}
		out = append(out, e)
	}
	return out
}

// step runs one lifecycle step and turns a panic into its error: a plugin's bug on odd config
// must read as that plugin's error (`nodmix config validate` lists it with the others) and still
// let it close, not end nodmix with a stack trace.
func step(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("it crashed: %v", r)
		}
	}()
	return fn()
}
