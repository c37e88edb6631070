package tavily

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/builtin/websearch"
)

// Fact 16 and improvements §6.10: hit, TTL, 0 disables, key fingerprint separation, bounded LRU.
func TestCache(t *testing.T) {
	type step struct {
		tool, args string
		advance    time.Duration // before the call
		setKey     string        // TAVILY_API_KEY before the call, if set
		wantCached bool
	}
	search := `{"query":"Go 1.25 release notes"}`
	extract := `{"urls":["https://go.dev/doc/go1.25"]}`
	tests := []struct {
		name     string
		settings map[string]any
		steps    []step
		wantReqs int
	}{
		{"a repeat is a hit", nil, []step{
			{tool: "tavily_search", args: search},
			{tool: "tavily_search", args: search, wantCached: true},
		}, 1},
		{"different arguments miss", nil, []step{
			{tool: "tavily_search", args: search},
			{tool: "tavily_search", args: `{"query":"Go 1.25 release notes","max_results":6}`},
			{tool: "tavily_search", args: `{"query":"Go 1.25 release notes","topic":"news"}`},
		}, 3},
		{"equivalent arguments hit", nil, []step{
			{tool: "tavily_search", args: `{"query":"go","max_results":5}`},
			{tool: "tavily_search", args: `{"query":" go ","include_answer":false}`, wantCached: true},
		}, 1},
		{"default TTL is 15 minutes", nil, []step{
			{tool: "tavily_search", args: search},
			{tool: "tavily_search", args: search, advance: 15*time.Minute - time.Second, wantCached: true},
			{tool: "tavily_search", args: search, advance: time.Second},
		}, 2},
		{"configured TTL", map[string]any{settingCacheTTL: 1}, []step{
			{tool: "tavily_search", args: search},
			{tool: "tavily_search", args: search, advance: 59 * time.Second, wantCached: true},
			{tool: "tavily_search", args: search, advance: time.Second},
		}, 2},
		{"0 disables", map[string]any{settingCacheTTL: 0}, []step{
			{tool: "tavily_search", args: search},
			{tool: "tavily_search", args: search},
			{tool: "tavily_extract", args: extract},
			{tool: "tavily_extract", args: extract},
		}, 4},
		{"another key does not see the first key's entries", nil, []step{
			{tool: "tavily_search", args: search},
			{tool: "tavily_search", args: search, setKey: "tvly-other-tenant"},
			{tool: "tavily_search", args: search, setKey: "tvly-other-tenant", wantCached: true},
			{tool: "tavily_search", args: search, setKey: testKey, wantCached: true},
		}, 2},
		{"extract has its own cache", nil, []step{
			{tool: "tavily_extract", args: extract},
			{tool: "tavily_search", args: search},
			{tool: "tavily_extract", args: extract, wantCached: true},
		}, 2},
		{"errors are not cached", nil, []step{
			{tool: "tavily_search", args: `{"query":"bad"}`},
			{tool: "tavily_search", args: `{"query":"bad"}`},
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var replies []reply
			if strings.HasPrefix(tt.name, "errors") {
				replies = []reply{{400, nil, `{"detail":{"error":"nope"}}`}}
			}
			r := newRig(t, rigOpts{settings: tt.settings, replies: replies})
			for i, s := range tt.steps {
				r.clock.advance(s.advance)
				if s.setKey != "" {
					r.env.set(EnvAPIKey, s.setKey)
				}
				res := r.call(t, s.tool, s.args)
				if res.IsError {
					continue
				}
				m := structured(t, res)
				if got := m["cached"] == true; got != s.wantCached {
					t.Errorf("step %d: cached = %v, want %v", i, got, s.wantCached)
				}
			}
			if n := r.srv.count(); n != tt.wantReqs {
				t.Errorf("%d requests, want %d", n, tt.wantReqs)
			}
		})
	}
}

// web_search and tavily_search share the search cache: the same request is the same entry.
func TestCacheSharedWithWebSearch(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.call(t, "tavily_search", `{"query":"go","max_results":7}`)
	resp, err := r.p.WebSearchProvider().Search(context.Background(), websearch.Query{Query: "go", Count: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Cached || r.srv.count() != 1 {
		t.Errorf("cached = %v after %d requests", resp.Cached, r.srv.count())
	}
}

// A cached response is served as a copy: marking it cached does not change the stored value.
func TestCacheHitDoesNotMutateTheEntry(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.call(t, "tavily_search", `{"query":"go"}`)
	r.call(t, "tavily_search", `{"query":"go"}`)
	for _, k := range r.p.searches.keys() {
		v, ok := r.p.searches.get(k, r.clock.now())
		if !ok || v.Cached {
			t.Errorf("stored entry: ok=%v cached=%v", ok, v != nil && v.Cached)
		}
	}
}

func TestLRU(t *testing.T) {
	now := time.Unix(0, 0)
	c := newLRU[int](3, 1<<20, time.Minute)
	for i := range 4 {
		c.put(fmt.Sprint(i), i, 1, now)
	}
	if _, ok := c.get("0", now); ok {
		t.Error("the oldest entry survived past the bound")
	}
	if c.len() != 3 {
		t.Errorf("len = %d, want 3", c.len())
	}
	c.get("1", now) // 1 becomes the most recent
	c.put("4", 4, 1, now)
	if _, ok := c.get("2", now); ok {
		t.Error("the least recently used entry survived")
	}
	if v, ok := c.get("1", now); !ok || v != 1 {
		t.Error("a recently used entry was evicted")
	}
	c.put("1", 10, 1, now)
	if v, _ := c.get("1", now); v != 10 {
		t.Errorf("update: %d", v)
	}
	if _, ok := c.get("1", now.Add(time.Minute)); ok {
		t.Error("an expired entry was served")
	}
	if c.len() != 2 {
		t.Errorf("expired entry not dropped: len %d", c.len())
	}
	off := newLRU[int](3, 1<<20, 0)
	off.put("a", 1, 1, now)
	if _, ok := off.get("a", now); ok || off.len() != 0 {
		t.Error("a disabled cache kept an entry")
	}

	b := newLRU[int](10, 100, time.Minute)
	b.put("a", 1, 60, now)
	b.put("b", 2, 30, now)
	b.put("c", 3, 30, now) // 120 bytes: a, the oldest, goes
	if _, ok := b.get("a", now); ok || b.len() != 2 || b.bytes() != 60 {
		t.Errorf("over the byte budget: a kept=%v len=%d bytes=%d, want false 2 60", ok, b.len(), b.bytes())
	}
	b.put("b", 2, 10, now) // replacing an entry counts its new size only
	if b.bytes() != 40 {
		t.Errorf("after replacing b: bytes=%d, want 40", b.bytes())
	}
	b.put("huge", 4, 101, now)
	if _, ok := b.get("huge", now); ok || b.len() != 2 {
		t.Errorf("an entry larger than the budget was cached (len %d)", b.len())
	}
}

func TestCacheKey(t *testing.T) {
	body := []byte(`{"query":"q","max_results":5}`)
	a := cacheKey("search", "https://api.tavily.com/search", body, testKey)
	if a != cacheKey("search", "https://api.tavily.com/search", body, testKey) {
		t.Error("cache key is not deterministic")
	}
	for name, other := range map[string]string{
		"key":      cacheKey("search", "https://api.tavily.com/search", body, "tvly-other"),
		"endpoint": cacheKey("search", "https://proxy.example/search", body, testKey),
		"op":       cacheKey("extract", "https://api.tavily.com/search", body, testKey),
		"body":     cacheKey("search", "https://api.tavily.com/search", []byte(`{"query":"q","max_results":6}`), testKey),
	} {
		if other == a {
			t.Errorf("a different %s gives the same cache key", name)
		}
	}
	if strings.Contains(a, testKey) || strings.Contains(keyFingerprint(testKey), testKey) || len(keyFingerprint(testKey)) != 16 {
		t.Errorf("key %q / fingerprint %q", a, keyFingerprint(testKey))
	}
}

func BenchmarkSearchCached(b *testing.B) {
	r := newRig(b, rigOpts{})
	e := r.p.Tools()[0]
	call := callOf(&e, `{"query":"Go 1.25 release notes","max_results":8,"include_domains":["go.dev"]}`)
	if _, err := e.Exec.Execute(context.Background(), call); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := e.Exec.Execute(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSearchUncached(b *testing.B) {
	r := newRig(b, rigOpts{settings: map[string]any{settingCacheTTL: 0}})
	e := r.p.Tools()[0]
	call := callOf(&e, `{"query":"Go 1.25 release notes","include_answer":true}`)
	for b.Loop() {
		if _, err := e.Exec.Execute(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}

// Concurrent calls share the client and the caches safely (run with -race).
func TestConcurrentCalls(t *testing.T) {
	r := newRig(t, rigOpts{})
	tools := r.p.Tools()
	provider := r.p.WebSearchProvider()
	const n = 8
	errs := make(chan string, 3*n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(3)
		go func() {
			defer wg.Done()
			res, err := tools[0].Exec.Execute(context.Background(), callOf(&tools[0], fmt.Sprintf(`{"query":"search %d"}`, i)))
			if err != nil || res.IsError {
				errs <- fmt.Sprint(err, res.Text())
			}
		}()
		go func() {
			defer wg.Done()
			res, err := tools[1].Exec.Execute(context.Background(), callOf(&tools[1], fmt.Sprintf(`{"urls":["https://go.dev/%d"]}`, i)))
			if err != nil || res.IsError {
				errs <- fmt.Sprint(err, res.Text())
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := provider.Search(context.Background(), websearch.Query{Query: fmt.Sprintf("web %d", i)}); err != nil {
				errs <- err.Error()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := r.srv.count(); got != 3*n {
		t.Errorf("%d requests, want %d", got, 3*n)
	}
	if r.p.searches.len() != 2*n || r.p.extracts.len() != n {
		t.Errorf("cache sizes %d, %d", r.p.searches.len(), r.p.extracts.len())
	}
}

// The cache is bounded by bytes as well as by entries: 256 advanced extracts of a few MB each
// would otherwise keep gigabytes in a long-running gateway. Twelve 4 MiB pages exceed the budget;
// the oldest is fetched again, the newest is still a hit, and what is held stays within the budget.
func TestCacheBoundedByBytes(t *testing.T) {
	page := strings.Repeat("lorem ipsum ", (4<<20)/12)
	body := fmt.Sprintf(`{"results":[{"url":"https://example.com/p","raw_content":%q}]}`, page)
	const pages = 12
	replies := make([]reply, pages+2)
	for i := range replies {
		replies[i] = reply{status: 200, body: body}
	}
	r := newRig(t, rigOpts{replies: replies})
	args := func(i int) string { return fmt.Sprintf(`{"urls":["https://example.com/p%d"]}`, i) }
	for i := range pages {
		if res := r.call(t, "tavily_extract", args(i)); res.IsError {
			t.Fatalf("extract %d: %s", i, res.Text())
		}
	}
	if held := r.p.extracts.bytes(); held > cacheMaxBytes {
		t.Errorf("the extract cache holds %d bytes, more than its budget of %d", held, cacheMaxBytes)
	}
	if m := structured(t, r.call(t, "tavily_extract", args(pages-1))); m["cached"] != true {
		t.Error("the most recent extract is not cached")
	}
	before := r.srv.count()
	if m := structured(t, r.call(t, "tavily_extract", args(0))); m["cached"] == true {
		t.Error("the oldest extract is still cached after the budget was exceeded")
	}
	if n := r.srv.count(); n != before+1 {
		t.Errorf("%d requests for the evicted extract, want 1", n-before)
	}
}
