// Package gateway is nodmix's HTTP face: it routes /mcp and /healthz, listens on loopback by
// default, requires a bearer token anywhere else, and bounds what one connection may hold.
package gateway

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/nodmix/nodmix/internal/webchat"
)

// Sentinel errors.
var (
	// ErrTokenRequired is returned when the gateway would listen beyond loopback without a token.
	ErrTokenRequired = errors.New("a bearer token is required to listen on a non-loopback address")
	// ErrAddressInUse is returned by Listen when another process listens on the address.
	ErrAddressInUse = errors.New("address already in use")
)

// Routes are what NewHandler serves.
type Routes struct {
	// MCP serves /mcp.
	MCP http.Handler
	// Health reports the downstream MCP servers for GET /healthz; nil reports none. An error
	// means nodmix itself cannot serve (503). It is called concurrently.
	Health func(context.Context) ([]ServerHealth, error)
	// Servers, when set, answers GET /mcp/servers with its value as JSON: the full status that
	// `nodmix mcp servers` prints. It is called concurrently.
	Servers func(context.Context) any
}

// ServerHealth is one downstream server in /healthz.
type ServerHealth struct {
	Name      string `json:"-"`
	State     string `json:"state"`
	Tools     int    `json:"tools"`
	LastError string `json:"lastError,omitempty"`
	// Up is set when the server serves or is off on purpose; any other makes nodmix degraded.
	Up bool `json:"-"`
}

// Health is the body of GET /healthz. A gateway with a token tells a caller without it only
// the status: the names and errors of servers are not for anyone who can reach the port.
type Health struct {
	Status  string                  `json:"status"` // StatusOK, StatusDegraded or StatusUnavailable
	Servers map[string]ServerHealth `json:"servers"`
}

// Values of Health.Status.
const (
	StatusOK          = "ok"          // every server is up
	StatusDegraded    = "degraded"    // nodmix serves, some server does not (200 all the same)
	StatusUnavailable = "unavailable" // nodmix itself cannot serve (503)
)

// NewHandler is the gateway's routing: MCP at /mcp, health at /healthz and, when set, the
// servers' status at /mcp/servers. WithAPI adds the agent API in front of it.
func NewHandler(rt Routes) http.Handler {
	mux := http.NewServeMux()
	if rt.MCP != nil {
		mux.Handle("/mcp", rt.MCP)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h, err := health(r.Context(), rt.Health)
		switch {
		case err != nil && anonymous(r):
			// The store's error may name its file or host: not for anyone who can reach the port.
			writeJSON(w, http.StatusServiceUnavailable, struct {
				Status string `json:"status"`
			}{StatusUnavailable})
		case err != nil:
			writeJSON(w, http.StatusServiceUnavailable, struct {
				Status string `json:"status"`
				Error  string `json:"error"`
			}{StatusUnavailable, err.Error()})
		case anonymous(r):
			writeJSON(w, http.StatusOK, struct {
				Status string `json:"status"`
			}{h.Status})
		default:
			writeJSON(w, http.StatusOK, h)
		}
	})
	if rt.Servers != nil {
		mux.HandleFunc("GET /mcp/servers", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "no-store")
			writeJSON(w, http.StatusOK, rt.Servers(r.Context()))
		})
	}
	return mux
}

func health(ctx context.Context, report func(context.Context) ([]ServerHealth, error)) (Health, error) {
	h := Health{Status: StatusOK, Servers: map[string]ServerHealth{}}
	if report == nil {
		return h, nil
	}
	servers, err := report(ctx)
	if err != nil {
		return Health{}, err
	}
	for _, s := range servers {
		h.Servers[s.Name] = s
		if !s.Up {
			h.Status = StatusDegraded
		}
	}
	return h, nil
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

// Listen checks addr (CheckListen) and listens on it. A port that is taken is ErrAddressInUse,
// in one line that says what to do.
func Listen(addr, token string) (net.Listener, error) {
	if err := CheckListen(addr, token); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listen on %s: %w: another process (another gateway?) listens there; stop it or choose another address with --listen or gateway.listen", addr, ErrAddressInUse)
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Limits bound what one connection may hold. Zero fields take the defaults. None of them ends a
// response that is still being written, however long: SSE streams (/mcp, streamed chat
// completions) run as long as they run, so the server has no overall write timeout.
type Limits struct {
	// ReadHeader bounds reading a request's headers (default 10 s).
	ReadHeader time.Duration
	// Read bounds reading a whole request, headers and body, from its first byte (default
	// 30 s): a body trickled in slowly does not hold a connection. net/http lifts the deadline
	// once the body is read, so it does not reach into the response.
	Read time.Duration
	// Idle closes a keep-alive connection that has no request for that long (default 2 min).
	Idle time.Duration
	// Write bounds each write of a response, SSE events included (default 1 min): a client that
	// stops reading does not hold a connection. Time between writes does not count.
	Write time.Duration
}

// Defaults of Limits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultWriteTimeout      = time.Minute
)

func (l Limits) withDefaults() Limits {
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&l.ReadHeader, DefaultReadHeaderTimeout}, {&l.Read, DefaultReadTimeout}, {&l.Idle, DefaultIdleTimeout}, {&l.Write, DefaultWriteTimeout}} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return l
}

// ServeListener serves h on ln until ctx ends, then shuts down gracefully. It takes ownership of
// ln. Loopback needs no token; any other address does (ErrTokenRequired). With a token, every
// request except GET /healthz must carry "Authorization: Bearer <token>"; without one, only a
// loopback Host is served. A browser request from another origin that would change something is
// refused either way (sameOrigin). Open SSE streams end when their MCP sessions do: close the
// MCP server when ctx ends, or shutdown waits 3 seconds before cutting them.
func ServeListener(ctx context.Context, ln net.Listener, token string, h http.Handler, lim Limits) error {
	if err := CheckListen(ln.Addr().String(), token); err != nil {
		_ = ln.Close()
		return err
	}
	lim = lim.withDefaults()
	srv := &http.Server{
		Handler:           bounded(lim.Write, sameOrigin(token, RequireToken(token, h))),
		ReadHeaderTimeout: lim.ReadHeader,
		ReadTimeout:       lim.Read,
		IdleTimeout:       lim.Idle,
		// No WriteTimeout: it bounds a whole response and would cut every SSE stream; bounded
		// gives each write its own deadline instead.
		// The read limit rides in every request's context: the API names it when it cuts a body.
		BaseContext: func(net.Listener) context.Context {
			return context.WithValue(context.WithoutCancel(ctx), readLimitKey{}, lim.Read)
		},
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

// bounded gives every write of h's responses the deadline d.
func bounded(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: d}
		// A connection keeps its write deadline from one request to the next: renew it for
		// what net/http writes itself (100 Continue), and for the final flush after a stream's
		// last quiet spell.
		dw.extend()
		defer dw.extend()
		h.ServeHTTP(dw, r)
	})
}

// deadlineWriter gives each write and flush its own deadline. It keeps http.Flusher for the
// handlers that assert it, and Unwrap for http.ResponseController.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *deadlineWriter) extend() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.d)) }

func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.extend()
	return w.ResponseWriter.Write(p)
}

func (w *deadlineWriter) Flush() { _ = w.FlushError() }

func (w *deadlineWriter) FlushError() error {
	w.extend()
	return w.rc.Flush()
}

func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// authKey marks a GET /healthz request with whether it carried the token.
type authKey struct{}

// anonymous reports whether r came to a gateway with a token without carrying it.
func anonymous(r *http.Request) bool {
	ok, marked := r.Context().Value(authKey{}).(bool)
	return marked && !ok
}

// RequireToken wraps h so that every request but GET /healthz and the chat page's files
// (webchat.Public) needs the bearer token. The scheme is case-insensitive (RFC 7235: "bearer"
// is "Bearer"); the token is compared in constant time. An empty token lets everything through.
func RequireToken(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok := subtle.ConstantTimeCompare(bearer(r.Header.Get("Authorization")), want) == 1
		if r.URL.Path == "/healthz" && r.Method == http.MethodGet {
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey{}, ok)))
			return
		}
		if webchat.Public(r) {
			// The chat page holds no secret: it asks for the token and sends it on its API calls.
			h.ServeHTTP(w, r)
			return
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="nodmix"`)
			refuse(w, r, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "missing or wrong bearer token")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// bearer returns the credentials of a Bearer authorization header, or nil.
func bearer(header string) []byte {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil
	}
	return []byte(strings.TrimLeft(cred, " "))
}
