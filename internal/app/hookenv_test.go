package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHooksDoNotGetSecrets: a before-call hook sees the call, not nodmix's keys.
func TestHooksDoNotGetSecrets(t *testing.T) {
	t.Setenv("TAVILY_API_KEY", "tvly-hook-secret")
	t.Setenv("MY_GATEWAY_SECRET", "gw-hook-secret")
	t.Setenv("PLAIN_SETTING", "visible")
	home := t.TempDir()
	cfg := `{
  gateway: {auth: {token: {"$env": "MY_GATEWAY_SECRET"}}},
  tools: {hooks: {beforeCall: [{command: ["sh", "-c", "test -z \"$TAVILY_API_KEY$MY_GATEWAY_SECRET\" && test \"$PLAIN_SETTING\" = visible || { echo leaked; exit 1; }"], tools: ["exec"]}]}},
}`
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"NODMIX_HOME": home, "HOME": home}
	a, err := New(context.Background(), Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	v, _ := a.Engine.Open(context.Background(), "s")
	res, err := v.CallFrom(context.Background(), "agent", "exec", json.RawMessage(`{"command":["true"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || strings.Contains(res.Text(), "leaked") {
		t.Errorf("the hook saw a secret or refused: %s", res.Text())
	}
}
