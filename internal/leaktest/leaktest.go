// Package leaktest checks at a test's cleanup that the goroutines the test started (nodmix's own,
// the MCP SDK's, os/exec's and net/http's) have ended: every goroutine must have an owner that waits.
package leaktest

import (
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Check fails t if goroutines started during it are still alive once every later-registered
// cleanup has run (after a grace of 10 s for them to end). Call it first in a test.
func Check(t testing.TB) { CheckWithin(t, 10*time.Second) }

// CheckWithin is Check with another grace period.
func CheckWithin(t testing.TB, grace time.Duration) {
	t.Helper()
	before := stacks()
	t.Cleanup(func() {
		var leaked []string
		deadline := time.Now().Add(grace)
		for {
			leaked = leaked[:0]
			for id, stack := range stacks() {
				if _, ok := before[id]; ok {
					continue
				}
				if strings.Contains(stack, "modelcontextprotocol") || strings.Contains(stack, "nodmix/internal") ||
					strings.Contains(stack, "os/exec") || strings.Contains(stack, "net/http") {
					leaked = append(leaked, stack)
				}
			}
			if len(leaked) == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if len(leaked) > 0 {
			t.Errorf("%d goroutines leaked; first:\n%s", len(leaked), leaked[0])
		}
	})
}

var header = regexp.MustCompile(`^goroutine (\d+) `)

// stacks returns the stack of every goroutine by id.
func stacks() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		if m := header.FindStringSubmatch(g); m != nil {
			out[m[1]] = g
		}
	}
	return out
}
