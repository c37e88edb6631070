package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode"

	"github.com/nodmix/nodmix/internal/policy"
)

// terminalAsker asks for approvals on the controlling terminal. Prompts are serialized.
type terminalAsker struct {
	mu  sync.Mutex
	env Env
}

// terminalAsker returns the CLI's asker: a prompt when stdin is a terminal, otherwise nobody.
func (g *globals) terminalAsker() policy.Asker { return &terminalAsker{env: g.env} }

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	return isTerminalFd(int(f.Fd()))
}

// Ask implements policy.Asker.
func (t *terminalAsker) Ask(ctx context.Context, req policy.ApprovalRequest) (policy.Decision, error) {
	if !isTerminal(t.env.Stdin) {
		return policy.Decision{}, fmt.Errorf("%w: stdin is not a terminal", policy.ErrCannotAsk)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.env.Stderr, "Approve a call to %s (rule %q) with arguments %s? [y/N] ", visible(req.ToolID), req.Pattern, visible(string(req.Args)))
	// The read cannot be interrupted, so it runs apart from ctx: it ends when the person answers
	// or stdin closes, at the latest when the process exits.
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(t.env.Stdin).ReadString('\n')
		answer <- line
	}()
	select {
	case <-ctx.Done():
		return policy.Decision{}, ctx.Err()
	case line := <-answer:
		line = strings.TrimSpace(line)
		if !strings.EqualFold(line, "y") && !strings.EqualFold(line, "yes") {
			return policy.Decision{Approve: false, Reason: "the user declined"}, nil
		}
		return policy.Decision{Approve: true}, nil
	}
}

// visible escapes, as \uXXXX, the characters that would act on the terminal instead of showing:
// controls (C0 and C1, U+009B starting an escape that can rewrite the line) and bidi controls
// (which reorder what follows). In JSON the escapes mean the same characters, so a person
// approving arguments reads exactly what the tool would get.
func visible(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) { // all of them are in the Basic Multilingual Plane
			fmt.Fprintf(&b, "\\u%04x", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hidden(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }

func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
