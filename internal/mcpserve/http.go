package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Handler serves MCP over streamable HTTP at whatever path it is mounted on. Each MCP session
// (Mcp-Session-Id) gets its own view of the catalog from Sessions.Open; at most
// Options.MaxSessions are open at once.
func (s *Server) Handler() http.Handler {
	return &httpHandler{
		srv: s,
		// No SessionTimeout for the SDK: its timer closes a session without ending the calls in
		// progress, and that close waits for them. The idle timer of each session is ours.
		sdk: mcp.NewStreamableHTTPHandler(s.sdkServer, &mcp.StreamableHTTPOptions{
			Logger:              s.log,
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

const sessionHeader = "Mcp-Session-Id"

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if crossOrigin(r) {
		// The specification's Origin rule (streamable HTTP, security warning): a browser page of
		// another origin must not reach the catalog, whatever the method. Said before anything
		// else, so such a request opens no session and ends no calls.
		writeJSONRPCError(w, http.StatusForbidden, nil, jsonrpc.CodeInvalidRequest, "invalid request: cross-origin requests are refused")
		return
	}
	if id := r.Header.Get(sessionHeader); id != "" {
		h.serveSession(w, r, id)
		return
	}
	switch post := h.inspect(r); post.kind {
	case postInitialize:
		h.startSession(w, r)
	case postBatchedInitialize:
		writeJSONRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "invalid request: initialize must be sent alone, not in a batch")
	case postTooLarge:
		writeJSONRPCError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("invalid request: request body exceeds %d bytes", h.srv.opts.MaxMessageBytes))
	case postNotJSON:
		writeJSONRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "parse error: the body is not one JSON value")
	case postBeforeInitialize:
		writeJSONRPCError(w, http.StatusBadRequest, post.id, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("invalid request: %s before initialize (no Mcp-Session-Id: start a session with initialize)", post.what))
	case postRefused:
		writeJSONRPCError(w, http.StatusBadRequest, post.refused.id, post.refused.code, post.refused.message)
	case postIgnored:
		w.WriteHeader(http.StatusAccepted)
	default:
		h.sdk.ServeHTTP(w, r)
	}
}

// crossOrigin reports whether a browser sent r from a page of another origin: by its
// Sec-Fetch-Site header, or else by an Origin whose host is not the request's. MCP clients that
// are not browsers send neither header, or an Origin of the endpoint itself.
func crossOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return false
	case "":
	default:
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host)
}

// serveSession serves a request of an open session, keeping the session's activity for the cap.
func (h *httpHandler) serveSession(w http.ResponseWriter, r *http.Request, id string) {
	switch r.Method {
	case http.MethodPost:
		switch post := screenPost(r, h.srv.opts.MaxMessageBytes); post.kind {
		case postBatchedInitialize:
			writeJSONRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "invalid request: initialize must be sent alone, not in a batch")
			return
		case postRefused:
			writeJSONRPCError(w, http.StatusBadRequest, post.refused.id, post.refused.code, post.refused.message)
			return
		case postNotJSON:
			writeJSONRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "parse error: the body is not one JSON value")
			return
		case postIgnored:
			w.WriteHeader(http.StatusAccepted)
			return
		}
	case http.MethodDelete:
		// The SDK's Close waits for the session's calls in progress: end them first.
		h.srv.stopCalls(id)
	}
	done := h.srv.touch(id, r.Method == http.MethodPost)
	defer done()
	h.sdk.ServeHTTP(w, r)
}

func (h *httpHandler) startSession(w http.ResponseWriter, r *http.Request) {
	victim, err := h.srv.reserve()
	if err != nil {
		status := http.StatusServiceUnavailable
		if errors.Is(err, ErrTooManySessions) {
			w.Header().Set("Retry-After", "1")
			h.srv.log.Warn("mcp session refused", "err", err)
		}
		writeJSONRPCError(w, status, nil, jsonrpc.CodeInternalError, err.Error())
		return
	}
	b, err := h.srv.newBinding(r.Context(), newID())
	if err != nil {
		h.srv.release(victim)
		h.srv.log.Warn("mcp session not opened", "err", err)
		status := http.StatusInternalServerError
		if errors.Is(err, ErrClosed) {
			status = http.StatusServiceUnavailable
		}
		writeJSONRPCError(w, status, nil, jsonrpc.CodeInternalError, err.Error())
		return
	}
	h.sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), newSessionKey{}, b)))
	h.srv.adopt(b, victim)
}

type postKind int

const (
	postOther             postKind = iota // for the SDK: notifications, pings, new-protocol probes, anything refused
	postInitialize                        // starts a session
	postBatchedInitialize                 // refused: a session starts with initialize alone
	postBeforeInitialize                  // refused: a call without a session
	postNotJSON                           // refused: the SDK's decoder would read a first value of it
	postTooLarge                          // refused: over Options.MaxMessageBytes
	postRefused                           // refused by screenBody: an id the SDK would change, initialize params it answers with code 0
	postIgnored                           // notifications the SDK does not know, and nothing else: 202 Accepted
)

type postInfo struct {
	kind    postKind
	id      any      // the call's id, for postBeforeInitialize of a single call
	what    string   // "method \"tools/list\"", or "a batch of calls"
	refused *refusal // for postRefused
}

// inspect classifies a request without a session id. Only a POST whose body is an initialize
// call opens a session; other requests (a 2026-07-28 client's server/discover probe, anything
// refused) must not open a core session. The SDK would answer a call without a session with
// error code 0 and would let a batch holding initialize open a session outside the cap, so
// these are refused here, and so is a body that is not one JSON value, of which the SDK's decoder
// would read the first. The body is read up to the size limit and put back for the SDK.
func (h *httpHandler) inspect(r *http.Request) postInfo {
	if r.Method != http.MethodPost || r.Body == nil {
		return postInfo{}
	}
	if !jsonContent(r) {
		return postInfo{}
	}
	data, err := readBody(r, h.srv.opts.MaxMessageBytes)
	switch {
	case err != nil:
		return postInfo{}
	case len(data) > h.srv.opts.MaxMessageBytes:
		// Said here: the SDK's reading of the body for the probe answers 400 to it.
		return postInfo{kind: postTooLarge}
	}
	if !json.Valid(data) {
		return postInfo{kind: postNotJSON}
	}
	if post, done := applyScreen(r, screenBody(data), &data); done {
		return post
	}
	newProtocol := r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28"
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(data, &batch) != nil {
			return postInfo{}
		}
		calls := false
		for _, raw := range batch {
			m := readHead(raw)
			if m.Method == "initialize" {
				return postInfo{kind: postBatchedInitialize}
			}
			calls = calls || m.isCall() && !newProtocol && !m.allowedFirst()
		}
		if calls {
			return postInfo{kind: postBeforeInitialize, what: "a batch of calls"}
		}
		return postInfo{}
	}
	m := readHead(data)
	switch {
	case m.Method == "initialize":
		return postInfo{kind: postInitialize}
	case m.isCall() && !newProtocol && !m.allowedFirst():
		return postInfo{kind: postBeforeInitialize, id: m.id(), what: fmt.Sprintf("method %q", m.Method)}
	}
	return postInfo{}
}

// head is what inspect reads of a message.
type head struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
}

// readHead reads the keys as the SDK does, exactly: a struct would also take "Method" or "ID",
// which the SDK ignores, and a message could then pass for what it is not.
func readHead(data []byte) head {
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(data, &keys)
	m := head{ID: keys["id"], Params: keys["params"]}
	_ = json.Unmarshal(keys["method"], &m.Method)
	return m
}

func (m head) isCall() bool {
	return m.Method != "" && len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null"))
}

// allowedFirst reports whether the call may come before initialize: ping, as the specification
// allows, and the requests of the per-request protocol (2026-07-28), which the SDK answers.
func (m head) allowedFirst() bool {
	if m.Method == "ping" || m.Method == "server/discover" {
		return true
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	_, ok := p.Meta["io.modelcontextprotocol/protocolVersion"]
	return ok
}

func (m head) id() any { return echoID(m.ID) }

// screenPost classifies a POST of an open session: a batch holding initialize, or a body
// screenBody refuses, is answered here; anything else (postOther) goes to the SDK, which also
// answers a body that is not JSON or too large. The body is read up to the size limit and put
// back for the SDK.
func screenPost(r *http.Request, maxBytes int) postInfo {
	if r.Body == nil || !jsonContent(r) {
		return postInfo{}
	}
	data, err := readBody(r, maxBytes)
	if err != nil || len(data) > maxBytes {
		return postInfo{}
	}
	if !json.Valid(data) {
		// The SDK answers it with a plain-text 400; a JSON-RPC parse error, as over stdio and
		// before a session, says the same to a client that reads JSON-RPC.
		return postInfo{kind: postNotJSON}
	}
	sc := screenBody(data)
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) != nil {
			return postInfo{}
		}
		for _, raw := range batch {
			if readHead(raw).Method == "initialize" {
				return postInfo{kind: postBatchedInitialize}
			}
		}
	}
	post, _ := applyScreen(r, sc, &data)
	return post
}

// applyScreen acts on what screenBody made of r's body, data: done reports a body answered by
// the face (post says how); a batch with notifications the SDK does not know goes on without
// them, in r's body and data.
func applyScreen(r *http.Request, sc screened, data *[]byte) (post postInfo, done bool) {
	switch {
	case sc.refusal != nil:
		return postInfo{kind: postRefused, refused: sc.refusal}, true
	case sc.ignored && (!isBatch(*data) || batchesServed(r)):
		return postInfo{kind: postIgnored}, true
	case sc.keep != nil:
		*data = sc.keep
		r.Body = &replayBody{Reader: *bytes.NewReader(sc.keep), body: r.Body}
		r.ContentLength = int64(len(sc.keep))
	}
	return postInfo{}, false
}

func isBatch(data []byte) bool {
	data = bytes.TrimSpace(data)
	return len(data) > 0 && data[0] == '['
}

// batchesServed reports whether the SDK serves batches at the request's protocol version: it
// refuses them from 2025-06-18 on, whatever they hold, and takes a request without the version
// for 2025-03-26.
func batchesServed(r *http.Request) bool {
	return r.Header.Get("Mcp-Protocol-Version") < "2025-06-18"
}

// jsonContent reports whether r's body is JSON by its Content-Type, as mime.ParseMediaType reads
// it; the usual header is read without it, which allocates.
func jsonContent(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// readBody reads r's body up to maxBytes+1 bytes and puts it back for the SDK, which reads it
// again. A body read to its end is put back as one reader of what was read, sized by the
// Content-Length the client sent, when it did.
func readBody(r *http.Request, maxBytes int) ([]byte, error) {
	limit := int64(maxBytes) + 1
	size := int64(512)
	if n := r.ContentLength; n >= 0 && n < limit {
		size = n + 1 // room for the read that finds the end
	}
	data := make([]byte, 0, size)
	var err error
	for int64(len(data)) < limit {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		room := data[len(data):min(int64(cap(data)), limit)]
		var n int
		n, err = r.Body.Read(room)
		data = data[:len(data)+n]
		if err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		r.Body = &replayBody{Reader: *bytes.NewReader(data), body: r.Body}
		return data, nil
	}
	r.Body = readCloser{io.MultiReader(bytes.NewReader(data), r.Body), r.Body}
	return data, err
}

// replayBody is a request body read whole, for another reader.
type replayBody struct {
	bytes.Reader
	body io.Closer
}

func (b *replayBody) Close() error { return b.body.Close() }

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

// httpSessions are the HTTP sessions that count against Options.MaxSessions. Guarded by
// Server.mu.
type httpSessions struct {
	byID    map[string]*httpSession
	opening int    // initialize requests holding a place under the cap
	clock   uint64 // orders activity: a higher value is more recent
}

type httpSession struct {
	b    *binding
	ss   *mcp.ServerSession
	last uint64      // the clock at the start or end of the latest request
	busy int         // POSTs in progress
	idle *time.Timer // closes the session Options.SessionTimeout after its last POST; nil: never
	// claimed: an initialize in progress will evict this session once its own session is open.
	claimed bool
}

// oldestIdle is the session without a POST in progress that was active least recently and that
// no initialize has claimed, or nil.
func (hs *httpSessions) oldestIdle() *httpSession {
	var old *httpSession
	for _, x := range hs.byID {
		if x.busy == 0 && !x.claimed && (old == nil || x.last < old.last) {
			old = x
		}
	}
	return old
}

// reserve takes a place under the cap for a new session. At the cap it claims the session idle
// longest, which adopt evicts only once the new session has opened: an initialize the SDK then
// refuses (an Accept or protocol version it does not serve, a Host header of DNS rebinding)
// must not cost another client its session. The caller gives the place back with adopt or
// release.
func (s *Server) reserve() (victim *httpSession, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	hs := &s.http
	if limit := s.opts.MaxSessions; limit > 0 && len(hs.byID)+hs.opening >= limit {
		if victim = hs.oldestIdle(); victim == nil {
			return nil, fmt.Errorf("%w: all %d are busy, try again later", ErrTooManySessions, limit)
		}
		victim.claimed = true
	}
	hs.opening++
	return victim, nil
}

// evict ends victim, claimed by reserve for a session that has now opened, unless it has ended
// meanwhile; if it has become busy, the session idle longest other than opened goes instead.
// Called with s.mu held; the caller ends the session it returns, after unlocking.
func (s *Server) evict(victim, opened *httpSession) *httpSession {
	victim.claimed = false
	hs := &s.http
	if hs.byID[victim.b.id] != victim {
		return nil // it ended on its own: its place is free
	}
	if victim.busy > 0 {
		opened.claimed = true // not a candidate for its own place
		victim = hs.oldestIdle()
		opened.claimed = false
		if victim == nil {
			return nil // every other session is busy: over the cap by one until one ends
		}
	}
	delete(hs.byID, victim.b.id)
	return victim
}

// end closes a session taken out of the server's table: its calls in progress first, since
// closing the SDK session waits for them; its watcher in adopt then closes the binding.
func (x *httpSession) end() {
	x.b.stopCalls()
	_ = x.ss.Close()
}

// release gives back a place reserve took, for a session that was never opened.
func (s *Server) release(victim *httpSession) {
	s.mu.Lock()
	s.http.opening--
	if victim != nil {
		victim.claimed = false
	}
	s.mu.Unlock()
}

// touch records a request of session id (a POST is busy until done is called).
func (s *Server) touch(id string, post bool) (done func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.http.byID[id]
	if x == nil {
		return func() {}
	}
	s.http.clock++
	x.last = s.http.clock
	if post {
		if x.busy == 0 && x.idle != nil {
			x.idle.Stop()
		}
		x.busy++
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.http.clock++
		x.last = s.http.clock
		if post {
			x.busy--
			if x.busy == 0 && x.idle != nil {
				x.idle.Reset(s.opts.SessionTimeout)
			}
		}
	}
}

// expire closes session x, idle for Options.SessionTimeout, unless it has ended or a POST began
// as the timer fired. A call still in progress (its client went away without cancelling it)
// is ended first, since closing the SDK session waits for it.
func (s *Server) expire(x *httpSession) {
	s.mu.Lock()
	if s.closed || s.http.byID[x.b.id] != x || x.busy > 0 {
		s.mu.Unlock()
		return
	}
	delete(s.http.byID, x.b.id)
	s.wg.Add(1) // under mu, before Close can wait
	s.mu.Unlock()
	defer s.wg.Done()
	s.log.Info("mcp session closed: idle too long", "session", x.b.id, "sessionTimeout", s.opts.SessionTimeout)
	x.end()
}

// stopCalls ends the calls in progress of HTTP session id, if it is open.
func (s *Server) stopCalls(id string) {
	s.mu.Lock()
	x := s.http.byID[id]
	s.mu.Unlock()
	if x != nil {
		x.b.stopCalls()
	}
}

// adopt ties a binding to the life of its MCP session, or ends it when the request did not leave
// a session behind (a refused request, a failed initialize). It gives back the place reserve
// took: the session holds one of its own from then on.
func (s *Server) adopt(b *binding, victim *httpSession) {
	var ss *mcp.ServerSession
	for x := range b.mcp.Sessions() {
		ss = x
	}
	initialized := ss != nil && ss.InitializeParams() != nil
	s.mu.Lock()
	s.http.opening--
	closed := s.closed
	var evicted *httpSession
	if victim != nil && (!initialized || closed) {
		victim.claimed = false // no session opened (the SDK refused it): no one loses theirs
	}
	if ss != nil && !closed {
		s.http.clock++
		x := &httpSession{b: b, ss: ss, last: s.http.clock}
		if t := s.opts.SessionTimeout; t > 0 {
			x.idle = time.AfterFunc(t, func() { s.expire(x) })
		}
		s.http.byID[b.id] = x
		if victim != nil && victim.claimed {
			evicted = s.evict(victim, x)
		}
		s.wg.Go(func() {
			_ = ss.Wait()
			s.mu.Lock()
			if s.http.byID[b.id] == x {
				delete(s.http.byID, b.id)
			}
			if x.idle != nil {
				x.idle.Stop()
			}
			s.mu.Unlock()
			_ = b.close()
		})
	}
	s.mu.Unlock()
	if evicted != nil {
		s.log.Info("mcp session evicted: the session cap is reached and it was idle longest", "session", evicted.b.id, "maxSessions", s.opts.MaxSessions)
		evicted.end()
	}
	switch {
	case ss == nil:
		_ = b.close()
	case closed:
		b.stopCalls()
		_ = ss.Close()
		_ = b.close()
	}
}

func writeJSONRPCError(w http.ResponseWriter, status int, id any, code int64, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(newErrorResponse(id, code, message))
}
