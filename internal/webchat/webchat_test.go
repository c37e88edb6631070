package webchat_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/webchat"
)

// next stands for the gateway's handler: whatever the page does not serve reaches it.
var next = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusTeapot)
	io.WriteString(w, "next "+r.Method+" "+r.URL.Path)
})

func get(t *testing.T, h http.Handler, method, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestMountServesThePage(t *testing.T) {
	h := webchat.Mount(next)
	tests := []struct {
		method, path string
		status       int
		ctype        string // prefix
		body         string // substring
	}{
		{"GET", "/", 200, "text/html", `<select id="thinking">`},
		{"GET", "/?session=x", 200, "text/html", `<script src="/webchat/app.js" defer></script>`},
		{"GET", "/webchat/app.js", 200, "text/javascript", "renderThinkingPicker"},
		{"GET", "/webchat/app.css", 200, "text/css", ".transcript"},
		{"GET", "/webchat/icon.svg", 200, "image/svg+xml", "<svg"},
		{"GET", "/webchat/index.html", 200, "text/html", "<!doctype html>"},
		{"HEAD", "/", 200, "text/html", ""},
		{"GET", "/webchat/nope.js", 404, "text/plain", "not found"},
		{"GET", "/webchat/../webchat.go", 404, "text/plain", ""},
		{"POST", "/", 418, "", "next POST /"},
		{"GET", "/mcp", 418, "", "next GET /mcp"},
		{"GET", "/v1/sessions", 418, "", "next GET /v1/sessions"},
		{"GET", "/healthz", 418, "", "next GET /healthz"},
	}
	for _, tt := range tests {
		rec := get(t, h, tt.method, tt.path)
		if rec.Code != tt.status {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.path, rec.Code, tt.status)
			continue
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, tt.ctype) {
			t.Errorf("%s %s: Content-Type %q, want %q…", tt.method, tt.path, ct, tt.ctype)
		}
		if !strings.Contains(rec.Body.String(), tt.body) {
			t.Errorf("%s %s: body lacks %q", tt.method, tt.path, tt.body)
		}
		if tt.method == "HEAD" && rec.Body.Len() != 0 {
			t.Errorf("HEAD / has a body")
		}
		if tt.status == 418 {
			if rec.Header().Get("Content-Security-Policy") != "" {
				t.Errorf("%s %s: the page's headers leaked to another route", tt.method, tt.path)
			}
			continue
		}
		for k, want := range map[string]string{
			"Content-Security-Policy": webchat.ContentSecurityPolicy, "X-Content-Type-Options": "nosniff",
			"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer",
		} {
			if got := rec.Header().Get(k); got != want {
				t.Errorf("%s %s: %s = %q, want %q", tt.method, tt.path, k, got, want)
			}
		}
	}
}

func TestMountRevalidates(t *testing.T) {
	h := webchat.Mount(next)
	rec := get(t, h, "GET", "/")
	etag := rec.Header().Get("ETag")
	if etag == "" || rec.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q", etag, rec.Header().Get("Cache-Control"))
	}
	if rec := get(t, h, "GET", "/", "If-None-Match", etag); rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match = %d, want 304", rec.Code)
	}
}

func TestCSPForbidsRemoteAndInlineScripts(t *testing.T) {
	csp := webchat.ContentSecurityPolicy
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP lacks %q", want)
		}
	}
	for _, never := range []string{"unsafe-inline", "unsafe-eval", "http:", "https:", "*"} {
		if strings.Contains(csp, never) {
			t.Errorf("CSP allows %q", never)
		}
	}
}

func TestPublic(t *testing.T) {
	tests := []struct {
		method, path string
		want         bool
	}{
		{"GET", "/", true},
		{"HEAD", "/", true},
		{"GET", "/webchat/app.js", true},
		{"POST", "/", false},
		{"GET", "/v1/sessions", false},
		{"GET", "/mcp", false},
		{"GET", "/webchatx", false},
		{"PUT", "/webchat/app.js", false},
	}
	for _, tt := range tests {
		if got := webchat.Public(httptest.NewRequest(tt.method, tt.path, nil)); got != tt.want {
			t.Errorf("Public(%s %s) = %v, want %v", tt.method, tt.path, got, tt.want)
		}
	}
}

// staticFiles reads the page's sources from the package directory.
func staticFiles(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := fs.WalkDir(os.DirFS("static"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join("static", p))
		out[p] = string(b)
		return err
	})
	if err != nil || len(out) < 4 {
		t.Fatalf("static files: %v (%d)", err, len(out))
	}
	return out
}

func TestPageFetchesNothingFromElsewhere(t *testing.T) {
	url := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	for name, src := range staticFiles(t) {
		for _, m := range url.FindAllString(src, -1) {
			if m != "http://www.w3.org" { // the SVG namespace names, it does not fetch
				t.Errorf("%s refers to %s", name, m)
			}
		}
		if strings.Contains(src, "@import") {
			t.Errorf("%s imports a sheet", name)
		}
	}
}

func TestPageHasNoInlineCode(t *testing.T) {
	files := staticFiles(t)
	html := files["index.html"]
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)\son[a-z]+\s*=`),                            // inline event handlers
		regexp.MustCompile(`(?i)<script(\s[^>]*)?>\s*[^<\s]`),               // inline script bodies
		regexp.MustCompile(`(?i)<script(?:\s+(?:defer|type="[^"]*"))*\s*>`), // scripts without src
		regexp.MustCompile(`(?i)\sstyle\s*=`),                               // style attributes (CSP style-src 'self')
		regexp.MustCompile(`(?i)<style`),
		regexp.MustCompile(`(?i)javascript:`),
	} {
		if m := re.FindString(html); m != "" {
			t.Errorf("index.html has inline code: %q", m)
		}
	}
	js := files["app.js"]
	for _, never := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", ".onclick", "setAttribute('on", "setAttribute('style"} {
		if strings.Contains(js, never) {
			t.Errorf("app.js uses %s", never)
		}
	}
}

// The accessible names the browser tests (and people using a screen reader) rely on.
func TestPageAccessibleNames(t *testing.T) {
	html := staticFiles(t)["index.html"]
	for _, want := range []string{
		`<label for="thinking">Thinking level</label>`, `<select id="thinking">`,
		`<label for="message" class="visually-hidden">Message</label>`, `<textarea id="message"`,
		`<button type="submit" id="send" class="primary">Send</button>`,
		`<label for="model">Model</label>`, `<button type="button" id="new-session" class="primary">New session</button>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("index.html lacks %s", want)
		}
	}
	js := staticFiles(t)["app.js"]
	for _, want := range []string{`'data-role': 'tool'`, `bubble('assistant'`, `'Inherited: '`, `'Override: '`, `'Off'`} {
		if !strings.Contains(js, want) {
			t.Errorf("app.js lacks %s", want)
		}
	}
}

func TestScriptParses(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	if out, err := exec.Command(node, "--check", filepath.Join("static", "app.js")).CombinedOutput(); err != nil {
		t.Errorf("node --check app.js: %v\n%s", err, out)
	}
}
