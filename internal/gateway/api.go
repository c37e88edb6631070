package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nodmix/nodmix/internal/agent"
	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/jsondepth"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/provider"
	"github.com/nodmix/nodmix/internal/session"
)

// Agent is what the OpenAI-compatible API runs turns on (*app.App). Implementations are safe
// for concurrent use.
type Agent interface {
	Turn(ctx context.Context, req app.TurnRequest) (*app.TurnResult, error)
	Models() []app.ModelRow
}

var _ Agent = (*app.App)(nil)

// API serves the OpenAI-compatible agent API: POST /v1/chat/completions, POST /v1/responses and
// GET /v1/models. Every turn runs nodmix's own tools server-side; tools the client declares are
// client tools whose calls end the turn and are returned to the client, as OpenAI does.
type API struct {
	Agent Agent
	Log   *slog.Logger // nil: quiet

	mu      sync.Mutex
	running map[string]bool // kept sessions with a turn in progress here
}

// claim marks a kept session as running a turn; false when one already runs on it. The store
// only notices two turns at once when the later one writes, which lets a second turn's message
// land in the middle of the first and the first fail after its model call: a turn that comes
// while another runs on its session is refused before anything of it is written instead.
func (api *API) claim(key string) bool {
	api.mu.Lock()
	defer api.mu.Unlock()
	if api.running[key] {
		return false
	}
	if api.running == nil {
		api.running = map[string]bool{}
	}
	api.running[key] = true
	return true
}

func (api *API) release(key string) {
	api.mu.Lock()
	defer api.mu.Unlock()
	delete(api.running, key)
}

// openTurn is what the chat and Responses handlers share before a turn runs: it reads the body,
// parses it with parse, picks the request's session and claims it when it is kept, and gives tr
// that session. release gives the claim back. When ok is false the error is answered already.
func openTurn[R any](api *API, w http.ResponseWriter, r *http.Request, parse func([]byte) (R, app.TurnRequest, error),
	meta func(R) (user, loose string)) (req R, tr app.TurnRequest, release func(), ok bool) {
	body, err := readBody(r)
	if err != nil {
		writeTurnError(w, err)
		return req, tr, nil, false
	}
	req, tr, err = parse(body)
	if err != nil {
		writeTurnError(w, err)
		return req, tr, nil, false
	}
	user, loose := meta(req)
	key, kept, release, ok := api.startTurn(w, r, user)
	if !ok {
		return req, tr, nil, false
	}
	if err := looseResult(loose, kept); err != nil {
		release()
		writeTurnError(w, err)
		return req, tr, nil, false
	}
	tr.Session, tr.Ephemeral, tr.Conversation = key, !kept, true
	return req, tr, release, true
}

// startTurn picks the request's session and claims it when it is kept; release gives it back. A
// busy session is answered 409 here and ok is false.
func (api *API) startTurn(w http.ResponseWriter, r *http.Request, user string) (key string, kept bool, release func(), ok bool) {
	key, kept = sessionFor(r, user)
	if !kept {
		return key, false, func() {}, true
	}
	field := "user"
	if strings.TrimSpace(r.Header.Get(SessionHeader)) != "" {
		field = SessionHeader
	}
	if err := session.CheckKey(key); err != nil {
		e := newAPIError("invalid_request_error", "invalid_session", field+": "+err.Error())
		e.Error.Param = &field
		writeJSON(w, http.StatusBadRequest, e)
		return key, kept, nil, false
	}
	if !api.claim(key) {
		writeTurnError(w, fmt.Errorf("session %q: %w", key, agent.ErrBusy))
		return key, kept, nil, false
	}
	w.Header().Set(SessionHeader, key)
	return key, true, func() { api.release(key) }, true
}

// maxBody bounds a request body: a transcript with a few images fits, a runaway client does not.
const maxBody = 32 << 20

// SessionHeader names the session a request continues (else the `user` field; else a fresh
// session that is not kept, as OpenAI's API is stateless).
const SessionHeader = "X-Nodmix-Session"

// Handler routes the API.
func (api *API) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", api.chat)
	mux.HandleFunc("POST /v1/responses", api.responses)
	mux.HandleFunc("GET /v1/models", api.models)
	api.routeSessions(mux)
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found", fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// WithAPI serves the API under /v1/ and everything else with h.
func WithAPI(h http.Handler, api *API) http.Handler {
	v1 := api.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			w.Header().Set("Cache-Control", "no-store")
			v1.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (api *API) models(w http.ResponseWriter, _ *http.Request) {
	type row struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
		Name    string `json:"name,omitempty"`
		// The model's thinking profile (DESIGN §12): ids with labels, the legacy label list, the default.
		ThinkingLevels  any    `json:"thinkingLevels"`
		ThinkingOptions any    `json:"thinkingOptions"`
		ThinkingDefault string `json:"thinkingDefault,omitempty"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []row  `json:"data"`
	}{Object: "list", Data: []row{}}
	for _, m := range api.Agent.Models() {
		out.Data = append(out.Data, row{ID: m.Ref, Object: "model", OwnedBy: m.Provider, Name: m.Name,
			ThinkingLevels: m.ThinkingLevels, ThinkingOptions: m.ThinkingOptions, ThinkingDefault: m.ThinkingDefault})
	}
	writeJSON(w, http.StatusOK, out)
}

// apiError is OpenAI's error object.
type apiError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    string  `json:"code"`
	} `json:"error"`
}

func newAPIError(typ, code, msg string) apiError {
	var e apiError
	e.Error.Message, e.Error.Type, e.Error.Code = msg, typ, code
	return e
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	writeJSON(w, status, newAPIError(typ, code, msg))
}

// writeTurnError answers a failed request with OpenAI's error object; a refused field is
// named in `param`.
func writeTurnError(w http.ResponseWriter, err error) {
	status, typ, code := turnStatus(err)
	e := newAPIError(typ, code, err.Error())
	var br *badRequest
	if errors.As(err, &br) && br.Field != "" {
		e.Error.Param = &br.Field
	}
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// badRequest is a request the API refuses before running anything; Field names what is wrong.
type badRequest struct {
	Field, Rule string
	tooLarge    bool // the body is over maxBody: 413
}

func (e *badRequest) Error() string {
	if e.Field == "" {
		return e.Rule
	}
	return e.Field + ": " + e.Rule
}

func bad(field, rule string, args ...any) error {
	return &badRequest{Field: field, Rule: fmt.Sprintf(rule, args...)}
}

// turnStatus maps a turn's failure to an HTTP status and OpenAI error type/code.
func turnStatus(err error) (int, string, string) {
	var br *badRequest
	var pe *provider.Error
	switch {
	case errors.As(err, &br) && br.tooLarge:
		return http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large"
	case errors.As(err, &br):
		return http.StatusBadRequest, "invalid_request_error", "invalid_value"
	case errors.Is(err, app.ErrNoModel):
		return http.StatusBadRequest, "invalid_request_error", "model_required"
	case errors.Is(err, provider.ErrModelRef):
		return http.StatusBadRequest, "invalid_request_error", "invalid_model"
	case errors.Is(err, provider.ErrUnknownProvider):
		return http.StatusNotFound, "invalid_request_error", "model_not_found"
	case errors.Is(err, provider.ErrNoKey):
		return http.StatusServiceUnavailable, "server_error", "provider_not_configured"
	case errors.Is(err, session.ErrInvalidKey):
		return http.StatusBadRequest, "invalid_request_error", "invalid_session"
	case errors.Is(err, agent.ErrBusy):
		return http.StatusConflict, "invalid_request_error", "session_busy"
	case errors.Is(err, agent.ErrRemoved):
		return http.StatusConflict, "invalid_request_error", "session_removed"
	case errors.Is(err, agent.ErrUnsendable):
		return http.StatusBadRequest, "invalid_request_error", "invalid_input"
	case errors.Is(err, agent.ErrMaxSteps):
		return http.StatusInternalServerError, "server_error", "max_steps"
	case errors.As(err, &pe):
		if pe.RateLimited() {
			return http.StatusTooManyRequests, "rate_limit_error", "provider_rate_limited"
		}
		if errors.Is(pe, provider.ErrIdle) {
			return http.StatusGatewayTimeout, "api_error", "provider_timeout"
		}
		return http.StatusBadGateway, "api_error", "provider_error"
	case errors.Is(err, context.Canceled):
		return 499, "server_error", "canceled"
	}
	return http.StatusInternalServerError, "server_error", "internal_error"
}

// maxBodyDepth is the deepest nesting encoding/json decodes, and so the deepest a body may be.
const maxBodyDepth = 10000

// readBody reads a JSON request body with a bound.
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &badRequest{Rule: fmt.Sprintf("request body is larger than %d bytes", maxBody), tooLarge: true}
		}
		return nil, bodyError(r, err)
	}
	if !json.Valid(b) {
		if jsondepth.Deeper(b, maxBodyDepth) {
			return nil, bad("", "request body nests arrays and objects deeper than %d levels", maxBodyDepth)
		}
		return nil, bad("", "request body is not valid JSON")
	}
	return b, nil
}

// readLimitKey marks a request's context with the server's read limit (Limits.Read), for the
// error that answers a body it cut.
type readLimitKey struct{}

// bodyError is the request error for a body that could not be read: it says what happened
// without net's error text, which holds both ends' socket addresses.
func bodyError(r *http.Request, err error) error {
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		if d, ok := r.Context().Value(readLimitKey{}).(time.Duration); ok {
			return bad("", "the request body did not arrive within %s, the server's limit for reading a request", d)
		}
		return bad("", "the request body did not arrive within the server's limit for reading a request")
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	return bad("", "cannot read the request body: %v", err)
}

// sessionFor picks the session: the header, then the `user` field. ok is false for a fresh
// session that is not kept.
func sessionFor(r *http.Request, user string) (key string, kept bool) {
	if k := strings.TrimSpace(r.Header.Get(SessionHeader)); k != "" {
		return k, true
	}
	if user != "" {
		return user, true
	}
	return "gw-" + randomID(), false
}

func randomID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sseWriter writes server-sent events and flushes each one. It is safe for concurrent use:
// tool events arrive from the goroutines running the calls.
type sseWriter struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	f       http.Flusher
	started bool
	failed  bool
}

func newSSE(w http.ResponseWriter) *sseWriter {
	f, _ := w.(http.Flusher)
	return &sseWriter{w: w, f: f}
}

// begun reports whether anything was written: until then a failure can still be answered with
// its own status.
func (s *sseWriter) begun() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

func (s *sseWriter) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
}

// event writes one event: `event: name` when name is set, and data as JSON (or raw text for
// []byte).
func (s *sseWriter) event(name string, data any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed {
		return
	}
	s.start()
	var b []byte
	switch d := data.(type) {
	case []byte:
		b = d
	default:
		var err error
		if b, err = json.Marshal(d); err != nil {
			return
		}
	}
	var buf []byte
	if name != "" {
		buf = append(buf, "event: "...)
		buf = append(buf, name...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "data: "...)
	buf = append(buf, b...)
	buf = append(buf, "\n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		s.failed = true
		return
	}
	if s.f != nil {
		s.f.Flush()
	}
}

// textMessage is a user message of one text part.
func textMessage(role llm.Role, text string) llm.Message {
	return llm.Message{Role: role, Parts: []llm.Part{{Kind: llm.KindText, Text: text}}}
}

// strictTypes decodes body into v; a value of the wrong type is an error naming its field.
func strictTypes(body []byte, v any) error {
	return strictAt("", body, v)
}

// strictAt decodes raw, the value of field, into v; a value of the wrong type is an error
// naming it with the indices of the arrays it is in (messages[3].tool_calls[0].id), which
// json's own Field leaves out.
func strictAt(field string, raw []byte, v any) error {
	err := json.Unmarshal(raw, v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te):
		p := pathAt(raw, te.Offset)
		switch {
		case field == "" && p == "":
			field = "(body)"
		case field == "" || strings.HasPrefix(p, "["):
			field += p
		case p != "":
			field += "." + p
		}
		if k := te.Type.Kind(); k >= reflect.Int && k <= reflect.Int64 {
			return bad(field, "%s", intRule(te.Value, te.Type.Bits()))
		}
		return bad(field, "must be %s", jsonKind(te.Type.Kind().String()))
	}
	return bad(field, "request body: %v", err)
}

// pathAt is the path of the innermost value of the JSON text raw that starts before byte off:
// the value a decoding error at off is about.
func pathAt(raw []byte, off int64) string {
	// A level is never changed in place but replaced, so a value's path is kept by keeping its
	// level: copying the path at every value was quadratic in the nesting, seconds of CPU for a
	// 20 kB body nested deep before its wrong value.
	type level struct {
		up    *level
		array bool
		n     int    // array: index of the next element
		key   string // object: key of the next value
		inKey bool   // object: the next token is a key
	}
	var top *level
	next := func() { // a value ended: move its container on
		if top == nil {
			return
		}
		l := *top
		if l.array {
			l.n++
		} else {
			l.inKey = true
		}
		top = &l
	}
	path := func(l *level) string {
		var ls []*level
		for ; l != nil; l = l.up {
			ls = append(ls, l)
		}
		var b strings.Builder
		for i := len(ls) - 1; i >= 0; i-- {
			if ls[i].array {
				fmt.Fprintf(&b, "[%d]", ls[i].n)
			} else {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(ls[i].key)
			}
		}
		return b.String()
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()  // a number no float64 holds is a token all the same
	var found *level // the container of the last value that started before off
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil || start >= off {
			return path(found)
		}
		d, delim := tok.(json.Delim)
		if top != nil && !top.array && top.inKey {
			if delim { // '}'
				top = top.up
				next()
				continue
			}
			l := *top
			l.key, l.inKey = fmt.Sprint(tok), false
			top = &l
			continue
		}
		if delim && d == ']' {
			top = top.up
			next()
			continue
		}
		found = top
		switch {
		case delim && d == '{':
			top = &level{up: top, inKey: true}
		case delim && d == '[':
			top = &level{up: top, array: true}
		default:
			next()
		}
	}
}

// intRule is the rule an integer field of the given bits breaks with value, json's
// description of what it found ("number 1.5", "string"): a number is told whether it is out of
// range or not whole, for "must be a number" said of 1e300 or 1.5 says nothing.
func intRule(value string, bits int) string {
	lit, isNumber := strings.CutPrefix(value, "number ")
	if !isNumber {
		return "must be an integer"
	}
	// Out of float64's range, f is ±Inf: still out of range. limit is 2^(bits-1), held exactly.
	f, _ := strconv.ParseFloat(lit, 64)
	limit, most := math.Ldexp(1, bits-1), int64(1)<<(bits-1)-1
	switch {
	case f >= limit:
		return fmt.Sprintf("must be an integer of at most %d", most)
	case f < -limit:
		return fmt.Sprintf("must be an integer of at least %d", -most-1)
	case f != math.Trunc(f):
		return "must be an integer"
	}
	return "must be an integer, written without a fraction or exponent"
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "float64":
		return "a number"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "ptr":
		return "a number or null"
	}
	return "of another type"
}

// extraFields are the top-level request fields nodmix does not model, passed to the provider.
func extraFields(body []byte, known map[string]bool) (map[string]json.RawMessage, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(body, &all); err != nil {
		return nil, bad("", "request body must be a JSON object")
	}
	var out map[string]json.RawMessage
	for k, v := range all {
		if known[k] {
			continue
		}
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		out[k] = v
	}
	return out, nil
}
