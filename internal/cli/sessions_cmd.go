package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/spf13/cobra"
)

// sessionShowJSON is `nodmix sessions show --json`.
type sessionShowJSON struct {
	Session  *session.Info `json:"session"`
	Messages []llm.Message `json:"messages"`
}

// sessionPreview is how much of a tool call's arguments or a tool result `sessions show` prints.
const sessionPreview = 200

func newSessionsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "sessions", Short: "List, show and remove the agent sessions kept in the state store"}
	// openStore opens the persistent store alone: no server is started, no catalog consulted.
	openStore := func(c *cobra.Command) (*app.App, error) {
		return app.New(c.Context(), app.Options{Getenv: g.env.Getenv, Log: g.logger(), Persistent: true})
	}
	keyArg := func(c *cobra.Command, args []string) error {
		if err := exactArgs(1, "KEY")(c, args); err != nil {
			return err
		}
		if err := session.CheckKey(args[0]); err != nil {
			return usageError{err}
		}
		return nil
	}
	notFound := func(key string, err error) error {
		if errors.Is(err, session.ErrNotFound) {
			return fmt.Errorf("session %q: %w", key, err)
		}
		return err
	}

	var listJSON, listAll bool
	var listLimit int
	list := &cobra.Command{
		Use:   "list",
		Short: "List the sessions, most recently updated first",
		Long: fmt.Sprintf(`List the sessions, most recently updated first: the latest %d, or --limit N, or --all.
When more follow, a line on stderr says so. The listing is read a page at a time: a session
updated while it is read moves to the front and is not listed twice (it may be left out).`, session.DefaultPage),
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if listAll && c.Flags().Changed("limit") {
				return usagef("--all and --limit: give one")
			}
			if listLimit < 1 {
				return usagef("--limit: must be at least 1 (got %d)", listLimit)
			}
			a, err := openStore(c)
			if err != nil {
				return err
			}
			defer a.Close()
			limit := listLimit
			if listAll {
				limit = math.MaxInt
			}
			all, more, err := listSessions(c.Context(), a.Store, limit)
			if err != nil {
				return err
			}
			if err := printSessions(c.OutOrStdout(), a, all, listJSON); err != nil {
				return err
			}
			if more {
				fmt.Fprintf(c.ErrOrStderr(), "more sessions follow the %d listed: --limit N lists more, --all every one\n", len(all))
			}
			return nil
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print JSON (an array of the sessions listed)")
	list.Flags().IntVar(&listLimit, "limit", session.DefaultPage, "list the N most recently updated sessions")
	list.Flags().BoolVar(&listAll, "all", false, "list every session")

	var showJSON bool
	show := &cobra.Command{
		Use:   "show KEY",
		Short: "Show a session's settings and its transcript",
		Args:  keyArg,
		RunE: func(c *cobra.Command, args []string) error {
			a, err := openStore(c)
			if err != nil {
				return err
			}
			defer a.Close()
			key := args[0]
			info, err := a.Store.Session(c.Context(), key)
			if err != nil {
				return notFound(key, err)
			}
			msgs, err := a.Store.Transcript(c.Context(), key)
			if err != nil {
				return notFound(key, err)
			}
			if showJSON {
				return writeJSON(c.OutOrStdout(), sessionShowJSON{Session: info, Messages: printableMessages(msgs)})
			}
			renderSession(c.OutOrStdout(), info, msgs)
			return nil
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print JSON")

	var rmJSON bool
	rm := &cobra.Command{
		Use:   "rm KEY",
		Short: "Remove a session: its transcript, settings, discovery selections, kept outputs and log",
		Args:  keyArg,
		RunE: func(c *cobra.Command, args []string) error {
			a, err := openStore(c)
			if err != nil {
				return err
			}
			defer a.Close()
			key := args[0]
			// Through the app, which removes the session's log too; its error names the key.
			if err := a.DeleteSession(c.Context(), key); err != nil {
				return err
			}
			if rmJSON {
				return writeJSON(c.OutOrStdout(), map[string]string{"removed": key})
			}
			fmt.Fprintf(c.OutOrStdout(), "removed %s\n", sanitize(key))
			return nil
		},
	}
	rm.Flags().BoolVar(&rmJSON, "json", false, "print JSON")

	cmd.AddCommand(list, show, rm)
	return cmd
}

// listSessions reads up to limit sessions a page at a time and reports whether more follow.
func listSessions(ctx context.Context, st session.Store, limit int) ([]session.Info, bool, error) {
	all := []session.Info{}
	var after session.Cursor
	for {
		page, next, err := st.SessionsPage(ctx, after, min(limit-len(all), session.DefaultPage))
		if err != nil {
			return nil, false, err
		}
		all = append(all, page...)
		if next.IsZero() {
			return all, false, nil
		}
		if len(all) == limit {
			return all, true, nil
		}
		after = next
	}
}

// printSessions prints the listing as a table, or as one JSON array.
func printSessions(w io.Writer, a *app.App, all []session.Info, asJSON bool) error {
	if asJSON {
		return writeJSON(w, all)
	}
	if len(all) == 0 {
		fmt.Fprintln(w, "no sessions")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tMODEL\tMESSAGES\tUPDATED")
	for _, in := range all {
		// An unpinned session shows the default its next turn runs, marked as such.
		model, pinned := a.SessionModel(&in)
		model = orDash(sanitize(model))
		if !pinned && model != "-" {
			model += " (default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", sanitize(in.Key), model, in.Messages, stamp(in.Updated))
	}
	return tw.Flush()
}

// renderSession prints the row, then one block per message.
func renderSession(w io.Writer, in *session.Info, msgs []llm.Message) {
	field := func(name, value string) { fmt.Fprintf(w, "%-10s %s\n", name+":", value) }
	field("key", sanitize(in.Key))
	field("model", orDash(sanitize(in.Model)))
	field("agent", orDash(sanitize(in.Agent)))
	field("overrides", orDash(pairs(in.Overrides)))
	field("counters", orDash(pairs(in.Counters)))
	field("messages", fmt.Sprint(in.Messages))
	field("created", stamp(in.Created))
	field("updated", stamp(in.Updated))
	for _, m := range msgs {
		fmt.Fprintf(w, "\n%s:\n", sanitize(string(m.Role)))
		for _, p := range m.Parts {
			renderPart(w, &p)
		}
	}
}

func renderPart(w io.Writer, p *llm.Part) {
	switch p.Kind {
	case llm.KindText:
		for line := range strings.SplitSeq(strings.TrimRight(p.Text, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", sanitize(line))
		}
	case llm.KindReasoning:
		fmt.Fprintf(w, "  (reasoning, %d chars)\n", utf8.RuneCountInString(p.Text))
	case llm.KindToolCall:
		fmt.Fprintf(w, "  → %s %s\n", sanitize(p.Name), truncate(sanitize(string(p.Args)), sessionPreview))
	case llm.KindToolResult:
		name := sanitize(p.Name)
		if name == "" {
			name = sanitize(p.CallID)
		}
		if p.IsError {
			name += " (error)"
		}
		fmt.Fprintf(w, "  ← %s: %s\n", name, truncate(sanitize(p.Text), sessionPreview))
	case llm.KindImage:
		if strings.HasPrefix(p.ImageURL, "data:") {
			fmt.Fprintf(w, "  (image, %d bytes of data URL)\n", len(p.ImageURL))
		} else {
			fmt.Fprintf(w, "  (image %s)\n", truncate(sanitize(p.ImageURL), sessionPreview))
		}
	default:
		fmt.Fprintf(w, "  (%s)\n", sanitize(string(p.Kind)))
	}
}

// printableMessages returns msgs ready for encoding/json: arguments or provider bytes that are
// not valid JSON (a model can send broken arguments, and the store keeps them as sent) become
// JSON strings instead of failing the whole output.
func printableMessages(msgs []llm.Message) []llm.Message {
	if msgs == nil {
		return []llm.Message{}
	}
	fix := func(b json.RawMessage) json.RawMessage {
		if len(b) == 0 || json.Valid(b) {
			return b
		}
		s, _ := json.Marshal(string(b))
		return s
	}
	for i := range msgs {
		if msgs[i].Parts == nil {
			msgs[i].Parts = []llm.Part{}
		}
		for j := range msgs[i].Parts {
			p := &msgs[i].Parts[j]
			p.Args, p.Raw, p.Meta = fix(p.Args), fix(p.Raw), fix(p.Meta)
		}
	}
	return msgs
}

// pairs prints a map as key=value pairs in key order.
func pairs[V any](m map[string]V) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%v", sanitize(k), m[k])
	}
	return sanitize(b.String())
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
