package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestServerConnectKeys reads mcp.servers.<name>.connectTimeoutMs and inheritEnv.
func TestServerConnectKeys(t *testing.T) {
	cfg, err := Parse([]byte(`{mcp: {servers: {
		slow: {command: "a", connectTimeoutMs: 2500, inheritEnv: true},
		plain: {command: "b"},
		web: {url: "http://h/mcp", connectTimeoutMs: 100},
	}}}`))
	if err != nil {
		t.Fatal(err)
	}
	type keys struct {
		Connect time.Duration
		Inherit bool
	}
	got := map[string]keys{}
	for name, s := range cfg.MCP.Servers {
		got[name] = keys{s.ConnectTimeout, s.InheritEnv}
	}
	want := map[string]keys{
		"slow":  {2500 * time.Millisecond, true},
		"plain": {0, false},
		"web":   {100 * time.Millisecond, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}
