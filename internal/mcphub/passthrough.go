package mcphub

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompts of all servers are offered as "<server>__<prompt>". Resources keep their URIs (a URI
// is already global); each one listed carries its server in _meta under MetaServer. When two
// servers list the same URI or namespaced prompt name, the server whose name sorts first owns it:
// the result never depends on which server connected first.
const (
	PromptSep  = "__"
	MetaServer = "nodmix/server"
)

// merged lists what every server holds (read by list under the server's lock), renamed or tagged
// by rename, keeping the first of equal keys in server-name order, sorted by key. The values are
// copies the caller may keep.
func merged[T any](h *Hub, list func(*downstream) []*T, rename func(d *downstream, v T) (T, string)) []*T {
	seen := map[string]bool{}
	type keyed struct {
		key string
		v   *T
	}
	var all []keyed
	for _, d := range h.servers {
		d.mu.Lock()
		for _, v := range list(d) {
			cp, key := rename(d, *v)
			if seen[key] {
				continue
			}
			seen[key] = true
			all = append(all, keyed{key, &cp})
		}
		d.mu.Unlock()
	}
	slices.SortFunc(all, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	out := make([]*T, len(all))
	for i, k := range all {
		out[i] = k.v
	}
	return out
}

// Prompts returns the prompts of every server that is ready or was, with namespaced names,
// sorted by name.
func (h *Hub) Prompts() []*mcp.Prompt {
	return merged(h, func(d *downstream) []*mcp.Prompt { return d.prompts },
		func(d *downstream, p mcp.Prompt) (mcp.Prompt, string) {
			p.Name = d.cfg.Name + PromptSep + p.Name
			return p, p.Name
		})
}

// lookupPrompt finds the server and original name of a namespaced prompt.
func (h *Hub) lookupPrompt(name string) (*downstream, string, error) {
	for _, d := range h.servers {
		orig, ok := strings.CutPrefix(name, d.cfg.Name+PromptSep)
		if !ok {
			continue
		}
		d.mu.Lock()
		found := slices.ContainsFunc(d.prompts, func(p *mcp.Prompt) bool { return p.Name == orig })
		d.mu.Unlock()
		if found {
			return d, orig, nil
		}
	}
	return nil, "", fmt.Errorf("%w: %q", ErrUnknownPrompt, name)
}

// GetPrompt renders a namespaced prompt on its server.
func (h *Hub) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	d, orig, err := h.lookupPrompt(name)
	if err != nil {
		return nil, err
	}
	c, err := d.await(ctx)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	done := c.request(d.h.clock)
	res, err := c.cs.GetPrompt(cctx, &mcp.GetPromptParams{Name: orig, Arguments: args})
	done(err)
	if err != nil {
		return nil, d.requestError(ctx, cctx, c, "prompts/get "+strconv.Quote(orig), err)
	}
	return res, nil
}

// Resources returns the resources of every server, sorted by URI, each tagged with its server.
func (h *Hub) Resources() []*mcp.Resource {
	return merged(h, func(d *downstream) []*mcp.Resource { return d.resources },
		func(d *downstream, r mcp.Resource) (mcp.Resource, string) {
			r.Meta = withServer(r.Meta, d.cfg.Name)
			return r, r.URI
		})
}

// ResourceTemplates returns the resource templates of every server, sorted by template, each
// tagged with its server.
func (h *Hub) ResourceTemplates() []*mcp.ResourceTemplate {
	return merged(h, func(d *downstream) []*mcp.ResourceTemplate { return d.templates },
		func(d *downstream, t mcp.ResourceTemplate) (mcp.ResourceTemplate, string) {
			t.Meta = withServer(t.Meta, d.cfg.Name)
			return t, t.URITemplate
		})
}

func withServer(m mcp.Meta, server string) mcp.Meta {
	out := make(mcp.Meta, len(m)+1)
	maps.Copy(out, m)
	out[MetaServer] = server
	return out
}

// lookupResource finds the server that serves uri: the one that listed it, else the one whose
// resource template has the longest literal prefix matching it.
func (h *Hub) lookupResource(uri string) (*downstream, bool) {
	for _, d := range h.servers {
		d.mu.Lock()
		found := slices.ContainsFunc(d.resources, func(r *mcp.Resource) bool { return r.URI == uri })
		d.mu.Unlock()
		if found {
			return d, true
		}
	}
	var best *downstream
	bestLen := 0
	for _, d := range h.servers {
		d.mu.Lock()
		for _, t := range d.templates {
			prefix, _, _ := strings.Cut(t.URITemplate, "{")
			if prefix != "" && strings.HasPrefix(uri, prefix) && len(prefix) > bestLen {
				best, bestLen = d, len(prefix)
			}
		}
		d.mu.Unlock()
	}
	return best, best != nil
}

// ReadResource reads a resource from the server that serves it.
func (h *Hub) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	d, ok := h.lookupResource(uri)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownResource, uri)
	}
	c, err := d.await(ctx)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	done := c.request(d.h.clock)
	res, err := c.cs.ReadResource(cctx, &mcp.ReadResourceParams{URI: uri})
	done(err)
	if err != nil {
		return nil, d.requestError(ctx, cctx, c, "resources/read "+strconv.Quote(uri), err)
	}
	return res, nil
}

// requestError reports a failed prompt or resource request. A refusal keeps the server's
// JSON-RPC error in the chain so that the MCP face can pass its code on.
func (d *downstream) requestError(ctx, cctx context.Context, c *conn, what string, err error) error {
	err, _ = d.classify(ctx, cctx, c, what, err)
	return err
}
