package provider_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

const anthropicOK = `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`

// TestRedirectsKeepTheKeyAtHome: net/http forwards every header but Authorization to the host a
// redirect names, so an x-api-key (and the Referer, which carries the base URL) would reach it.
func TestRedirectsKeepTheKeyAtHome(t *testing.T) {
	var elsewhere http.Header
	other := server(t, func(w http.ResponseWriter, r *http.Request) {
		elsewhere = r.Header.Clone()
		io.WriteString(w, anthropicOK)
	})
	// Another host: the same server under another name.
	other = strings.Replace(other, "127.0.0.1", "localhost", 1)
	var home http.Header
	first := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved/messages" {
			home = r.Header.Clone()
			io.WriteString(w, anthropicOK)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/self/") {
			http.Redirect(w, r, "/moved/messages", http.StatusTemporaryRedirect)
			return
		}
		http.Redirect(w, r, other+r.URL.Path, http.StatusTemporaryRedirect)
	})
	for _, c := range []struct {
		name, base, wantErr string
	}{
		{"same host", first + "/self", ""},
		{"another host", first + "/v1", `provider "anthropic": redirected to ` + other + ` — nodmix sends the key only to models.providers.anthropic.baseUrl: set it to the new address if it is the provider's`},
	} {
		t.Run(c.name, func(t *testing.T) {
			elsewhere, home = nil, nil
			r := registry(t, fmt.Sprintf(`{models: {providers: {anthropic: {baseUrl: %q, headers: {"X-Team": "team-token-123"}}}}}`, c.base), map[string]string{"ANTHROPIC_API_KEY": key}, nil)
			p, _, _ := r.Resolve("anthropic/claude-sonnet-4-6")
			text, err := collect(p, req())
			if c.wantErr == "" {
				if err != nil || text != "hello" || home.Get("X-Api-Key") != key {
					t.Errorf("text %q err %v key at home %q", text, err, home.Get("X-Api-Key"))
				}
				return
			}
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("err = %v\nwant %s", err, c.wantErr)
			}
			if elsewhere != nil {
				t.Errorf("the other host was called with %v", elsewhere)
			}
		})
	}
}
