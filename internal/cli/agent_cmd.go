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
	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/directive"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/provider"
	"github.com/nodmix/nodmix/internal/session"
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
	Trace       []string    `json:"trace,omitempty"`
}

type toolEvent struct {
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"args,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
}

// agentFlag checks an --agent value: none, or the id of an agents.list[] entry. An unknown id
// is refused rather than run as the defaults, which would drop what the entry narrows
// (tools.allow / deny) on a typo.
func agentFlag(agents config.Agents, id string) error {
	if id == "" {
		return nil
	}
	if _, ok := agents.Agent(id); ok {
		return nil
	}
	known := make([]string, 0, len(agents.Each))
	for _, s := range agents.Each {
		known = append(known, s.ID)
	}
	if len(known) == 0 {
		return usagef("--agent %q: agents.list sets no agent", clipText(id, 80))
	}
	return usagef("--agent %q: not an id of agents.list (known: %s)", clipText(id, 80), strings.Join(known, ", "))
}

// sessionFlag checks a --session value: empty (none given) or a valid session key.
func sessionFlag(key string) error {
	if key == "" {
		return nil
	}
	if err := session.CheckKey(key); err != nil {
		return usagef("--session: %w", err)
	}
	return nil
}

func newAgentCmd(g *globals) *cobra.Command {
	var message, sessionKey, model, agentID string
	var dryRun, asJSON, heartbeat bool
	cmd := &cobra.Command{
		Use:   "agent -m MESSAGE [--session KEY] [--model PROVIDER/MODEL]",
		Short: "Run one agent turn: the answer on stdout, tool calls on stderr as they start",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if strings.TrimSpace(message) == "" && !heartbeat {
				return usagef("agent: -m MESSAGE is required (or --heartbeat)")
			}
			// The check the provider registry makes, before anything starts.
			if id, m, ok := strings.Cut(model, "/"); model != "" && (!ok || id == "" || m == "") {
				return usagef("--model %q: %w", clipText(model, 80), provider.ErrModelRef)
			}
			if err := sessionFlag(sessionKey); err != nil {
				return err
			}
			// Without --session the turn runs in a fresh session that is not kept.
			persistent := sessionKey != ""
			a, err := app.New(c.Context(), app.Options{Getenv: g.env.Getenv, Log: g.logger(), Persistent: persistent, ConnectMCP: true, Version: Version})
			if err != nil {
				return err
			}
			defer a.Close()
			if err := agentFlag(a.Config.Agents, agentID); err != nil {
				return err
			}
			a.AwaitServers(c.Context(), g.note)
			key := sessionKey
			if key == "" {
				key = "agent-" + randomHex(6)
			}
			if heartbeat && strings.TrimSpace(message) == "" {
				message = a.HeartbeatPrompt(agentID)
			}
			req := app.TurnRequest{Session: key, Agent: agentID, Model: model, Heartbeat: heartbeat,
				Input: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: message}}}}}
			if dryRun {
				dr, reply, err := a.Prepare(c.Context(), req)
				if err != nil {
					return err
				}
				if reply != "" {
					fmt.Fprintln(c.OutOrStdout(), sanitizeStream(reply))
					return nil
				}
				return writeJSON(c.OutOrStdout(), dr)
			}
			out, errw := c.OutOrStdout(), c.ErrOrStderr()
			var mu sync.Mutex
			var tools []toolEvent
			var levels directive.Resolved
			sh := &shaper{out: out, detail: a.ToolProgressDetail(agentID)}
			req.Stream = !asJSON
			req.Levels = func(l directive.Resolved) { levels = l }
			req.Observe = func(ev agent.Event) {
				mu.Lock()
				defer mu.Unlock()
				switch ev.Kind {
				case agent.EventToolStart:
					fmt.Fprintf(errw, "→ %s %s\n", sanitize(ev.Call.Name), sanitize(clipText(string(ev.Call.Args), 200)))
				case agent.EventToolEnd:
					tools = append(tools, toolEvent{Name: ev.Call.Name, Args: ev.Call.Args, IsError: ev.Result.IsError})
					if ev.Result.IsError {
						fmt.Fprintf(errw, "✗ %s: %s\n", sanitize(ev.Call.Name), sanitize(clipText(ev.Result.Text(), 200)))
					}
				}
				if !asJSON {
					sh.event(ev, levels)
				}
			}
			res, err := a.Turn(c.Context(), req)
			mu.Lock()
			defer mu.Unlock()
			if res != nil && res.Notice != "" {
				fmt.Fprintln(errw, res.Notice)
			}
			if err != nil {
				sh.end()
				return err
			}
			if asJSON {
				j := turnJSON{Model: res.Model, Text: res.Text, Steps: res.Steps, Finish: res.Finish, Usage: res.Usage, ClientCalls: res.ClientCalls, Tools: tools}
				if res.Levels.Trace == "on" || res.Levels.Trace == "raw" {
					j.Trace = agent.TraceLines(res.Tools)
				}
				if persistent {
					j.Session = key
				}
				return writeJSON(out, j)
			}
			if !sh.streamed && res.Text != "" {
				sh.text(res.Text)
			}
			sh.end()
			if res.Levels.Trace == "on" || res.Levels.Trace == "raw" {
				for _, line := range agent.TraceLines(res.Tools) {
					fmt.Fprintln(out, sanitizeStream(line))
				}
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
	f.BoolVar(&heartbeat, "heartbeat", false, "send the heartbeat probe (agents.defaults.heartbeat.prompt, else the documented one) instead of -m; its directives never change the session")
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

// shaper prints a turn for a person as the session's levels say: the answer as it streams,
// reasoning as its own "Thinking" message with /reasoning on, a line per tool call with
// /verbose on, and the tool's output after it with /verbose full. Calls are serialised by the
// caller.
type shaper struct {
	out      io.Writer
	detail   string // agents.defaults.toolProgressDetail: explain or raw
	streamed bool   // answer text has been printed
	midLine  bool   // the last thing printed did not end a line
	thinking bool   // a Thinking message is open
	pending  strings.Builder
}

func (s *shaper) event(ev agent.Event, l directive.Resolved) {
	switch ev.Kind {
	case agent.EventText:
		s.text(ev.Text)
	case agent.EventReasoning:
		if l.Reasoning != "on" && l.Reasoning != "stream" {
			return
		}
		if s.streamed && !s.thinking {
			// Reasoning found inside an answer already on screen is shown after it, not in
			// the middle of a sentence.
			s.pending.WriteString(ev.Text)
			return
		}
		if !s.thinking {
			s.breakLine()
			io.WriteString(s.out, "Thinking\n")
			s.thinking = true
		}
		s.write(ev.Text)
	case agent.EventToolStart:
		if l.Verbose == "on" || l.Verbose == "full" {
			s.line(agent.ToolSummary(*ev.Call, s.detail))
		}
	case agent.EventToolEnd:
		run := agent.ToolRun{Call: *ev.Call, Result: ev.Result}
		switch {
		case ev.Result.IsError && (l.Verbose == "on" || l.Verbose == "full"):
			s.line(agent.ToolFailure(run, l.Verbose == "full"))
		case l.Verbose == "full":
			s.line(agent.ToolOutput(run))
		}
	}
}

func (s *shaper) text(t string) {
	if s.thinking {
		s.breakLine()
		io.WriteString(s.out, "\n")
		s.thinking = false
	}
	s.write(t)
	s.streamed = true
}

func (s *shaper) write(t string) {
	if t == "" {
		return
	}
	io.WriteString(s.out, sanitizeStream(t))
	s.midLine = !strings.HasSuffix(t, "\n")
}

func (s *shaper) line(t string) {
	s.breakLine()
	s.thinking = false
	io.WriteString(s.out, sanitizeStream(t)+"\n")
}

func (s *shaper) breakLine() {
	if s.midLine {
		io.WriteString(s.out, "\n")
		s.midLine = false
	}
}

// end finishes the last line and shows reasoning held back during the answer.
func (s *shaper) end() {
	s.breakLine()
	if s.pending.Len() > 0 {
		io.WriteString(s.out, "Thinking\n"+strings.TrimSpace(s.pending.String())+"\n")
		s.pending.Reset()
	}
}
