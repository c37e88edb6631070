package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/directive"
	"github.com/nodmix/nodmix/internal/session"
)

// Sessions is what the sessions API reads and changes (*app.App). An Agent that also implements
// it gets the /v1/sessions routes; one that does not answers them 501. Implementations are safe
// for concurrent use.
type Sessions interface {
	SessionRows(ctx context.Context, after session.Cursor, limit int) ([]app.SessionRow, session.Cursor, error)
	SessionDefaults() app.SessionRow
	SessionRow(ctx context.Context, key string) (*app.SessionDetail, error)
	PatchSession(ctx context.Context, key string, patch app.SessionPatch) (*app.SessionRow, error)
	DeleteSession(ctx context.Context, key string) error
}

var _ Sessions = (*app.App)(nil)

// routeSessions adds GET /v1/sessions (a page of rows and the defaults of a new session), GET
// /v1/sessions/{key} (row and transcript), PATCH /v1/sessions/{key} (sessions.patch) and
// DELETE /v1/sessions/{key}. A key is the rest of the path, so it may hold an escaped '/'.
func (api *API) routeSessions(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/sessions", api.withSessions(api.listSessions))
	mux.HandleFunc("GET /v1/sessions/{key...}", api.withSessions(api.getSession))
	mux.HandleFunc("PATCH /v1/sessions/{key...}", api.withSessions(api.patchSession))
	mux.HandleFunc("DELETE /v1/sessions/{key...}", api.withSessions(api.deleteSession))
}

type sessionsHandler func(s Sessions, w http.ResponseWriter, r *http.Request)

func (api *API) withSessions(h sessionsHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		s, ok := api.Agent.(Sessions)
		if !ok {
			writeError(w, http.StatusNotImplemented, "server_error", "not_implemented", "this gateway keeps no sessions")
			return
		}
		h(s, w, r)
	}
}

// sessionList is a page of GET /v1/sessions, in OpenAI's list shape. The next page is asked for
// with after=next_after; next_after is null on the last page. It is a cursor, not a session key
// (a listing ordered by update time cannot resume at a key), so it is not named last_id.
type sessionList struct {
	Object    string           `json:"object"`
	Data      []app.SessionRow `json:"data"`
	HasMore   bool             `json:"has_more"`
	NextAfter *string          `json:"next_after"`
	Defaults  app.SessionRow   `json:"defaults"`
}

// listSessions answers GET /v1/sessions?limit=N&after=CURSOR: up to limit rows (default
// session.DefaultPage, at most session.MaxPage) after the cursor, most recently updated first.
// Other query parameters are ignored, as they were before the listing was paged.
func (api *API) listSessions(s Sessions, w http.ResponseWriter, r *http.Request) {
	after, limit, err := pageQuery(r.URL.Query())
	if err != nil {
		writeSessionError(w, err)
		return
	}
	rows, next, err := s.SessionRows(r.Context(), after, limit)
	if err != nil {
		writeSessionError(w, err)
		return
	}
	list := sessionList{Object: "list", Data: rows, Defaults: s.SessionDefaults()}
	if !next.IsZero() {
		c := next.String()
		list.HasMore, list.NextAfter = true, &c
	}
	writeJSON(w, http.StatusOK, list)
}

// pageQuery reads the limit and after parameters; an empty after is the first page.
func pageQuery(q url.Values) (session.Cursor, int, error) {
	limit := session.DefaultPage
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || session.CheckLimit(n) != nil {
			return session.Cursor{}, 0, bad("limit", "%s (got %q)", session.ErrInvalidLimit, truncateParam(q.Get("limit")))
		}
		limit = n
	}
	after, err := session.ParseCursor(q.Get("after"))
	if err != nil {
		return session.Cursor{}, 0, bad("after", "must be the next_after of a previous page of this listing")
	}
	return after, limit, nil
}

// truncateParam bounds a refused parameter value echoed in an error. It cuts at a rune
// boundary: a cut inside a rune would reach the client as U+FFFD, not as what it sent.
func truncateParam(s string) string {
	if len(s) <= 32 {
		return s
	}
	n := 32
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func (api *API) getSession(s Sessions, w http.ResponseWriter, r *http.Request) {
	d, err := s.SessionRow(r.Context(), r.PathValue("key"))
	if err != nil {
		writeSessionError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (api *API) deleteSession(s Sessions, w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	if err := s.DeleteSession(r.Context(), key); err != nil {
		writeSessionError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Key     string `json:"key"`
		Deleted bool   `json:"deleted"`
	}{key, true})
}

func (api *API) patchSession(s Sessions, w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		writeTurnError(w, err)
		return
	}
	patch, err := parsePatch(body)
	if err != nil {
		writeSessionError(w, err)
		return
	}
	row, err := s.PatchSession(r.Context(), r.PathValue("key"), patch)
	if err != nil {
		writeSessionError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, row)
}

// patchAliases are the longer names clients of the reference gateway send.
var patchAliases = map[string]string{
	"thinkingLevel": directive.KeyThinking, "fastMode": directive.KeyFast, "verboseLevel": directive.KeyVerbose,
	"traceLevel": directive.KeyTrace, "reasoningLevel": directive.KeyReasoning,
}

// unknownField is a PATCH key the API does not know.
type unknownField struct{ key string }

func (e *unknownField) Error() string {
	return fmt.Sprintf("%s: unknown field (known: %s)", e.key, strings.Join(app.PatchKeys, ", "))
}

// parsePatch reads a sessions.patch body: an object of known keys whose values are strings or
// null (fast also takes a boolean).
func parsePatch(body []byte) (app.SessionPatch, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, bad("", "request body must be a JSON object")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, bad("", "request body must be a JSON object")
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first unknown key named is the same every time
	patch := app.SessionPatch{}
	for _, k := range keys {
		name := k
		if a, ok := patchAliases[k]; ok {
			name = a
		}
		if !slices.Contains(app.PatchKeys, name) {
			return nil, &unknownField{k}
		}
		if _, dup := patch[name]; dup {
			return nil, bad(k, "is the same field as %s: send one", name)
		}
		v, err := patchValue(name, raw[k])
		if err != nil {
			return nil, bad(k, "%s", err.Error())
		}
		patch[name] = v
	}
	return patch, nil
}

func patchValue(name string, raw json.RawMessage) (*string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case string(raw) == "null":
		return nil, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return &s, nil
	case name == directive.KeyFast && (string(raw) == "true" || string(raw) == "false"):
		s := map[string]string{"true": "on", "false": "off"}[string(raw)]
		return &s, nil
	case name == directive.KeyFast:
		return nil, errors.New("must be a string, a boolean or null")
	}
	return nil, errors.New("must be a string or null")
}

// sessionError is OpenAI's error object with the valid options of a refused field.
type sessionError struct {
	Error struct {
		Message string   `json:"message"`
		Type    string   `json:"type"`
		Param   *string  `json:"param"`
		Code    string   `json:"code"`
		Options []string `json:"options,omitempty"`
	} `json:"error"`
}

func writeSessionError(w http.ResponseWriter, err error) {
	var e sessionError
	e.Error.Message, e.Error.Type = err.Error(), "invalid_request_error"
	status := http.StatusBadRequest
	var pe *app.PatchError
	var uf *unknownField
	var br *badRequest
	switch {
	case errors.As(err, &uf):
		e.Error.Code, e.Error.Param, e.Error.Options = "unknown_field", &uf.key, app.PatchKeys
	case errors.As(err, &pe):
		e.Error.Code, e.Error.Param, e.Error.Options = "invalid_value", &pe.Field, pe.Options
		if pe.Rule == "unknown field" {
			e.Error.Code = "unknown_field"
		}
	case errors.As(err, &br):
		e.Error.Code = "invalid_value"
		if br.Field != "" {
			e.Error.Param = &br.Field
		}
	case errors.Is(err, session.ErrInvalidKey):
		e.Error.Code = "invalid_session"
	case errors.Is(err, session.ErrNotFound):
		status, e.Error.Code = http.StatusNotFound, "session_not_found"
	case errors.Is(err, context.Canceled):
		status, e.Error.Type, e.Error.Code = 499, "server_error", "canceled"
	default:
		status, e.Error.Type, e.Error.Code = http.StatusInternalServerError, "server_error", "internal_error"
	}
	writeJSON(w, status, e)
}
