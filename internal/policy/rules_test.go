package policy

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
)

var (
	execTool   = catalog.Tool{ID: "nodmix:core:exec", Name: "exec", Source: catalog.SourceBuiltin, Owner: "core"}
	tavilyTool = catalog.Tool{ID: "nodmix:tavily:tavily_search", Name: "tavily_search", Source: catalog.SourcePlugin, Owner: "tavily"}
	ghCreate   = catalog.Tool{ID: "mcp:github:create_issue", Name: "mcp__github__create_issue", Source: catalog.SourceMCP, Owner: "github", Server: "github"}
	ghDelete   = catalog.Tool{ID: "mcp:github:delete_repo", Name: "mcp__github__delete_repo", Source: catalog.SourceMCP, Owner: "github", Server: "github"}
	fsRead     = catalog.Tool{ID: "mcp:fs:read_file", Name: "mcp__fs__read_file", Source: catalog.SourceMCP, Owner: "fs", Server: "fs"}
	allTools   = []catalog.Tool{execTool, tavilyTool, ghCreate, ghDelete, fsRead}
)

func allowedIDs(p dispatch.Policy) []string {
	var out []string
	for i := range allTools {
		if p.Allowed(&allTools[i]) {
			out = append(out, allTools[i].ID)
		}
	}
	return out
}

func TestRulesAllowed(t *testing.T) {
	tests := []struct {
		name  string
		rules Rules
		want  []string
	}{
		{"empty allows all", Rules{}, []string{execTool.ID, tavilyTool.ID, ghCreate.ID, ghDelete.ID, fsRead.ID}},
		{"allow by id glob", Rules{Allow: []string{"mcp:github:*"}}, []string{ghCreate.ID, ghDelete.ID}},
		{"allow by name", Rules{Allow: []string{"exec", "tavily_*"}}, []string{execTool.ID, tavilyTool.ID}},
		{"allow by model-facing mcp name", Rules{Allow: []string{"mcp__fs__*"}}, []string{fsRead.ID}},
		{"deny wins over allow", Rules{Allow: []string{"mcp:*"}, Deny: []string{"*delete*"}}, []string{ghCreate.ID, fsRead.ID}},
		{"deny only", Rules{Deny: []string{"nodmix:*"}}, []string{ghCreate.ID, ghDelete.ID, fsRead.ID}},
		{"star crosses colons", Rules{Allow: []string{"*:read_file"}}, []string{fsRead.ID}},
		{"deny everything", Rules{Allow: []string{"*"}, Deny: []string{"*"}}, nil},
		{"malformed deny fails closed", Rules{Deny: []string{"mcp:[x"}}, nil},
		{"malformed allow allows nothing it names", Rules{Allow: []string{"mcp:[x", "exec"}}, []string{execTool.ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, allowedIDs(tt.rules)); diff != "" {
				t.Errorf("allowed ids (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRulesValidate(t *testing.T) {
	tests := []struct {
		rules Rules
		want  string
	}{
		{Rules{Allow: []string{"mcp:*"}, Deny: []string{"exec"}}, ""},
		{Rules{Deny: []string{"exec", "mcp:[x"}}, `tools.deny[1]: "mcp:[x" unterminated character class`},
		{Rules{Allow: []string{""}}, `tools.allow[0]: "" must not be empty`},
	}
	for _, tt := range tests {
		got := ""
		if err := tt.rules.Validate(); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("Validate(%+v) = %q, want %q", tt.rules, got, tt.want)
		}
	}
}

// TestRulesInPipeline checks that a denied tool fails on call with ErrDenied.
func TestRulesInPipeline(t *testing.T) {
	ran := false
	exec := catalog.ExecutorFunc(func(context.Context, catalog.Call) (*catalog.Result, error) {
		ran = true
		return catalog.TextResult("ran"), nil
	})
	snap, err := catalog.NewSnapshot(1, []catalog.Entry{{Tool: ghDelete, Exec: exec}, {Tool: ghCreate, Exec: exec}})
	if err != nil {
		t.Fatal(err)
	}
	p := &dispatch.Pipeline{Policy: Rules{Deny: []string{"*delete*"}}}
	_, err = p.Call(context.Background(), snap, dispatch.Request{Target: ghDelete.ID})
	if !errors.Is(err, dispatch.ErrDenied) || ran {
		t.Fatalf("denied call: err = %v, ran = %v; want ErrDenied and not run", err, ran)
	}
	res, err := p.Call(context.Background(), snap, dispatch.Request{Target: ghCreate.Name})
	if err != nil || res.Text() != "ran" {
		t.Fatalf("allowed call: %v, %v", res, err)
	}
}

// BenchmarkRulesAllowed is one policy decision with a realistic rule set.
func BenchmarkRulesAllowed(b *testing.B) {
	r := Rules{Allow: []string{"nodmix:*", "mcp:github:*", "mcp:fs:read_*", "client:*"}, Deny: []string{"*delete*", "*:exec", "mcp:*:*_admin"}}
	tools := []catalog.Tool{execTool, tavilyTool, ghCreate, ghDelete, fsRead}
	i := 0
	for b.Loop() {
		r.Allowed(&tools[i%len(tools)])
		i++
	}
}
