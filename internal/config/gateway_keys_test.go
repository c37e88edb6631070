package config

import "testing"

// TestGatewayMaxSessions reads gateway.maxSessions; unset is 0, the MCP server's default.
func TestGatewayMaxSessions(t *testing.T) {
	for text, want := range map[string]int{`{gateway: {maxSessions: 50}}`: 50, `{gateway: {listen: "127.0.0.1:9000"}}`: 0} {
		cfg, err := Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Gateway.MaxSessions != want {
			t.Errorf("%s: MaxSessions = %d, want %d", text, cfg.Gateway.MaxSessions, want)
		}
	}
}
