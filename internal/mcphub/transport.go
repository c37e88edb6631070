package mcphub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/procgroup"
)

// dialFunc makes the transport of one connection attempt. Tests replace it to reach in-process
// servers; production uses dialConfig.
type dialFunc func(ctx context.Context, d *downstream) (mcp.Transport, error)

func parseEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("must be an http or https URL")
	}
	if u.Host == "" {
		return nil, errors.New("must name a host")
	}
	return u, nil
}

// redactURL keeps what identifies the endpoint and drops what may be a credential. It is
// config.RedactURL, so the hub's status, logs and errors show a URL as `config get` does.
func redactURL(raw string) string { return config.RedactURL(raw) }

// target describes the server for status output without any secret.
func (c ServerConfig) target() string {
	if c.URL != "" {
		return redactURL(c.URL)
	}
	return c.Command
}

// dialConfig builds the real transport for the server's config.
func dialConfig(_ context.Context, d *downstream) (mcp.Transport, error) {
	cfg, h := d.cfg, d.h
	if cfg.URL != "" {
		// The attempt's requests end with abort: the SDK waits for the answers it sends to
		// the server's requests, and a server that never takes one would hold the close.
		actx, abort := context.WithCancel(context.Background())
		d.attemptAbort = abort
		st := &mcp.StreamableClientTransport{
			Endpoint:   cfg.URL,
			HTTPClient: &http.Client{Transport: newHeaderTransport(d.http, cfg.URL, cfg.Headers, actx)},
			MaxRetries: 2,
		}
		return st, nil
	}
	// Not CommandContext: the process must outlive the connect deadline; closing the session
	// ends it (stdin closed, then SIGTERM, then SIGKILL after TerminateGrace).
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = cfg.Cwd
	// Only a small default set of nodmix's variables, never its keys (unless inheritEnv).
	cmd.Env = serverEnv(h.environ(), cfg, runtime.GOOS)
	stderr := newLineLogger(d.log.With("stream", "stderr"), d.scrub)
	d.attemptStderr = stderr
	cmd.Stderr = stderr
	// A grandchild that keeps stderr open must not hold up Wait (and so shutdown): once the
	// server has exited, its stderr gets a moment to drain and is then closed.
	cmd.WaitDelay = stderrDrain
	procgroup.Own(cmd) // ended as a group: see conn.close
	d.attemptCmd = cmd
	ct := &commandTransport{cmd: cmd, terminate: h.terminateGrace, leftOut: d.noteLeftOut}
	// The session's close waits for the answers it owes the server to be written; a server
	// that does not read its stdin would hold it forever (see conn.close).
	d.attemptAbort = ct.abortWrites
	return &startedTransport{Transport: ct, cmd: cmd, group: &d.attemptGroup}, nil
}

// startedTransport records the process group of a command server once its transport has
// started it, so that the connect deadline can end it at once (see downstream.connect). The
// process starts in Connect, on the goroutine that connects, before initialize is sent.
type startedTransport struct {
	mcp.Transport
	cmd   *exec.Cmd
	group *atomic.Int64
}

func (t *startedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err == nil && t.cmd.Process != nil {
		t.group.Store(int64(t.cmd.Process.Pid))
	}
	return c, err
}

// headerTransport adds the configured headers to every request to a url server's origin. A
// request a redirect sends elsewhere (another host or port, or http instead of https) goes
// without them, as Go's client sends an Authorization header only within its host.
//
// Every request also ends when abort does. At most maxUnanswered requests wait for their
// answer's headers at once; more fail at once: the SDK sends its answer to each request of the
// server in a POST of its own, and a server that sent many and never answers those POSTs held a
// goroutine and a connection for each.
type headerTransport struct {
	base         http.RoundTripper
	scheme, host string // the endpoint's
	headers      map[string]string
	abort        context.Context
	waiting      atomic.Int64
}

var _ http.RoundTripper = (*headerTransport)(nil)

func newHeaderTransport(base http.RoundTripper, endpoint string, headers map[string]string, abort context.Context) *headerTransport {
	t := &headerTransport{base: base, headers: headers, abort: abort}
	if u, err := url.Parse(endpoint); err == nil {
		t.scheme, t.host = u.Scheme, u.Host
	}
	return t
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.waiting.Add(1) > maxUnanswered {
		t.waiting.Add(-1)
		return nil, fmt.Errorf("more than %d requests to the server wait for its answer", maxUnanswered)
	}
	defer t.waiting.Add(-1)
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(t.abort, cancel)
	release := func() { stop(); cancel() }
	req = req.Clone(ctx)
	if len(t.headers) > 0 && strings.EqualFold(req.URL.Scheme, t.scheme) && strings.EqualFold(req.URL.Host, t.host) {
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		release()
		return nil, err
	}
	body := &releasingBody{ReadCloser: resp.Body, release: release}
	resp.Body = body
	// The SDK reads a JSON answer or an error's body whole; an event stream it reads event by
	// event, each bounded (and the stream itself may rightly last for hours).
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body = &limitedBody{ReadCloser: body, left: maxFrameBytes}
	}
	return resp, nil
}

// releasingBody lets go of its request's context when it is closed.
type releasingBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// limitedBody fails a read past the bound of one message, as a stdio server's frame is bounded.
type limitedBody struct {
	io.ReadCloser
	left int
}

var errBodyTooLarge = fmt.Errorf("response body exceeds %d MiB", maxFrameBytes>>20)

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errBodyTooLarge
	}
	// One byte more than is left tells a body of exactly the bound from a longer one.
	if len(p) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	if n > b.left {
		n, b.left = b.left, -1
		return n, errBodyTooLarge
	}
	b.left -= n
	return n, err
}

// lineLogger turns a server's stderr into log records, one per line, and keeps the last lines
// for the status and the error of a server that died. Lines are capped so that a server printing
// a huge blob cannot flood the log.
type lineLogger struct {
	log   *slog.Logger // scrubs secrets
	scrub *scrubber    // for the kept lines
	mu    sync.Mutex
	buf   []byte
	skip  bool     // the rest of a line cut at maxLogLine is dropped, up to its newline
	last  []string // ring of the last maxTailLines lines
	next  int
}

const (
	maxLogLine   = 4096
	maxTailLines = 20  // a Node stack trace's message is about 13 lines from its end
	maxTailLine  = 512 // bytes of one kept line
)

func newLineLogger(log *slog.Logger, scrub *scrubber) *lineLogger {
	return &lineLogger{log: log, scrub: scrub}
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	if l.skip {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			return n, nil
		}
		p, l.skip = p[i+1:], false
	}
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.emit(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
	// A line over the cap is logged once its cut is known not to split a secret (every secret
	// that starts before the cap is whole in buf); its rest is dropped, since a rest logged as a
	// line of its own could start inside a secret.
	if len(l.buf) > maxLogLine+l.scrub.longest {
		l.emit(l.buf)
		l.buf, l.skip = l.buf[:0], true
	}
	return n, nil
}

func (l *lineLogger) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	if len(line) == 0 {
		return
	}
	if len(line) > maxLogLine {
		// Cut before a secret the cap would split: the scrubbing masks only whole secrets.
		cut := l.scrub.cut(line, maxLogLine)
		line = append(line[:cut:cut], "…"...)
	}
	l.log.Info("mcp server output", "line", string(line))
	kept := tailLine(l.scrub.replace(string(line)))
	if len(l.last) < maxTailLines {
		l.last = append(l.last, kept)
	} else {
		l.last[l.next] = kept
		l.next = (l.next + 1) % maxTailLines
	}
}

func tailLine(s string) string {
	if len(s) > maxTailLine {
		return strings.ToValidUTF8(s[:maxTailLine], "") + "…"
	}
	return s
}

// tail returns the last lines written, oldest first, secrets masked, with a last line that has
// no newline yet (a process that died in mid-line).
func (l *lineLogger) tail() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.last)+1)
	out = append(out, l.last[l.next:]...)
	out = append(out, l.last[:l.next]...)
	if partial := bytes.TrimRight(l.buf, "\r"); len(partial) > 0 {
		if len(out) == maxTailLines {
			out = out[1:]
		}
		out = append(out, tailLine(l.scrub.replace(string(partial))))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// scrubber removes a server's secrets (env and header values, the URL's query and user info, what
// its args carry of secrets) from text that goes to logs, errors and status output.
type scrubber struct {
	r       *strings.Replacer // nil when the server has no secret
	secrets []string          // what r masks, longest first
	longest int               // bytes of the longest secret
}

// inherited is the environment a command server with inheritEnv takes on top of its env, as
// KEY=VALUE entries; nil for the others.
func newScrubber(cfg ServerConfig, inherited []string) *scrubber {
	type pair struct{ old, new string }
	var pairs []pair
	add := func(secret, mask string) {
		// Very short values would mask ordinary words; they are unlikely to be credentials.
		if len(secret) >= 4 {
			pairs = append(pairs, pair{secret, mask})
		}
	}
	// "Bearer <token>": the token is masked on its own too.
	addHeader := func(v string) {
		add(v, "***")
		if _, tok, ok := strings.Cut(v, " "); ok {
			add(tok, "***")
		}
	}
	if cfg.URL != "" {
		add(cfg.URL, redactURL(cfg.URL))
		if u, err := url.Parse(cfg.URL); err == nil {
			add(u.RawQuery, "…")
			for _, vs := range u.Query() {
				for _, v := range vs {
					add(v, "…")
				}
			}
			if p, ok := u.User.Password(); ok {
				add(p, "***")
			}
		}
	}
	for _, v := range cfg.Headers {
		addHeader(v)
	}
	for _, v := range config.ArgSecrets(cfg.Args) {
		addHeader(v)
	}
	for k, v := range cfg.Env {
		if secretEnvName(k) || len(v) >= minUnnamedSecret {
			add(v, "***")
		}
		if strings.Contains(v, "://") {
			// A URL's credentials, which a server may print without the rest of the URL.
			for _, sec := range config.ArgSecrets([]string{v}) {
				add(sec, "…")
			}
		}
	}
	// With inheritEnv the server gets nodmix's own keys as well: what it prints of them is masked
	// too, by their names only (HOME and PATH are long and in every stack trace).
	for _, kv := range inherited {
		if k, v, ok := strings.Cut(kv, "="); ok && secretEnvName(k) {
			if _, own := cfg.Env[k]; !own {
				add(v, "***")
			}
		}
	}
	if len(pairs) == 0 {
		return &scrubber{}
	}
	// Longest first, so that a value containing another is masked whole.
	slices.SortFunc(pairs, func(a, b pair) int { return len(b.old) - len(a.old) })
	flat := make([]string, 0, 2*len(pairs))
	secrets := make([]string, 0, len(pairs))
	for _, p := range pairs {
		flat = append(flat, p.old, p.new)
		secrets = append(secrets, p.old)
	}
	return &scrubber{r: strings.NewReplacer(flat...), secrets: secrets, longest: len(pairs[0].old)}
}

// cut returns where to cut text at n or before it so that no secret is split: the start of a
// secret that spans n, as often as moving the cut makes another one span it.
func (s *scrubber) cut(text []byte, n int) int {
	for moved := true; moved; {
		moved = false
		for _, sec := range s.secrets {
			lo, hi := max(0, n-len(sec)+1), min(len(text), n+len(sec)-1)
			if lo >= hi {
				continue
			}
			// An occurrence starting in [lo, n) that fits in [lo, hi) spans n.
			if i := bytes.Index(text[lo:hi], []byte(sec)); i >= 0 {
				n, moved = lo+i, true
			}
		}
	}
	return n
}

func (s *scrubber) replace(text string) string {
	if s == nil || s.r == nil {
		return text
	}
	return s.r.Replace(text)
}

// err returns err with secrets removed from its message; errors.Is and errors.As still see the
// original chain.
func (s *scrubber) err(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := s.replace(msg)
	if clean == msg {
		return err
	}
	return &scrubbedError{msg: clean, err: err}
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// formatDelay renders a restart delay for people: "2s", "500ms".
func formatDelay(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// scrubHandler removes a server's secrets from every log record, including the SDK's own, which
// may quote URLs and server messages.
type scrubHandler struct {
	inner slog.Handler
	s     *scrubber
}

var _ slog.Handler = scrubHandler{}

func (h scrubHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.s.replace(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h scrubHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.replace(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		clean := make([]any, len(attrs))
		for i, g := range attrs {
			clean[i] = h.attr(g)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.s.replace(err.Error()))
		}
		return slog.String(a.Key, h.s.replace(fmt.Sprint(v.Any())))
	default:
		return a
	}
}

func (h scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return scrubHandler{h.inner.WithAttrs(clean), h.s}
}

func (h scrubHandler) WithGroup(name string) slog.Handler {
	return scrubHandler{h.inner.WithGroup(name), h.s}
}

// stderrDrain is how long an exited server's stderr may stay open (held by a child it left).
const stderrDrain = 200 * time.Millisecond
