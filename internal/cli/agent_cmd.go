package cli

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/nodmix/nodmix/internal/agent"
	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/spf13/cobra"
)

// turnJSON is `nodmix agent --json`.
type turnJSON struct {
	Session     string      `json:"session,omitempty"`
	Model       string      `json:"model"`
	Text        string      `json:"text"`
	Steps       int         `json:"steps"`
	Finish      string      `json:"finish"`
	Usage       llm.Usage   `json:"usage"`
	ClientCalls []llm.Part  `json:"client_calls,omitempty"`
	Tools       []toolEvent `json:"tools,omitempty"`
}

type toolEvent struct {
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"args,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
}

func newAgentCmd(g *globals) *cobra.Command {
	var message, sessionKey, model, agentID string
	var dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "agent -m MESSAGE [--session KEY] [--model PROVIDER/MODEL]",
		Short: "Run one agent turn: the answer on stdout, tool calls on stderr as they start",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if strings.TrimSpace(message) == "" {
				return usagef("agent: -m MESSAGE is required")
			}
			// Without --session the turn runs in a fresh session that is not kept.
			persistent := sessionKey != ""
			a, err := app.New(c.Context(), app.Options{Getenv: g.env.Getenv, Log: g.logger(), Persistent: persistent, ConnectMCP: true})
			if err != nil {
				return err
			}
			defer a.Close()
			a.WaitForServers(c.Context())
			key := sessionKey
			if key == "" {
				key = "agent-" + randomHex(6)
			}
			req := app.TurnRequest{Session: key, Agent: agentID, Model: model,
				Input: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: message}}}}}
			if dryRun {
				dr, reply, err := a.Prepare(c.Context(), req)
				if err != nil {
					return err
				}
				if reply != "" {
					fmt.Fprintln(c.OutOrStdout(), reply)
					return nil
				}
				return writeJSON(c.OutOrStdout(), dr)
			}
			out, errw := c.OutOrStdout(), c.ErrOrStderr()
			var mu sync.Mutex
			var tools []toolEvent
			streamed := false
			req.Stream = !asJSON
			req.Observe = func(ev agent.Event) {
				mu.Lock()
				defer mu.Unlock()
				switch ev.Kind {
				case agent.EventText:
					if !asJSON {
						io.WriteString(out, ev.Text)
						streamed = true
					}
				case agent.EventToolStart:
					fmt.Fprintf(errw, "→ %s %s\n", ev.Call.Name, clipText(string(ev.Call.Args), 200))
				case agent.EventToolEnd:
					tools = append(tools, toolEvent{Name: ev.Call.Name, Args: ev.Call.Args, IsError: ev.Result.IsError})
					if ev.Result.IsError {
						fmt.Fprintf(errw, "✗ %s: %s\n", ev.Call.Name, clipText(ev.Result.Text(), 200))
					}
				}
			}
			res, err := a.Turn(c.Context(), req)
			mu.Lock()
			defer mu.Unlock()
			if streamed && (res == nil || !strings.HasSuffix(res.Text, "\n")) {
				io.WriteString(out, "\n")
			}
			if err != nil {
				return err
			}
			if asJSON {
				j := turnJSON{Model: res.Model, Text: res.Text, Steps: res.Steps, Finish: res.Finish, Usage: res.Usage, ClientCalls: res.ClientCalls, Tools: tools}
				if persistent {
					j.Session = key
				}
				return writeJSON(out, j)
			}
			if !streamed && res.Text != "" {
				fmt.Fprintln(out, res.Text)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&message, "message", "m", "", "the user message")
	f.StringVar(&sessionKey, "session", "", "keep the turn in this session (in $NODMIX_HOME/state.db); without it the session is not kept")
	f.StringVar(&model, "model", "", `model reference "provider/model" (default: the session's, the agent's, agents.defaults.model)`)
	f.StringVar(&agentID, "agent", "", "agents.list[] id whose defaults apply")
	f.BoolVar(&dryRun, "dry-run", false, "send nothing: print the provider request (headers masked) as JSON")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
