package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/search"
)

const inputSchema = `{"type":"object","properties":{"query":{"type":"string","description":"tool search query","examples":["kubernetes pod","image processing","git commit"]},"limit":{"type":"integer","minimum":1,"description":"max matches"}},"required":["query"],"additionalProperties":false}`

// Tool returns the search_tool_bm25 entry. snapshot gives the run's current, policy-filtered
// snapshot. The description is the general one; a session's view replaces it with
// DescribeCorpus of that session's hidden tools.
func (s *Service) Tool(snapshot func() *catalog.Snapshot) catalog.Entry {
	return catalog.Entry{
		Tool: catalog.Tool{
			ID:          catalog.ID(catalog.SourceBuiltin, "core", ToolName),
			Name:        ToolName,
			Label:       "SearchTools",
			Description: DescribeCorpus(nil),
			InputSchema: json.RawMessage(inputSchema),
			Source:      catalog.SourceBuiltin,
			Owner:       "core",
			LoadMode:    catalog.Essential,
		},
		Exec: catalog.ExecutorFunc(func(ctx context.Context, call catalog.Call) (*catalog.Result, error) {
			return s.execute(ctx, snapshot(), call)
		}),
	}
}

func (s *Service) execute(ctx context.Context, snap *catalog.Snapshot, call catalog.Call) (*catalog.Result, error) {
	var args struct {
		Query json.RawMessage `json:"query"`
		Limit json.RawMessage `json:"limit"`
	}
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return catalog.ErrorResult(ErrEmptyQuery.Error()), nil
	}
	if !s.Rules().Enabled() {
		return catalog.ErrorResult(ErrDisabled.Error()), nil
	}
	var query string
	if json.Unmarshal(args.Query, &query) != nil || strings.TrimSpace(query) == "" {
		return catalog.ErrorResult(ErrEmptyQuery.Error()), nil
	}
	limit, err := ParseLimit(args.Limit)
	if err != nil {
		return catalog.ErrorResult(err.Error()), nil
	}
	d, err := s.Search(ctx, snap, call.Session, query, limit)
	switch {
	case errors.Is(err, search.ErrNoTokens), errors.Is(err, ErrDisabled), errors.Is(err, ErrEmptyQuery), errors.Is(err, ErrBadLimit):
		return catalog.ErrorResult(err.Error()), nil
	case err != nil:
		return nil, err
	}
	out, _ := json.Marshal(d)
	return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: d.Content()}}, Structured: out}, nil
}

// Describe renders the model-facing description of search_tool_bm25 for a session: what it does,
// the discoverable MCP servers with their tool counts, and the input and output contract.
func (s *Service) Describe(ctx context.Context, snap *catalog.Snapshot, sess string) string {
	if snap == nil {
		return DescribeCorpus(nil)
	}
	corpus, err := s.Corpus(ctx, snap, sess)
	if err != nil {
		corpus = nil // the description degrades to the general one; the search itself reports errors
	}
	return DescribeCorpus(corpus)
}

// DescribeCorpus renders the description for a hidden corpus (nil: the general description).
func DescribeCorpus(corpus []*catalog.Tool) string {
	counts := map[string]int{}
	for _, t := range corpus {
		if t.Server != "" {
			counts[t.Server]++
		}
	}
	servers := make([]string, 0, len(counts))
	for name := range counts {
		servers = append(servers, name)
	}
	sort.Strings(servers)
	var b strings.Builder
	b.WriteString("Search the hidden tool index and activate the best matches for this session.\n")
	b.WriteString("Use it when you need a capability (an external system, an API, a service) that none of your visible tools offers: matching hidden MCP and built-in tools become callable.\n")
	if len(servers) > 0 {
		parts := make([]string, len(servers))
		for i, name := range servers {
			word := "tools"
			if counts[name] == 1 {
				word = "tool"
			}
			parts[i] = fmt.Sprintf("%s (%d %s)", name, counts[name], word)
		}
		fmt.Fprintf(&b, "\nDiscoverable MCP servers in this session: %s.\n", strings.Join(parts, ", "))
	}
	if len(corpus) > 0 {
		fmt.Fprintf(&b, "Total discoverable tools available: %d.\n", len(corpus))
	}
	b.WriteString(`
Input:
- query (required): keywords or a short natural-language description of the capability.
- limit (optional, default 8): how many matches to activate.

Behavior:
- Ranks hidden tools with BM25 over their name, label, server_name, mcp_tool_name, description/summary and schema_keys.
- Activates every returned match for the rest of this session; repeated searches only add tools, they never remove any.
- Activated tools are available before your next model call in this same turn.

Notes:
- Start with a limit of 5–10 and search again with other words if nothing fits.
- Matched fields: name, label, server_name, mcp_tool_name, description/summary, schema_keys.
- This searches tools, not files, code or the repository.

Returns JSON:
- query: the query as searched
- activated_tools: the tool names activated by this call
- match_count: how many tools matched
- total_tools: how many hidden tools were searched
`)
	return b.String()
}
