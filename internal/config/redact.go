package config

import (
	"net/url"
	"strings"

	"github.com/nodmix/nodmix/internal/config/json5"
)

// RedactURL keeps what identifies an endpoint and drops what may be a credential: the user info
// and the fragment go, and a query becomes "…"; a URL with none of them is returned as written.
// The MCP hub's status, logs and errors and `config get` show a server's URL this way, so a
// token in it is never printed.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid url)"
	}
	if u.User == nil && u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" {
		return raw // nothing to drop: shown as written
	}
	u.User = nil
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery, u.ForceQuery = "…", false
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// urlSecrets returns a URL's query, its values and its password.
func urlSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	out := []string{u.RawQuery}
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	if p, ok := u.User.Password(); ok {
		out = append(out, p)
	}
	return out
}

// isURLPath reports whether the value at path (absolute segments) is an endpoint URL, which
// rendering shows redacted: mcp.servers.*.url, models.providers.*.baseUrl, a plugin's baseUrl —
// any key whose name ends in "url".
func isURLPath(path []string) bool {
	if len(path) == 0 {
		return false
	}
	last := path[len(path)-1]
	if _, isIndex := json5.Index(last); isIndex {
		return false
	}
	return strings.HasSuffix(strings.ToLower(last), "url")
}
