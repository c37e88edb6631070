package catalog_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/catalog"
)

func TestSafeName(t *testing.T) {
	long := strings.Repeat("x", 80)
	tests := []struct {
		name, id string
		check    func(string) bool
		what     string
	}{
		{"mcp__github__create_issue", "mcp:github:create_issue", func(s string) bool { return s == "mcp__github__create_issue" }, "valid names stay"},
		{"mcp__my.server__do it", "mcp:my.server:do it", func(s string) bool { return strings.HasPrefix(s, "mcp__my_server__do_it_") }, "illegal characters become _ with a hash"},
		{long, "mcp:a:" + long, func(s string) bool { return len(s) == 64 && strings.HasPrefix(s, "xxxx") }, "long names are cut to 64"},
	}
	for _, tt := range tests {
		got := catalog.SafeName(tt.name, tt.id)
		if !tt.check(got) || !catalog.ValidName(got) {
			t.Errorf("%s: SafeName(%q) = %q", tt.what, tt.name, got)
		}
		if again := catalog.SafeName(tt.name, tt.id); again != got {
			t.Errorf("%s: not deterministic: %q then %q", tt.what, got, again)
		}
	}
	// Two ids whose names clean up alike still get different names.
	a := catalog.SafeName("mcp__a.b__t", "mcp:a.b:t")
	b := catalog.SafeName("mcp__a_b__t", "mcp:a_b:t")
	c := catalog.SafeName("mcp__a b__t", "mcp:a b:t")
	if a == b || a == c {
		t.Errorf("collision after cleaning: %q %q %q", a, b, c)
	}
	if got := catalog.MCPName("github", "create_issue"); got != "mcp__github__create_issue" {
		t.Errorf("MCPName = %q", got)
	}
	if got := catalog.ID(catalog.SourcePlugin, "tavily", "tavily_search"); got != "nodmix:tavily:tavily_search" {
		t.Errorf("ID = %q", got)
	}
}

func entry(id, name string) catalog.Entry {
	return catalog.Entry{Tool: catalog.Tool{ID: id, Name: name}, Exec: catalog.ExecutorFunc(func(context.Context, catalog.Call) (*catalog.Result, error) {
		return catalog.TextResult(id), nil
	})}
}

func TestSnapshotCollisions(t *testing.T) {
	_, err := catalog.NewSnapshot(1, []catalog.Entry{entry("mcp:b:x", "same"), entry("mcp:a:y", "same")})
	var ce *catalog.CollisionError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a CollisionError", err)
	}
	// Reported with both ids, in id order whatever the arrival order.
	if ce.First != "mcp:a:y" || ce.Second != "mcp:b:x" || !strings.Contains(err.Error(), "mcp:a:y") || !strings.Contains(err.Error(), "mcp:b:x") {
		t.Errorf("collision = %+v (%v)", ce, err)
	}
	_, err = catalog.NewSnapshot(1, []catalog.Entry{entry("client:client:f", "f"), entry("client:client:f", "f")})
	if want := `tool id "client:client:f" is used by two tools`; err == nil || err.Error() != want {
		t.Errorf("duplicate ids: err = %v, want %s", err, want)
	}
}

func TestSnapshotLookup(t *testing.T) {
	s, err := catalog.NewSnapshot(3, []catalog.Entry{entry("mcp:z:t", "mcp__z__t"), entry("nodmix:core:exec", "exec")})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range s.Entries() {
		ids = append(ids, e.Tool.ID)
	}
	if diff := cmp.Diff([]string{"mcp:z:t", "nodmix:core:exec"}, ids); diff != "" {
		t.Errorf("entries not sorted by id (-want +got):\n%s", diff)
	}
	for _, key := range []string{"exec", "nodmix:core:exec"} {
		if e, ok := s.Lookup(key); !ok || e.Tool.ID != "nodmix:core:exec" {
			t.Errorf("Lookup(%q) = %v, %v", key, e, ok)
		}
	}
	if _, ok := s.Lookup("nope"); ok {
		t.Error("Lookup found an unknown tool")
	}
	f := s.Filter(func(t *catalog.Tool) bool { return t.Name == "exec" })
	if f.Len() != 1 || f.Version() != 3 {
		t.Errorf("Filter: len %d version %d", f.Len(), f.Version())
	}
}

type provider struct{ entries []catalog.Entry }

func (p *provider) Tools() []catalog.Entry { return p.entries }

func TestLiveCatalogKeepsLastGoodSnapshot(t *testing.T) {
	c := catalog.New(nil)
	p := &provider{entries: []catalog.Entry{entry("a", "a")}}
	notify := c.Add(p)
	var seen []int
	cancel := c.Watch(func(s *catalog.Snapshot) { seen = append(seen, s.Len()) })
	defer cancel()
	p.entries = append(p.entries, entry("b", "b"))
	notify()
	if c.Snapshot().Len() != 2 {
		t.Fatalf("len = %d, want 2", c.Snapshot().Len())
	}
	old := c.Snapshot()
	p.entries = append(p.entries, entry("c", "a")) // collides with a
	notify()
	if c.Snapshot() != old || c.Err() == nil {
		t.Errorf("a colliding rebuild replaced the snapshot (err %v)", c.Err())
	}
	if diff := cmp.Diff([]int{2}, seen); diff != "" {
		t.Errorf("watchers saw (-want +got):\n%s", diff)
	}
}

// A null input_schema is no schema: the tool takes the default object schema, like one without.
// TestWatchersSeeVersionsInOrder: rebuilds on many goroutines at once reach each watcher one
// at a time, in order of version, ending with the current snapshot.
func TestWatchersSeeVersionsInOrder(t *testing.T) {
	c := catalog.New(nil)
	notify := c.Add(catalog.Static{entry("a", "a")})
	var mu sync.Mutex
	var seen []uint64
	running := 0
	cancel := c.Watch(func(s *catalog.Snapshot) {
		mu.Lock()
		running++
		if running > 1 {
			t.Error("two calls of one watcher at once")
		}
		seen = append(seen, s.Version())
		mu.Unlock()
		time.Sleep(50 * time.Microsecond) // widen the window a second rebuild could overtake in
		mu.Lock()
		running--
		mu.Unlock()
	})
	defer cancel()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				notify()
			}
		})
	}
	wg.Wait()
	if len(seen) == 0 {
		t.Fatal("the watcher saw no snapshot")
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Fatalf("version %d after %d (call %d of %d)", seen[i], seen[i-1], i, len(seen))
		}
	}
	if last, cur := seen[len(seen)-1], c.Snapshot().Version(); last != cur {
		t.Errorf("the watcher last saw version %d; the current one is %d", last, cur)
	}
}

func TestReadFileNullSchema(t *testing.T) {
	tools, err := catalog.ReadFile(strings.NewReader(`{"id":"a","input_schema":null}` + "\n" + `{"id":"b"}`))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := string(tools[0].Schema()), string(tools[1].Schema()); a != b || a == "null" {
		t.Errorf("schemas: null gives %s, absent gives %s", a, b)
	}
}

func TestReadFile(t *testing.T) {
	tools, err := catalog.ReadFile(strings.NewReader(`{"id":"mcp__x","name":"mcp__x","server":"s","input_schema":{"properties":{"b":{},"a":{}}}}

{"id":"find","source":"builtin","description":"Find files"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 || tools[0].Source != catalog.SourceMCP || tools[1].Name != "find" || tools[1].Source != catalog.SourceBuiltin {
		t.Fatalf("tools = %+v", tools)
	}
	if diff := cmp.Diff([]string{"a", "b"}, tools[0].SchemaKeys()); diff != "" {
		t.Errorf("schema keys (-want +got):\n%s", diff)
	}
	bad := []struct{ in, want string }{
		{"{\"id\":\"a\"}\n{\"id\": nope}\n", "line 2: not a catalog entry"},
		{`{"name":"x"}`, "line 1: id: is required"},
		{`{"id":"a","source":"web"}`, "line 1: source: must be one of mcp, builtin, plugin, client"},
		{"{\"id\":\"a\"}\n{\"id\":\"a\"}", `line 2: id: "a" is already used on line 1`},
		{`{"id":"a","extra":1}`, `line 1: not a catalog entry: json: unknown field "extra"`},
		{`[1,2]`, "line 1: must be a JSON object"},
		{`{"id":"a","input_schema":[1]}`, "line 1: input_schema: must be a JSON object"},
		{`{"id":"a","input_schema":"x"}`, "line 1: input_schema: must be a JSON object"},
		{`{"id":"a"} trailing`, "line 1: not a catalog entry: text after the object"},
		{`{"id":"a"}{"id":"b"}`, "line 1: not a catalog entry: text after the object"},
		{`{"id":"a"}}`, "line 1: not a catalog entry: text after the object"},
	}
	for _, b := range bad {
		_, err := catalog.ReadFile(strings.NewReader(b.in))
		if err == nil || !strings.HasPrefix(err.Error(), b.want) {
			t.Errorf("%q: err = %v, want prefix %q", b.in, err, b.want)
		}
	}
}

func TestSummaryFallsBackToDescriptionUTF16(t *testing.T) {
	// 199 ASCII characters then an emoji (two UTF-16 units): the cut keeps the pair whole.
	desc := strings.Repeat("a", 199) + "😀" + "tail"
	tool := catalog.Tool{Description: desc}
	if got := tool.SummaryText(); got != strings.Repeat("a", 199) {
		t.Errorf("summary = %q", got)
	}
	tool.Summary = "explicit"
	if tool.SummaryText() != "explicit" {
		t.Error("explicit summary ignored")
	}
}

func TestPrefixUTF16(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 3, "hel"},
		{"hello", 10, "hello"},
		{"héllo", 2, "hé"},
		{"a😀b", 2, "a"}, // the pair would be cut in half
		{"a😀b", 3, "a😀"},
		{"", 5, ""},
	}
	for _, tt := range tests {
		if got := catalog.PrefixUTF16(tt.in, tt.n); got != tt.want {
			t.Errorf("PrefixUTF16(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func FuzzReadFile(f *testing.F) {
	f.Add([]byte(`{"id":"a","name":"a","input_schema":{"properties":{"x":{}}}}`))
	f.Add([]byte("{\"id\":\"a\"}\n\n{\"id\":\"b\",\"source\":\"client\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tools, err := catalog.ReadFile(strings.NewReader(string(data)))
		if err != nil {
			var le *catalog.LineError
			if !errors.As(err, &le) || le.Line < 1 {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, tool := range tools {
			if tool.ID == "" || tool.Name == "" || seen[tool.ID] {
				t.Fatalf("bad tool %+v", tool)
			}
			seen[tool.ID] = true
			_ = tool.SchemaKeys()
		}
	})
}
