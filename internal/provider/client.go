package provider

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/ollama"
)

// Prepared is a request ready to send: what `nodmix agent --dry-run` prints and what Stream sends.
type Prepared struct {
	Provider string
	Model    string // the model id sent (after a patch's rename)
	// URL is where the request goes, for printing: a password and the query's values that the
	// base URL carries read "********". Stream sends to the real one.
	URL    string
	Method string
	Header http.Header // with credentials: never print it, print MaskedHeader
	Body   []byte

	target        string // URL as sent
	secretHeaders []string
	urlSecrets    []string // the base URL's password and query values, as written and decoded
}

// MaskedHeader is Header with credentials and configured secret headers replaced by "********".
func (pr *Prepared) MaskedHeader() http.Header {
	h := pr.Header.Clone()
	for _, k := range pr.secretHeaders {
		if h.Get(k) != "" {
			h.Set(k, "********")
		}
	}
	return h
}

// Check reports whether req encodes for the provider with patch applied: whether the provider's
// wire format can carry it at all. It needs no key and sends nothing.
func (p *Provider) Check(req *llm.Request, patch llm.Patch) error {
	if _, err := p.dialect.Encode(req, patch); err != nil {
		return fmt.Errorf("provider %q: encode: %w", p.ID, err)
	}
	return nil
}

// Prepare encodes req for the provider with patch applied, and adds the base URL, the key and
// the configured headers. It sends nothing.
func (p *Provider) Prepare(req *llm.Request, patch llm.Patch) (*Prepared, error) {
	enc, err := p.dialect.Encode(req, patch)
	if err != nil {
		return nil, fmt.Errorf("provider %q: encode: %w", p.ID, err)
	}
	key, err := p.apiKey()
	if err != nil {
		return nil, err
	}
	pr := &Prepared{Provider: p.ID, Model: req.Model, Method: http.MethodPost, Header: http.Header{}, Body: enc.Body}
	pr.target = joinURL(p.BaseURL, enc.Path)
	masked, secrets := maskURL(p.BaseURL)
	pr.URL, pr.urlSecrets = joinURL(masked, enc.Path), secrets
	if patch.Model != "" {
		pr.Model = patch.Model
	}
	for k, v := range enc.Header {
		pr.Header[http.CanonicalHeaderKey(k)] = v
	}
	for k, s := range p.headers {
		v, err := s.Resolve(p.lookupEnv)
		if err != nil {
			return nil, fmt.Errorf("provider %q: %w", p.ID, err)
		}
		pr.Header.Set(k, v)
		pr.secretHeaders = append(pr.secretHeaders, k) // a configured header may hold a token
	}
	if key != "" {
		pr.Header.Set(p.authHeader, p.authPrefix+key)
		pr.secretHeaders = append(pr.secretHeaders, p.authHeader)
	}
	return pr, nil
}

// Error is a provider's failure as the turn reports it: who, what status, what it said, and what
// to do. It never holds a credential.
type Error struct {
	Provider string
	Status   int // 0 for failures without an HTTP status (network, cut stream)
	Message  string
	Hint     string
	Retries  int
	Err      error // the underlying error, if any
}

// RateLimited reports whether the provider refused the call for its rate limit: an HTTP 429,
// or a 200 whose error code stands for one (llm.StreamError.Status).
func (e *Error) RateLimited() bool {
	var se *llm.StreamError
	return e.Status == http.StatusTooManyRequests || errors.As(e.Err, &se) && se.Status == http.StatusTooManyRequests
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider %q", e.Provider)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": %d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Retries > 0 {
		fmt.Fprintf(&b, " (after %d retries)", e.Retries)
	}
	if e.Hint != "" {
		b.WriteString(" — " + e.Hint)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Retry policy: rate limits and server errors are retried with a bound; a Retry-After longer
// than maxRetryWait is not waited for (the turn ends with the provider's word instead).
const (
	maxAttempts  = 3
	maxRetryWait = 20 * time.Second
	maxErrorBody = 64 << 10
)

// retryable reports whether a status is worth another attempt.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == 529 || status >= 500 && status != http.StatusNotImplemented
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Stream sends req and yields its decoded events; the sequence ends after llm.EventDone or with
// an *Error. Cancelling ctx aborts the request and the stream.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, patch llm.Patch) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		pr, err := p.Prepare(req, patch)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		w := newIdleWatch(ctx, p.idle)
		defer w.stop()
		for attempt := 1; ; attempt++ {
			resp, sent, err := p.send(ctx, w, pr, attempt)
			if err != nil {
				yield(llm.Event{}, err)
				return
			}
			attempt = sent
			if !p.answer(ctx, w, pr, resp, req.Stream, attempt, yield) {
				return
			}
		}
	}
}

// answer yields the decoded events of resp, and closes its body. It reports true when the
// provider refused the call for now inside a 200 (MiniMax's rate limit as a code) before any
// event, and another attempt may follow: the caller has waited for it by then.
func (p *Provider) answer(ctx context.Context, w *idleWatch, pr *Prepared, resp *http.Response, stream bool, attempt int, yield func(llm.Event, error) bool) bool {
	defer resp.Body.Close()
	content, err := decodedBody(resp)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		} else if w.fired() {
			err = p.idleError(true, 0)
		} else {
			err = &Error{Provider: p.ID, Message: cut(err.Error()), Hint: "remove Accept-Encoding from models.providers." + p.ID + ".headers", Err: err}
		}
		yield(llm.Event{}, err)
		return false
	}
	body := bufio.NewReader(&boundedBody{r: content, left: p.maxResp})
	switch bodyKind(body) {
	case '<':
		yield(llm.Event{}, &Error{Provider: p.ID, Message: "answered with an HTML page, not the API's response", Hint: "check models.providers." + p.ID + ".baseUrl"})
		return false
	case '{':
		// One JSON document where events were asked for: an error, or the answer of a
		// server that does not stream. Read as a stream, it would look cut short.
		stream = stream && p.dialect.Name() == ollama.Name // whose stream is JSON lines
	}
	// The whole body is bounded above (maxResp); its lines and documents by the dialects
	// (llm.MaxLine, llm.MaxDocument).
	first := true
	for ev, err := range p.dialect.Decode(body, stream) {
		if err != nil {
			// A 200 refused before any event (llm.StreamError.Status) is retried as its
			// status would be: nothing was yielded, so nothing is lost or doubled.
			var se *llm.StreamError
			if first && errors.As(err, &se) {
				if again, _ := p.retry(ctx, w, resp.Header, se.Status, attempt); again {
					return true
				}
			}
			e := p.streamError(ctx, w, err, pr)
			if pe, ok := e.(*Error); ok {
				pe.Retries = attempt - 1
			}
			yield(llm.Event{}, e)
			return false
		}
		first = false
		if !yield(ev, nil) {
			return false
		}
	}
	return false
}

// retry reports whether a call refused with status at attempt is asked again, having waited
// for it: the status is worth retrying, attempts are left, the provider asks for no longer a
// wait than nodmix waits, and the response did not stall (an error body that stalled ended the
// request's context). err is the caller's context ending during the wait.
func (p *Provider) retry(ctx context.Context, w *idleWatch, h http.Header, status, attempt int) (bool, error) {
	wait, ok := retryWait(h, attempt)
	if !retryable(status) || attempt >= maxAttempts || !ok || w.fired() {
		return false, nil
	}
	p.log.Info("provider call retried", "provider", p.ID, "status", status, "wait", wait)
	if err := p.sleep(ctx, wait); err != nil {
		return false, err
	}
	return true, nil
}

// decodedBody is resp's body as the provider meant it: net/http undoes the gzip it asked for
// itself, not one that a configured Accept-Encoding header asked for.
func decodedBody(resp *http.Response) (io.Reader, error) {
	if resp.Uncompressed {
		return resp.Body, nil
	}
	switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return resp.Body, nil
	case "gzip", "x-gzip":
		z, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("answered with a gzip body that does not read: %w", err)
		}
		return z, nil
	default:
		return nil, fmt.Errorf("answered in content encoding %q, which nodmix does not read", enc)
	}
}

// errTooLarge ends the reading of a response past the provider's bound.
var errTooLarge = errors.New("response too large")

// boundedBody reads r until left bytes have been read, then fails with errTooLarge.
type boundedBody struct {
	r    io.Reader
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// bodyKind is the first byte of a response body past a byte order mark and white space, as far
// as it has arrived: '{' for a JSON document, '<' for a markup page, 0 when it cannot tell. It
// waits only for the first read, as decoding would.
func bodyKind(r *bufio.Reader) byte {
	if _, err := r.Peek(1); err != nil {
		return 0
	}
	b, _ := r.Peek(r.Buffered())
	b = bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF")), " \t\r\n")
	if len(b) == 0 || b[0] != '{' && b[0] != '<' {
		return 0
	}
	return b[0]
}

// send posts pr, retrying rate limits and server errors, from attempt first on; it returns the
// attempt that got the 2xx response. The request runs under w's context, and the response's
// body is bounded by w; ctx is the caller's.
//
// A provider that sends no headers within the idle bound is not asked again, as a network
// failure is not: it may be working on the request still (and charging for it), and another
// attempt would hold the turn for another whole bound.
func (p *Provider) send(ctx context.Context, w *idleWatch, pr *Prepared, first int) (*http.Response, int, error) {
	for attempt := first; ; attempt++ {
		hreq, err := http.NewRequestWithContext(w.ctx, pr.Method, pr.target, bytes.NewReader(pr.Body))
		if err != nil {
			return nil, 0, &Error{Provider: p.ID, Message: "bad base URL " + redactURL(p.BaseURL), Hint: "check models.providers." + p.ID + ".baseUrl"}
		}
		hreq.Header = pr.Header.Clone()
		w.arm()
		resp, err := p.http.Do(hreq)
		w.disarm()
		if err != nil {
			if ctx.Err() != nil {
				return nil, 0, ctx.Err()
			}
			if w.fired() {
				return nil, 0, p.idleError(false, attempt-1)
			}
			var re *redirectError
			if errors.As(err, &re) {
				return nil, 0, &Error{Provider: p.ID, Message: "redirected to " + re.to, Hint: "nodmix sends the key only to models.providers." + p.ID + ".baseUrl: set it to the new address if it is the provider's"}
			}
			var ue *url.Error
			if errors.As(err, &ue) {
				// It quotes the URL with its query; whoever prints the chain must not see it.
				err = &url.Error{Op: ue.Op, URL: redactURL(ue.URL), Err: ue.Err}
			}
			return nil, 0, &Error{Provider: p.ID, Message: "cannot reach " + redactURL(p.BaseURL) + ": " + netReason(err), Hint: "check the network and models.providers." + p.ID + ".baseUrl", Retries: attempt - 1, Err: err}
		}
		resp.Body = w.body(resp.Body)
		if resp.StatusCode/100 == 2 {
			return resp, attempt, nil
		}
		var raw []byte
		if content, err := decodedBody(resp); err == nil {
			raw, _ = io.ReadAll(io.LimitReader(content, maxErrorBody))
		}
		resp.Body.Close()
		again, err := p.retry(ctx, w, resp.Header, resp.StatusCode, attempt)
		if err != nil {
			return nil, 0, err
		}
		if again {
			continue
		}
		return nil, 0, p.statusError(resp.StatusCode, raw, attempt-1, pr)
	}
}

// retryWait is the wait before attempt+1: the provider's Retry-After (seconds or an HTTP date,
// or retry-after-ms) when it gave one, else 1 s, 2 s, …; ok is false when the provider asks for
// longer than maxRetryWait.
func retryWait(h http.Header, attempt int) (time.Duration, bool) {
	d := time.Duration(attempt) * time.Second
	// A wait past the bound is compared as a number first: converting a huge one (or +Inf) to
	// a Duration overflows into a negative wait, an immediate retry.
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		if ms > float64(maxRetryWait/time.Millisecond) {
			return 0, false
		}
		d = time.Duration(ms * float64(time.Millisecond))
	} else if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
			if s > maxRetryWait.Seconds() {
				return 0, false
			}
			d = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = max(time.Until(t), 0)
		}
	}
	return d, d <= maxRetryWait
}

func (p *Provider) statusError(status int, body []byte, retries int, pr *Prepared) *Error {
	e := &Error{Provider: p.ID, Status: status, Message: p.scrub(llm.ErrorMessage(body), pr), Retries: retries}
	e.Hint = p.statusHint(status)
	e.Message = cut(e.Message)
	return e
}

// statusHint is what a person can do about an HTTP status, "" when there is nothing to say.
func (p *Provider) statusHint(status int) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "check the API key: " + p.KeyHint()
	case status == http.StatusPaymentRequired:
		return "the account is out of credit: check its balance with the provider"
	case status == http.StatusNotFound:
		return "check the model id and models.providers." + p.ID + ".baseUrl"
	case status == http.StatusTooManyRequests:
		return "rate limited: wait and try again, or use another model"
	case status >= 500:
		return "the provider is failing: try again later"
	case status == http.StatusBadRequest:
		return "the provider refused the request"
	}
	return ""
}

// maxMessage bounds the provider's words in an error: a provider may put a whole request (or
// anything) there, and the error ends up in sessions, logs and answers.
const maxMessage = 500

// cut is the provider's words s as one line of plain text, bounded to maxMessage bytes on a
// character boundary: control characters (an escape sequence would drive the terminal that
// prints the error) read as spaces.
func cut(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || 0x7f <= r && r < 0xa0 {
			return ' '
		}
		return r
	}, s)
	if len(s) <= maxMessage {
		return s
	}
	n := maxMessage
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// idleError is the call's end when the provider sent nothing for the idle bound: before its
// response headers, or once the body had begun.
func (p *Provider) idleError(begun bool, retries int) *Error {
	msg := fmt.Sprintf("no answer for %s", p.idle)
	if begun {
		msg += " after the response began"
	}
	return &Error{Provider: p.ID, Message: msg, Hint: "the provider stopped answering: try again later", Retries: retries, Err: ErrIdle}
}

func (p *Provider) streamError(ctx context.Context, w *idleWatch, err error, pr *Prepared) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if w.fired() || errors.Is(err, ErrIdle) {
		return p.idleError(true, 0)
	}
	e := &Error{Provider: p.ID, Err: err}
	var se *llm.StreamError
	switch {
	case errors.Is(err, errTooLarge):
		e.Message = fmt.Sprintf("the response grew past %d bytes, more than any answer", p.maxResp)
		e.Hint = "check models.providers." + p.ID + ".baseUrl"
	case errors.Is(err, llm.ErrTruncated):
		e.Message = "the response stream ended before it was complete"
		e.Hint = "try again"
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		// The connection went in the middle of the body: the same cut as a stream that ends
		// early, which "unexpected EOF" does not say to a person.
		e.Message = "the response stream ended before it was complete: the connection was closed"
		e.Hint = "try again"
	case errors.As(err, &se):
		// The chain keeps a scrubbed copy: callers may look for the StreamError.
		se = &llm.StreamError{Type: cut(p.scrub(se.Type, pr)), Message: cut(p.scrub(se.Message, pr)), Status: se.Status}
		e.Message, e.Err = se.Error(), se
		switch {
		case se.Status != 0:
			e.Hint = p.statusHint(se.Status)
		case strings.Contains(se.Type, "overloaded") || strings.Contains(se.Type, "rate"):
			e.Hint = "the provider is busy: try again later"
		}
	default:
		e.Message = cut(p.scrub(err.Error(), pr))
	}
	return e
}

// scrub removes the credentials from provider text, which sometimes echoes a key or the
// request line back.
func (p *Provider) scrub(s string, pr *Prepared) string {
	for _, k := range pr.secretHeaders {
		v := pr.Header.Get(k)
		v = strings.TrimPrefix(v, p.authPrefix)
		if len(v) >= minSecret {
			s = strings.ReplaceAll(s, v, "********")
		}
	}
	for _, v := range pr.urlSecrets {
		if len(v) >= minSecret {
			s = strings.ReplaceAll(s, v, "********")
		}
	}
	return s
}

// minSecret is the shortest secret scrub masks. A key of a local proxy can be short ("abc1234"),
// and echoed it is still a key; below four bytes masking would only garble the provider's words.
const minSecret = 4

// joinURL appends a dialect's path, which may carry a query of its own (Gemini's ?alt=sse), to
// the base URL's path: a base URL's query (an api-version, a key for a proxy) goes after both.
func joinURL(base, path string) string {
	b, bq, _ := strings.Cut(base, "?")
	pp, pq, _ := strings.Cut(path, "?")
	u := strings.TrimRight(b, "/") + pp
	switch {
	case bq != "" && pq != "":
		return u + "?" + bq + "&" + pq
	case bq != "":
		return u + "?" + bq
	case pq != "":
		return u + "?" + pq
	}
	return u
}

// maskURL is a base URL with its password and the values of its query replaced by "********",
// and those secrets (as written and decoded) for scrubbing provider text. A URL that does not parse
// falls back to redactURL (user info and query dropped) with no secrets to scrub; it is never
// sent, since the request to it fails as a bad base URL.
func maskURL(u string) (string, []string) {
	pu, err := url.Parse(u)
	if err != nil {
		return redactURL(u), nil
	}
	var secrets []string
	pw, hasPW := pu.User.Password()
	if hasPW {
		secrets = append(secrets, pw, url.PathEscape(pw), url.QueryEscape(pw))
		pu.User = url.User(pu.User.Username())
	}
	if pu.RawQuery != "" {
		params := strings.Split(pu.RawQuery, "&")
		for i, kv := range params {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || v == "" {
				continue
			}
			secrets = append(secrets, v)
			if dv, err := url.QueryUnescape(v); err == nil && dv != v {
				secrets = append(secrets, dv)
			}
			params[i] = k + "=********"
		}
		pu.RawQuery = strings.Join(params, "&")
	}
	masked := pu.String()
	if hasPW { // set by hand: url.URL would escape the asterisks
		name := pu.User.String()
		masked = strings.Replace(masked, "://"+name+"@", "://"+name+":********@", 1)
	}
	return masked, secrets
}

// redactURL drops userinfo and the query, which may carry credentials. A URL net/url cannot
// read loses everything up to its last @ as well, wherever it is.
func redactURL(u string) string {
	if pu, err := url.Parse(u); err == nil {
		pu.User, pu.RawQuery, pu.ForceQuery, pu.Fragment, pu.RawFragment = nil, "", false, "", ""
		return pu.String()
	}
	if i := strings.Index(u, "?"); i >= 0 {
		u = u[:i]
	}
	if j := strings.Index(u, "://"); j >= 0 {
		if i := strings.LastIndex(u, "@"); i > j {
			u = u[:j+3] + u[i+1:]
		}
	}
	return u
}

// netReason is the transport error without the URL the http package prefixes.
func netReason(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner.Error()
		}
	}
	return err.Error()
}

// sameOriginRedirects returns a copy of c that follows a redirect only within the origin of the
// first request (or from http to https on its host). net/http forwards every header but Authorization and cookies to whatever host
// a redirect names, and keys also travel as x-api-key, x-goog-api-key or configured headers; the
// Referer it adds would carry the base URL there too.
func sameOriginRedirects(c *http.Client) *http.Client {
	cc := *c
	next := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		o := via[0].URL
		upgrade := o.Scheme == "http" && req.URL.Scheme == "https" // the key went in clear already
		if req.URL.Host != o.Host || req.URL.Scheme != o.Scheme && !upgrade {
			return &redirectError{to: req.URL.Scheme + "://" + req.URL.Host}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cc
}

// redirectError is a redirect to another origin, which is not followed.
type redirectError struct{ to string }

func (e *redirectError) Error() string { return "redirected to another host (" + e.to + ")" }
