package mcphub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Manifests keeps each server's last good tool listing between runs of nodmix (the app keeps
// them in the state store). With them, a server's tools are listed, searched and callable from
// the first request, while the server is still starting: a client that lists once, right after
// initialize, sees them. Implementations must be safe for concurrent use.
type Manifests interface {
	// LoadManifest returns what SaveManifest kept for the server, or nil (and no error) if nothing.
	LoadManifest(ctx context.Context, server string) ([]byte, error)
	SaveManifest(ctx context.Context, server string, data []byte) error
}

// manifestVersion changes when the stored shape does; an older manifest is ignored.
const manifestVersion = 1

// saveTimeout bounds one write of a manifest (the store may be busy with another process).
const saveTimeout = 5 * time.Second

// manifest is what is stored: the tools as the server listed them, and what started the server.
type manifest struct {
	Version int         `json:"version"`
	Server  string      `json:"server"`
	Config  string      `json:"config"` // configPrint of the server's config
	Saved   time.Time   `json:"saved"`
	Tools   []*mcp.Tool `json:"tools"`
}

// ErrStaleManifest is wrapped by decodeManifest when the manifest belongs to another
// configuration of the server (or another version of nodmix's format).
var ErrStaleManifest = errors.New("stale tool manifest")

// configPrint identifies what a manifest was listed from: the transport and its target, not the
// env or headers, so that no secret goes into the store and a rotated key keeps the cache.
func configPrint(c ServerConfig) string {
	b, _ := json.Marshal(struct {
		Transport, Command, Cwd, URL string
		Args                         []string
	}{c.Transport(), c.Command, c.Cwd, redactURL(c.URL), c.Args})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func encodeManifest(cfg ServerConfig, tools []*mcp.Tool, now time.Time) ([]byte, error) {
	if tools == nil {
		tools = []*mcp.Tool{}
	}
	return json.Marshal(manifest{Version: manifestVersion, Server: cfg.Name, Config: configPrint(cfg), Saved: now.UTC(), Tools: tools})
}

// encodedManifest is manifest with the tools already encoded (as toolsJSON): a listing is
// encoded once, while it is listed, and not again for the comparison and the manifest.
type encodedManifest struct {
	Version int             `json:"version"`
	Server  string          `json:"server"`
	Config  string          `json:"config"`
	Saved   time.Time       `json:"saved"`
	Tools   json.RawMessage `json:"tools"`
}

// encodeManifestJSON is encodeManifest, byte for byte, of tools given as toolsJSON encodes them.
func encodeManifestJSON(cfg ServerConfig, tools json.RawMessage, now time.Time) ([]byte, error) {
	if len(tools) == 0 || string(tools) == "null" {
		tools = json.RawMessage("[]")
	}
	return json.Marshal(encodedManifest{Version: manifestVersion, Server: cfg.Name, Config: configPrint(cfg), Saved: now.UTC(), Tools: tools})
}

func decodeManifest(cfg ServerConfig, data []byte) ([]*mcp.Tool, error) {
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("tool manifest of %q: %w", cfg.Name, err)
	}
	if m.Version != manifestVersion || m.Server != cfg.Name || m.Config != configPrint(cfg) {
		return nil, fmt.Errorf("tool manifest of %q: %w", cfg.Name, ErrStaleManifest)
	}
	return m.Tools, nil
}

// toolsJSON is the comparable form of a listing: a manifest is written again only when it changed
// (or once per run, to keep it fresh in the store).
func toolsJSON(tools []*mcp.Tool) []byte {
	b, err := json.Marshal(tools)
	if err != nil {
		return nil
	}
	return b
}

// loadManifests installs the cached tools of every runnable server before any connects. A
// missing, unreadable or stale manifest just means the server's tools come when it connects.
func (h *Hub) loadManifests(ctx context.Context) (loaded bool) {
	if h.manifests == nil {
		return false
	}
	for _, d := range h.servers {
		if !d.runnable() {
			continue
		}
		data, err := h.manifests.LoadManifest(ctx, d.cfg.Name)
		if err != nil {
			d.log.Warn("mcp server: reading its cached tool manifest failed", "err", err)
			continue
		}
		if data == nil {
			continue
		}
		tools, err := decodeManifest(d.cfg, data)
		if err != nil {
			d.log.Debug("mcp server: cached tool manifest not used", "err", err)
			continue
		}
		entries := d.entries(tools)
		d.mu.Lock()
		d.tools, d.cached, d.savedTools = entries, true, toolsJSON(tools)
		d.mu.Unlock()
		loaded = true
	}
	return loaded
}

// saveManifest keeps a good listing for the next run. encoded is tools as toolsJSON encodes
// them, made while they were listed; nil means they are encoded here. It runs on the server's
// run goroutine.
func (d *downstream) saveManifest(ctx context.Context, tools []*mcp.Tool, encoded []byte) {
	m := d.h.manifests
	if m == nil {
		return
	}
	cur := encoded
	if cur == nil {
		cur = toolsJSON(tools)
	}
	d.mu.Lock()
	same := d.savedThisRun && bytes.Equal(cur, d.savedTools)
	d.mu.Unlock()
	if same {
		return
	}
	var data []byte
	var err error
	if cur != nil {
		data, err = encodeManifestJSON(d.cfg, cur, d.h.clock.Now())
	} else {
		data, err = encodeManifest(d.cfg, tools, d.h.clock.Now())
	}
	if err == nil {
		// A listing made just before the hub closes is still worth keeping.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
		err = m.SaveManifest(sctx, d.cfg.Name, data)
		cancel()
	}
	if err != nil {
		d.log.Warn("mcp server: saving its tool manifest failed", "err", err)
		return
	}
	d.mu.Lock()
	d.savedTools, d.savedThisRun = cur, true
	d.mu.Unlock()
}
