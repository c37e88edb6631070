package config

import "net/url"

// RedactURL keeps what identifies an endpoint and drops what may be a credential: the user info
// and the fragment go, and a query becomes "…". The MCP hub's status, logs and errors and
// `config get` show a server's URL this way, so a token in it is never printed.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid url)"
	}
	u.User = nil
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery, u.ForceQuery = "…", false
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// isURLPath reports whether the value at path (absolute segments) is a server URL, which
// rendering shows redacted.
func isURLPath(path []string) bool {
	return len(path) == 4 && path[0] == "mcp" && path[1] == "servers" && path[3] == "url"
}
