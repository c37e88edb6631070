package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/mcphub"
	"github.com/nodmix/nodmix/internal/session"
)

// manifestKey is the state-store key of a server's cached tool listing. Manifests are kept under
// the empty session: they belong to the installation, not to a client.
func manifestKey(server string) string { return "mcp-manifest:" + server }

// manifestStore keeps the hub's tool manifests in the session store.
type manifestStore struct{ s session.Store }

var _ mcphub.Manifests = manifestStore{}

func (m manifestStore) LoadManifest(ctx context.Context, server string) ([]byte, error) {
	b, err := m.s.Blob(ctx, manifestKey(server))
	if errors.Is(err, session.ErrNotFound) {
		return nil, nil
	}
	return b, err
}

func (m manifestStore) SaveManifest(ctx context.Context, server string, data []byte) error {
	return m.s.PutBlob(ctx, "", manifestKey(server), data)
}

// MetaConnected is the _meta key that marks, with false, a listed tool whose server has not
// connected yet in this run: the tool comes from the server's cached manifest, and a call waits
// for the server.
const MetaConnected = "nodmix/connected"

// toolMeta is the exposure engine's ToolMeta.
func (a *App) toolMeta(t *catalog.Tool) map[string]any {
	if a.Hub == nil || t.Source != catalog.SourceMCP || !a.Hub.FromCache(t.Server) {
		return nil
	}
	return map[string]any{MetaConnected: false}
}

// serversListed waits until the tools of every downstream server are known (from its cached
// manifest or its first connection attempt), or until ctx ends: searches and first tool lists
// wait for it through exposure.Engine.Ready.
func (a *App) serversListed(ctx context.Context) {
	if a.Hub != nil {
		_ = a.Hub.Listed(ctx)
	}
}

// noteAfter is how long a one-shot command waits for servers before it says which ones.
const noteAfter = time.Second

// AwaitServers is WaitForServers for a command whose user sees stderr: when servers hold it up for
// more than a second, note is called with a line that names them, and with another if the wait
// gives up on some. note may be nil.
func (a *App) AwaitServers(ctx context.Context, note func(line string)) {
	if a.Hub == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, serverWait)
	defer cancel()
	if note == nil {
		_ = a.Hub.Settled(ctx)
		return
	}
	quiet, cancelQuiet := context.WithTimeout(ctx, noteAfter)
	err := a.Hub.Settled(quiet)
	cancelQuiet()
	if err == nil || ctx.Err() != nil {
		return
	}
	start := time.Now()
	waiting := a.Hub.Unsettled()
	if len(waiting) == 0 {
		return
	}
	bound := noteAfter
	for _, name := range waiting {
		bound = max(bound, min(serverWait, a.Hub.ConnectTimeout(name)))
	}
	note(fmt.Sprintf("nodmix: waiting for %s to connect (at most %s more)", serverList(waiting), (bound - noteAfter).Round(time.Second)))
	if err := a.Hub.Settled(ctx); err != nil {
		if left := a.Hub.Unsettled(); len(left) > 0 {
			its := "its tools are"
			if len(left) > 1 {
				its = "their tools are"
			}
			note(fmt.Sprintf("nodmix: gave up on %s after %s; %s left out (mcp.servers.<name>.connectTimeoutMs sets a server's deadline)",
				serverList(left), (noteAfter + time.Since(start)).Round(time.Second), its))
		}
	}
}

// serverList names servers for people: `mcp server "a"`, `mcp servers "a", "b"`.
func serverList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) == 1 {
		return "mcp server " + q[0]
	}
	return "mcp servers " + strings.Join(q, ", ")
}
