package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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

// newSessionKey carries the binding prepared for a request that starts a session to the SDK's
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
	_ = json.NewEncoder(w).Encode(newErrorResponse(nil, code, message))
}
