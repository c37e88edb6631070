package mcpserve

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultListen is the gateway's default address: loopback only.
const DefaultListen = "127.0.0.1:8787"

// ErrTokenRequired is returned when the gateway would listen beyond loopback without a token.
var ErrTokenRequired = errors.New("a bearer token is required to listen on a non-loopback address")

// Handler serves MCP over streamable HTTP at whatever path it is mounted on. Each MCP session
// (Mcp-Session-Id) gets its own view of the catalog from Sessions.Open.
func (s *Server) Handler() http.Handler {
	return &httpHandler{
		srv: s,
		sdk: mcp.NewStreamableHTTPHandler(s.sdkServer, &mcp.StreamableHTTPOptions{
			Logger:              s.log,
			SessionTimeout:      s.opts.SessionTimeout,
			MaxRequestBodyBytes: int64(s.opts.MaxMessageBytes),
		}),
	}
}

type httpHandler struct {
	srv *Server
	sdk *mcp.StreamableHTTPHandler
}

// newSession carries the binding prepared for a request that starts a session to the SDK's
// getServer callback, which may be called more than once per request.
type newSessionKey struct{}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.startsSession(r) {
		h.sdk.ServeHTTP(w, r)
		return
	}
	b, err := h.srv.newBinding(r.Context(), newID())
	if err != nil {
		h.srv.log.Warn("mcp session not opened", "err", err)
		status := http.StatusInternalServerError
		if errors.Is(err, ErrClosed) {
			status = http.StatusServiceUnavailable
		}
		writeJSONRPCError(w, status, jsonrpc.CodeInternalError, err.Error())
		return
	}
	h.sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), newSessionKey{}, b)))
	h.srv.adopt(b)
}

// startsSession reports whether r is an initialize request that will start a session: a POST
// without a session id whose body is an initialize call. Other requests (a 2026-07-28 client's
// server/discover probe, anything refused) must not open a core session. The body is read up to
// the size limit and put back for the SDK, which enforces the limit itself.
func (h *httpHandler) startsSession(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || r.Body == nil {
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, int64(h.srv.opts.MaxMessageBytes)+1))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(data), r.Body), r.Body}
	if err != nil || len(data) > h.srv.opts.MaxMessageBytes {
		return false
	}
	var head struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(data, &head) == nil && head.Method == "initialize"
}

type readCloser struct {
	io.Reader
	io.Closer
}

func (s *Server) sdkServer(r *http.Request) *mcp.Server {
	if b, ok := r.Context().Value(newSessionKey{}).(*binding); ok {
		return b.mcp
	}
	return s.probe
}

// adopt ties a binding to the life of its MCP session, or ends it when the request did not leave
// a session behind (a refused request, a failed initialize).
func (s *Server) adopt(b *binding) {
	var ss *mcp.ServerSession
	for x := range b.mcp.Sessions() {
		ss = x
	}
	if ss == nil {
		_ = b.close()
		return
	}
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.wg.Go(func() {
			_ = ss.Wait()
			_ = b.close()
		})
	}
	s.mu.Unlock()
	if closed {
		_ = ss.Close()
		_ = b.close()
	}
}

func writeJSONRPCError(w http.ResponseWriter, status int, code int64, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", nil, &jsonrpc.Error{Code: code, Message: message}})
}

// NewHTTPHandler is the gateway's routing: MCP at /mcp and a health check at /healthz. health may
// be nil; when it returns an error, /healthz answers 503 with the error.
func NewHTTPHandler(mcpHandler http.Handler, health func(context.Context) error) http.Handler {
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
