package gateway

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// sameOrigin refuses what a web page of another origin could make the user's browser send.
// Without a token the gateway answers anyone who reaches loopback, and every page the user opens
// does: a cross-origin POST needs no preflight when its body is text/plain or a form, so any
// site could run a turn, and its tools, on /v1/chat/completions; and a name of the site's own
// that it later resolves to 127.0.0.1 (DNS rebinding) makes its page same-origin, free to read
// the sessions' transcripts. So a request that changes something is refused when it comes from
// another origin (net/http's CrossOriginProtection: Sec-Fetch-Site, else Origin against Host),
// and, when there is no token, a request for a host that is not a loopback name.
// Non-browser clients send neither header and a loopback host, and are not affected.
func sameOrigin(token string, h http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token == "" && !loopbackHost(r.Host) {
			refuse(w, r, http.StatusForbidden, "invalid_request_error", "forbidden_host",
				fmt.Sprintf("host %q is not a loopback name: a gateway without a token answers only to localhost and loopback addresses (set gateway.auth.token to serve it under another name)", r.Host))
			return
		}
		if err := cop.Check(r); err != nil {
			refuse(w, r, http.StatusForbidden, "invalid_request_error", "cross_origin",
				"cross-origin request refused: only the gateway's own page may send it from a browser")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether the Host header host names loopback: localhost (and a name under
// .localhost, which browsers resolve to loopback themselves, never through DNS) or a loopback
// address. An empty Host (HTTP/1.0) is no browser's and passes.
func loopbackHost(host string) bool {
	if host == "" {
		return true
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(host, ".")
	return isLoopback(host) || strings.HasSuffix(strings.ToLower(host), ".localhost")
}

// refuse answers a request the gateway will not serve: OpenAI's error object under /v1/, which
// OpenAI's clients read, and plain text elsewhere.
func refuse(w http.ResponseWriter, r *http.Request, status int, typ, code, msg string) {
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		writeError(w, status, typ, code, msg)
		return
	}
	http.Error(w, msg, status)
}
