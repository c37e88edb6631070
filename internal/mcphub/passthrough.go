package mcphub

import (
	"context"
	"fmt"
	"maps"
	"slices"
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

// Prompts returns the prompts of every server that is ready or was, with namespaced names,
// sorted by name. The values are copies the caller may keep.
func (h *Hub) Prompts() []*mcp.Prompt {
	seen := map[string]bool{}
	var out []*mcp.Prompt
	for _, d := range h.servers {
		d.mu.Lock()
		for _, p := range d.prompts {
			cp := *p
			cp.Name = d.cfg.Name + PromptSep + p.Name
			if seen[cp.Name] {
				continue
			}
			seen[cp.Name] = true
			out = append(out, &cp)
		}
		d.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b *mcp.Prompt) int { return strings.Compare(a.Name, b.Name) })
	return out
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
	c, err := d.session()
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	res, err := c.cs.GetPrompt(cctx, &mcp.GetPromptParams{Name: orig, Arguments: args})
	if err != nil {
		return nil, d.requestError(ctx, cctx, c, "prompts/get "+quote(orig), err)
	}
	return res, nil
}

// Resources returns the resources of every server, sorted by URI, each tagged with its server.
func (h *Hub) Resources() []*mcp.Resource {
	seen := map[string]bool{}
	var out []*mcp.Resource
	for _, d := range h.servers {
		d.mu.Lock()
		for _, r := range d.resources {
			if seen[r.URI] {
				continue
			}
			seen[r.URI] = true
			cp := *r
			cp.Meta = withServer(r.Meta, d.cfg.Name)
			out = append(out, &cp)
		}
		d.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b *mcp.Resource) int { return strings.Compare(a.URI, b.URI) })
	return out
}

// ResourceTemplates returns the resource templates of every server, sorted by template, each
// tagged with its server.
func (h *Hub) ResourceTemplates() []*mcp.ResourceTemplate {
	seen := map[string]bool{}
	var out []*mcp.ResourceTemplate
	for _, d := range h.servers {
		d.mu.Lock()
		for _, t := range d.templates {
			if seen[t.URITemplate] {
				continue
			}
			seen[t.URITemplate] = true
			cp := *t
			cp.Meta = withServer(t.Meta, d.cfg.Name)
			out = append(out, &cp)
		}
		d.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b *mcp.ResourceTemplate) int { return strings.Compare(a.URITemplate, b.URITemplate) })
	return out
}

func withServer(m mcp.Meta, server string) mcp.Meta {
	out := make(mcp.Meta, len(m)+1)
	maps.Copy(out, m)
	out[MetaServer] = server
	return out
}

// ResourceServer names the server that serves uri: the one that listed it, else the one whose
// resource template has the longest literal prefix matching it.
func (h *Hub) ResourceServer(uri string) (string, bool) {
	d, ok := h.lookupResource(uri)
	if !ok {
		return "", false
	}
	return d.cfg.Name, true
}

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
	c, err := d.session()
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	res, err := c.cs.ReadResource(cctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, d.requestError(ctx, cctx, c, "resources/read "+quote(uri), err)
	}
	return res, nil
}

// requestError reports a failed prompt or resource request. A refusal keeps the server's
// JSON-RPC error in the chain so that the MCP face can pass its code on.
func (d *downstream) requestError(ctx, cctx context.Context, c *conn, what string, err error) error {
	err, _ = d.classify(ctx, cctx, c, what, err)
	return err
}
