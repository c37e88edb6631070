// Package gateway is nodmix's HTTP face: it routes /mcp and /healthz, listens on loopback by
// default, and requires a bearer token anywhere else. The agent API joins it in a later step.
package gateway

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// ErrTokenRequired is returned when the gateway would listen beyond loopback without a token.
var ErrTokenRequired = errors.New("a bearer token is required to listen on a non-loopback address")

// NewHandler is the gateway's routing: MCP at /mcp and a health check at /healthz. health may
// be nil; when it returns an error, /healthz answers 503 with the error.
func NewHandler(mcpHandler http.Handler, health func(context.Context) error) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpHandler)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if health != nil {
			if err := health(r.Context()); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				_ = json.NewEncoder(w).Encode(map[string]string{"status": "unhealthy", "error": err.Error()})
				return
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok"})
	})
	return mux
}

// CheckListen refuses an address beyond loopback without a token, and an address that is not
// host:port.
func CheckListen(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if token == "" && !isLoopback(host) {
		return fmt.Errorf("listen address %q: %w", addr, ErrTokenRequired)
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// ListenAndServe serves h on addr until ctx ends, then shuts down gracefully. Loopback needs no
// token; any other address does (ErrTokenRequired). With a token, every request except
// GET /healthz must carry "Authorization: Bearer <token>". Open SSE streams end when their MCP
// sessions do: close the Server when ctx ends, or shutdown waits 3 seconds before cutting them.
func ListenAndServe(ctx context.Context, addr, token string, h http.Handler) error {
	if err := CheckListen(addr, token); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	return ServeListener(ctx, ln, token, h)
}

// ServeListener is ListenAndServe on a listener the caller opened (tests use port 0). It takes
// ownership of ln.
func ServeListener(ctx context.Context, ln net.Listener, token string, h http.Handler) error {
	if err := CheckListen(ln.Addr().String(), token); err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           RequireToken(token, h),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Open SSE streams do not end by themselves: after a grace period, close them.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	<-errc
	return nil
}

// RequireToken wraps h so that every request but GET /healthz needs the bearer token. An empty
// token lets everything through.
func RequireToken(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" && r.Method == http.MethodGet {
			h.ServeHTTP(w, r)
			return
		}
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="nodmix"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
