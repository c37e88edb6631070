// Package webchat is the gateway's chat page: HTML, CSS and plain JavaScript embedded in the
// binary, with no build step, that talk to the /v1 API and fetch nothing from anywhere else.
package webchat

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// Prefix is where the page's files are served; the page itself is at "/".
const Prefix = "/webchat/"

// ContentSecurityPolicy is sent with every file of the page: scripts, styles and images come
// from the gateway only, the page connects only to it, and nothing may frame it. The page has no
// inline script, style or event handler, so none is allowed.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// file is one embedded file, ready to serve.
type file struct {
	name string
	body []byte
	etag string
	mime string
}

// pageTypes are the media types of the page's files. They are fixed here, not read from the
// host's MIME tables, which a system may map otherwise (.js as text/plain), and with nosniff the
// browser would then refuse the script.
var pageTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// Mount serves the page at GET / and its files under Prefix; every other request goes to next.
// The returned handler is safe for concurrent use; the files are read once, here.
func Mount(next http.Handler) http.Handler {
	files := map[string]file{}
	_ = fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		name := strings.TrimPrefix(p, "static/")
		ctype, ok := pageTypes[path.Ext(name)]
		if !ok {
			ctype = "application/octet-stream"
		}
		files[Prefix+name] = file{name: name, body: body, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, mime: ctype}
		return nil
	})
	files["/"] = files[Prefix+"index.html"]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !Public(r) {
			next.ServeHTTP(w, r)
			return
		}
		f, ok := files[r.URL.Path]
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if !ok {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		// Revalidated on every load, so a new binary's page is picked up at once.
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Type", f.mime)
		h.Set("ETag", f.etag)
		http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.body))
	})
}

// Public reports whether r asks for the page or one of its files (GET or HEAD of "/" or of a
// path under Prefix). They hold no secret, so they are served without the bearer token: the
// page asks for the token itself and sends it on its API calls.
func Public(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	return r.URL.Path == "/" || strings.HasPrefix(r.URL.Path, Prefix)
}
