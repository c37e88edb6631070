package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
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

	var listJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the sessions, most recently updated first",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			a, err := openStore(c)
			if err != nil {
				return err
			}
			defer a.Close()
			all, err := a.Store.Sessions(c.Context())
			if err != nil {
				return err
			}
			if listJSON {
				if all == nil {
					all = []session.Info{}
				}
				return writeJSON(c.OutOrStdout(), all)
			}
			if len(all) == 0 {
				fmt.Fprintln(c.OutOrStdout(), "no sessions")
				return nil
			}
			w := tabwriter.NewWriter(c.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "KEY\tMODEL\tMESSAGES\tUPDATED")
			for _, in := range all {
				// An unpinned session shows the default its next turn runs, marked as such.
				model, pinned := a.SessionModel(&in)
				model = orDash(sanitize(model))
				if !pinned && model != "-" {
					model += " (default)"
				}
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", sanitize(in.Key), model, in.Messages, stamp(in.Updated))
			}
			return w.Flush()
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print JSON")

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
