package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/config/json5"
	"github.com/nodmix/nodmix/internal/plugins"
	"github.com/spf13/cobra"
)

// loadConfig opens the config file nodmix uses (it may not exist yet). A file that parses but does
// not validate, itself or in its plugin sections, is still returned for editing, with a warning:
// an edit is refused only if it adds an error, so `config set`/`unset` can repair it.
func (g *globals) loadConfig() (*config.File, error) {
	// The plugin checks start nothing and send nothing, so there is nothing to cancel.
	e, err := g.openConfig(context.Background())
	if err != nil {
		return nil, err
	}
	return e.File, nil
}

// configEdit is the config file open for an edit, with the plugin-section errors it had when it
// was loaded. config.File validates the file's own rules; plugin sections are validated by their
// plugins, which the config package cannot reach, so the command does it before saving.
type configEdit struct {
	*config.File
	had map[string]bool
}

// openConfig is loadConfig keeping what an edit needs to tell new plugin errors from old ones.
func (g *globals) openConfig(ctx context.Context) (*configEdit, error) {
	path, err := config.Path(g.env.Getenv)
	if err != nil {
		return nil, err
	}
	f, err := config.Load(path)
	if f == nil {
		return nil, err
	}
	if err != nil {
		fmt.Fprintf(g.env.Stderr, "nodmix: warning: %s does not validate yet:\n%s\n", path, sanitizeLines(err.Error()))
	}
	errs := pluginErrors(ctx, f.Config(), g.env.lookupEnv)
	if len(errs) > 0 {
		fmt.Fprintf(g.env.Stderr, "nodmix: warning: the plugin sections of %s do not validate yet:\n%s\n", path, sanitizeLines(errors.Join(errs...).Error()))
	}
	e := &configEdit{File: f, had: map[string]bool{}}
	for _, err := range errs {
		e.had[err.Error()] = true
	}
	return e, nil
}

// save writes the edited file unless the edit breaks a plugin section (an unknown plugin id, an
// unknown key, a value out of range) that was fine before, exactly as `config validate` would
// report it. A refused edit leaves the file as it was.
func (e *configEdit) save(ctx context.Context, lookupEnv func(string) (string, bool)) error {
	var added []error
	for _, err := range pluginErrors(ctx, e.Config(), lookupEnv) {
		if !e.had[err.Error()] {
			added = append(added, err)
		}
	}
	if len(added) > 0 {
		return errors.Join(added...)
	}
	return e.Save()
}

// pluginErrors runs the checks of `config validate` on the plugin sections and returns each
// failure on its own.
func pluginErrors(ctx context.Context, cfg *config.Config, lookupEnv func(string) (string, bool)) []error {
	err := app.ValidatePlugins(ctx, cfg, lookupEnv)
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err != nil {
		return []error{err}
	}
	return nil
}

func newConfigCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Read and edit the configuration file (JSON5; comments are kept)"}
	cmd.AddCommand(
		&cobra.Command{
			Use:   "file",
			Short: "Print the path of the configuration file",
			Args:  noArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				path, err := config.Path(g.env.Getenv)
				if err != nil {
					return err
				}
				fmt.Fprintln(c.OutOrStdout(), path)
				return nil
			},
		},
		&cobra.Command{
			Use:   "get PATH",
			Short: "Print the value at a dotted path (secrets masked)",
			Args:  pathArgs(1, true),
			RunE: func(c *cobra.Command, args []string) error {
				f, err := g.openConfig(c.Context())
				if err != nil {
					return err
				}
				v, err := f.Get(args[0])
				if err != nil {
					return err
				}
				fmt.Fprintln(c.OutOrStdout(), strings.TrimRight(string(v), "\n"))
				return nil
			},
		},
		newConfigSetCmd(g),
		&cobra.Command{
			Use:   "unset PATH",
			Short: "Remove a value",
			Args:  pathArgs(1, false),
			RunE: func(c *cobra.Command, args []string) error {
				f, err := g.openConfig(c.Context())
				if err != nil {
					return err
				}
				if err := f.Unset(args[0]); err != nil {
					return err
				}
				return f.save(c.Context(), g.env.lookupEnv)
			},
		},
		&cobra.Command{
			Use:   "validate",
			Short: "Check the configuration file and every plugin's section",
			Args:  noArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				path, err := config.Path(g.env.Getenv)
				if err != nil {
					return err
				}
				f, err := config.Load(path)
				if err != nil {
					return err
				}
				if err := app.ValidatePlugins(c.Context(), f.Config(), g.env.lookupEnv); err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "%s: ok\n", f.Path())
				return nil
			},
		},
	)
	return cmd
}

func newConfigSetCmd(g *globals) *cobra.Command {
	set := &cobra.Command{
		Use:   "set PATH VALUE",
		Short: "Set a value (JSON5: true, 8, -1, \"x\", {mode: \"tools\"}; anything else is a string)",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("%s: needs 2 argument(s): [PATH VALUE] (flags go before PATH)", c.CommandPath())
			}
			return pathArgs(2, false)(c, args)
		},
		RunE: func(c *cobra.Command, args []string) error {
			f, err := g.openConfig(c.Context())
			if err != nil {
				return err
			}
			if err := f.Set(args[0], []byte(args[1])); err != nil {
				return err
			}
			return f.save(c.Context(), g.env.lookupEnv)
		},
	}
	// Flags end at PATH, so a VALUE such as -1 is a value and not a shorthand flag.
	set.Flags().SetInterspersed(false)
	return set
}

// pathArgs takes n arguments, the first a config path (the whole file, "", when whole): a path
// that cannot be parsed is a usage error, not a failure of the file.
func pathArgs(n int, whole bool) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return exactArgs(n, "PATH")(c, args)
		}
		if args[0] == "" && whole {
			return nil
		}
		if _, err := json5.ParsePath(args[0]); err != nil {
			return usagef("%s: %w", c.CommandPath(), err)
		}
		return nil
	}
}

func newPluginsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "plugins", Short: "List, enable and disable the bundled plugins"}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the bundled plugins, their state and their tools",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			f, err := g.openConfig(c.Context())
			if err != nil {
				return err
			}
			reg, err := plugins.Bundled()
			if err != nil {
				return err
			}
			type row struct {
				ID          string   `json:"id"`
				Enabled     bool     `json:"enabled"`
				Description string   `json:"description"`
				Tools       []string `json:"tools"`
				Providers   []string `json:"providers"`
			}
			var rows []row
			for _, info := range reg.List() {
				rows = append(rows, row{info.ID, app.PluginEnabled(f.Config(), info.ID), info.Description, nonNilStrings(info.Tools), nonNilStrings(info.Providers)})
			}
			if asJSON {
				return writeJSON(c.OutOrStdout(), rows)
			}
			w := tabwriter.NewWriter(c.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tSTATE\tTOOLS\tDESCRIPTION")
			for _, r := range rows {
				state := "disabled"
				if r.Enabled {
					state = "enabled"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.ID, state, strings.Join(r.Tools, ", "), r.Description)
			}
			return w.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	toggle := func(use string, on bool) *cobra.Command {
		return &cobra.Command{
			Use:   use + " ID",
			Short: strings.ToUpper(use[:1]) + use[1:] + " a bundled plugin (writes plugins.entries.<id>.enabled)",
			Args:  exactArgs(1, "ID"),
			RunE: func(c *cobra.Command, args []string) error {
				reg, err := plugins.Bundled()
				if err != nil {
					return err
				}
				if _, err := reg.Lookup(args[0]); err != nil {
					return usageError{err}
				}
				f, err := g.openConfig(c.Context())
				if err != nil {
					return err
				}
				if err := f.SetPluginEnabled(args[0], on); err != nil {
					return err
				}
				if err := f.save(c.Context(), g.env.lookupEnv); err != nil {
					return err
				}
				state := "disabled"
				if on {
					state = "enabled"
				}
				fmt.Fprintf(c.OutOrStdout(), "Plugin %s %s.\n", args[0], state)
				return nil
			},
		}
	}
	cmd.AddCommand(list, toggle("enable", true), toggle("disable", false))
	return cmd
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
