package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/discovery"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/exposure"
	"github.com/nodmix/nodmix/internal/jsondepth"
	"github.com/spf13/cobra"
)

// catalogFlags are shared by the commands that can work on a catalog file instead of the live catalog.
type catalogFlags struct {
	file   string
	asJSON bool
}

// openApp assembles nodmix for a command. With a catalog file it loads no live source.
func (g *globals) openApp(ctx context.Context, file string, persistent bool, mode exposure.Mode) (*app.App, error) {
	return g.openAppWith(ctx, file, catalog.ReadOptions{}, persistent, mode)
}

// openAppWith is openApp, reading the catalog file with the checks of read.
func (g *globals) openAppWith(ctx context.Context, file string, read catalog.ReadOptions, persistent bool, mode exposure.Mode) (*app.App, error) {
	opts := app.Options{Getenv: g.env.Getenv, Log: g.logger(), Persistent: persistent, Mode: mode, ConnectMCP: file == "", Version: Version}
	if file != "" {
		// The catalog refuses two tools of one name too, but only the file can say where they are.
		read.UniqueNames = true
		tools, err := g.readCatalogFile(file, read)
		if err != nil {
			return nil, err
		}
		if tools == nil {
			tools = []catalog.Tool{}
		}
		opts.Tools = tools
	}
	a, err := app.New(ctx, opts)
	if err != nil {
		return nil, err
	}
	if file == "" {
		a.AwaitServers(ctx, g.note)
	}
	return a, nil
}

func newToolsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "tools", Short: "List, search, describe and call the tools of the catalog"}
	cmd.AddCommand(batch(newToolsListCmd(g)), batch(newToolsSearchCmd(g)), batch(newToolsDescribeCmd(g)), newToolsCallCmd(g),
		newToolsCodeCmd(g), batch(newToolsExposureCmd(g)))
	return cmd
}

// descriptor is the stable JSON form of a tool in `tools list --json` and `tools describe --json`.
type descriptor struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Label       string          `json:"label"`
	Source      catalog.Source  `json:"source"`
	Owner       string          `json:"owner"`
	Server      string          `json:"server,omitempty"`
	MCPToolName string          `json:"mcp_tool_name,omitempty"`
	Description string          `json:"description"`
	LoadMode    string          `json:"load_mode"`
	InputSchema json.RawMessage `json:"input_schema"`
}

func describeTool(t *catalog.Tool) descriptor {
	return descriptor{t.ID, t.Name, t.DisplayLabel(), t.Source, t.Owner, t.Server, t.MCPToolName, t.Description, t.LoadMode.String(), t.Schema()}
}

func newToolsListCmd(g *globals) *cobra.Command {
	var f catalogFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every tool policy allows",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			a, err := g.openApp(c.Context(), f.file, false, "")
			if err != nil {
				return err
			}
			defer a.Close()
			entries := a.Engine.Allowed().Entries()
			if f.asJSON {
				out := make([]descriptor, len(entries))
				for i, e := range entries {
					out[i] = describeTool(&e.Tool)
				}
				return writeJSON(c.OutOrStdout(), out)
			}
			w := tabwriter.NewWriter(c.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tNAME\tDESCRIPTION")
			for _, e := range entries {
				fmt.Fprintf(w, "%s\t%s\t%s\n", sanitize(e.Tool.ID), sanitize(e.Tool.Name), truncate(sanitize(e.Tool.SummaryText()), 72))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "%d tools\n", len(entries))
			return nil
		},
	}
	cmd.Flags().StringVar(&f.file, "catalog", "", "read tools from a catalog file (JSON Lines) instead of the live catalog")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print JSON")
	return cmd
}

func newToolsSearchCmd(g *globals) *cobra.Command {
	var f catalogFlags
	var limit, sess string
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search hidden tools with the discovery index (search_tool_bm25) and activate the matches",
		Args:  exactArgs(1, "QUERY"),
		RunE: func(c *cobra.Command, args []string) error {
			n, err := discovery.ParseLimit(json.RawMessage(limit))
			if err != nil {
				return usagef("--limit: %w", err) // the documented message of search_tool_bm25
			}
			if strings.TrimSpace(args[0]) == "" {
				return usagef("QUERY: %w", discovery.ErrEmptyQuery)
			}
			if err := sessionFlag(sess); err != nil {
				return err
			}
			a, err := g.openApp(c.Context(), f.file, sess != "", "")
			if err != nil {
				return err
			}
			defer a.Close()
			svc := a.Discovery
			if !svc.Rules().Enabled() {
				// Discovery is off for agents; a person searching still wants every tool ranked.
				svc = discovery.NewService(discovery.Rules{Mode: discovery.All, Everything: true}, a.Store, nil)
			}
			id := sess
			if id == "" {
				id = "cli-" + randomID()
			}
			d, err := svc.Search(c.Context(), a.Engine.Allowed(), id, args[0], n)
			if err != nil {
				return err
			}
			if f.asJSON {
				return writeJSON(c.OutOrStdout(), d)
			}
			renderDiscovery(c.OutOrStdout(), d)
			return nil
		},
	}
	cmd.Flags().StringVar(&limit, "limit", "8", "max matches to return and activate (a positive integer)")
	cmd.Flags().StringVar(&sess, "session", "", "a session id: activations are stored and later searches skip them")
	cmd.Flags().StringVar(&f.file, "catalog", "", "search a catalog file (JSON Lines): every tool in it is hidden")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the details object as JSON")
	return cmd
}

func newToolsDescribeCmd(g *globals) *cobra.Command {
	var f catalogFlags
	cmd := &cobra.Command{
		Use:   "describe ID",
		Short: "Show one tool with its input schema",
		Args:  exactArgs(1, "ID"),
		RunE: func(c *cobra.Command, args []string) error {
			a, err := g.openApp(c.Context(), f.file, false, "")
			if err != nil {
				return err
			}
			defer a.Close()
			e, err := a.Pipeline.Resolve(a.Engine.Allowed(), args[0])
			if err != nil {
				return err
			}
			d := describeTool(&e.Tool)
			if f.asJSON {
				return writeJSON(c.OutOrStdout(), d)
			}
			out := c.OutOrStdout()
			// What a server named or wrote is shown without terminal controls.
			fmt.Fprintf(out, "%s (%s)\n", sanitize(d.ID), sanitize(d.Name))
			fmt.Fprintf(out, "source: %s, owner: %s, load mode: %s\n", d.Source, sanitize(d.Owner), d.LoadMode)
			if d.Description != "" {
				fmt.Fprintf(out, "\n%s\n", sanitizeLines(d.Description))
			}
			var pretty strings.Builder
			enc := json.NewEncoder(&pretty)
			enc.SetIndent("", "  ")
			var v any
			_ = json.Unmarshal(d.InputSchema, &v)
			_ = enc.Encode(v)
			fmt.Fprintf(out, "\ninput schema:\n%s", sanitizeLines(pretty.String()))
			return nil
		},
	}
	cmd.Flags().StringVar(&f.file, "catalog", "", "read tools from a catalog file instead of the live catalog")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print JSON")
	return cmd
}

// maxArgsDepth is the deepest nesting encoding/json decodes, and so the deepest --args may be.
const maxArgsDepth = 10000

func newToolsCallCmd(g *globals) *cobra.Command {
	var asJSON bool
	var args, sess string
	cmd := &cobra.Command{
		Use:   "call ID --args JSON",
		Short: "Call a tool through the dispatch pipeline (policy, approvals, hooks, middleware)",
		Args:  exactArgs(1, "ID"),
		RunE: func(c *cobra.Command, pos []string) error {
			trimmed := strings.TrimSpace(args)
			if jsondepth.DeeperString(trimmed, maxArgsDepth) {
				// encoding/json refuses it as invalid, which would blame the wrong rule.
				return usagef("--args: nests arrays and objects deeper than %d levels", maxArgsDepth)
			}
			if !json.Valid([]byte(trimmed)) || !strings.HasPrefix(trimmed, "{") {
				return usagef("--args: must be a JSON object")
			}
			if err := sessionFlag(sess); err != nil {
				return err
			}
			a, err := g.openApp(c.Context(), "", true, "")
			if err != nil {
				return err
			}
			defer a.Close()
			a.SetAsker(g.terminalAsker())
			if sess == "" {
				sess = "cli"
			}
			res, err := a.Pipeline.Call(c.Context(), a.Engine.Allowed(), dispatch.Request{Target: pos[0], Args: json.RawMessage(args), Session: sess, Surface: "cli"})
			if err != nil {
				return err
			}
			return printResult(c.OutOrStdout(), res, asJSON)
		},
	}
	cmd.Flags().StringVar(&args, "args", "{}", "the arguments, a JSON object")
	cmd.Flags().StringVar(&sess, "session", "", "session id (default \"cli\")")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the MCP-shaped result as JSON")
	return cmd
}

// printResult prints a tool's result (its text, or with asJSON the MCP shape) and returns
// errToolFailed when the tool reported an error, so the exit code says so.
func printResult(w io.Writer, res *catalog.Result, asJSON bool) error {
	if asJSON {
		if err := writeJSON(w, resultJSON(res)); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(w, strings.TrimRight(res.Text(), "\n"))
	}
	if res.IsError {
		return errToolFailed
	}
	return nil
}

// errToolFailed is returned after a tool reported an error, which has already been printed.
var errToolFailed = errors.New("the tool reported an error")

// resultJSON is the MCP CallToolResult shape of a result.
func resultJSON(r *catalog.Result) map[string]any {
	content := make([]json.RawMessage, 0, len(r.Content))
	for _, c := range r.Content {
		if len(c.Raw) > 0 {
			content = append(content, c.Raw)
			continue
		}
		b, _ := json.Marshal(c)
		content = append(content, b)
	}
	out := map[string]any{"content": content, "isError": r.IsError}
	if len(r.Structured) > 0 {
		out["structuredContent"] = r.Structured
	}
	return out
}

func newToolsExposureCmd(g *globals) *cobra.Command {
	var f catalogFlags
	var mode string
	cmd := &cobra.Command{
		Use:   "exposure",
		Short: "Show the tool definitions a model receives up front in a mode, with their size",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			m, err := modeFlag(mode)
			if err != nil {
				return err
			}
			// What exposure prints is what a model is sent: a name no provider accepts is
			// refused, as the gateway refuses a client tool's (and the hub renames a server's).
			a, err := g.openAppWith(c.Context(), f.file, catalog.ReadOptions{ValidNames: true}, false, m)
			if err != nil {
				return err
			}
			defer a.Close()
			rep, err := exposure.Measure(c.Context(), a.Engine, "exposure-"+randomID())
			if err != nil {
				return err
			}
			if f.asJSON {
				return writeJSON(c.OutOrStdout(), rep)
			}
			fmt.Fprintf(c.OutOrStdout(), "mode %s: %d tools, %d bytes, ~%d tokens up front\n", rep.Mode, rep.Count, rep.Bytes, rep.TokensEstimate)
			for _, t := range rep.Tools {
				fmt.Fprintf(c.OutOrStdout(), "  %s\n", t.Name)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&mode, "mode", "", "direct, discovery, toolsearch-tools or toolsearch-code (default: what the config resolves to)")
	cmd.Flags().StringVar(&f.file, "catalog", "", "measure a catalog file instead of the live catalog")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print JSON")
	return cmd
}
