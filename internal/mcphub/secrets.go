package mcphub

import (
	"net/url"
	"strings"
)

// argSecrets returns what a command server's arguments carry of secrets, by the rule `nodmix
// config get` masks them with: the value of a secret-like flag (`--api-key v`, `--token=v`) or
// variable (`GITHUB_TOKEN=v`, as `docker -e` and `env` take it), a header's value
// (`Authorization: Bearer v`, as `mcp-remote --header` takes it), and a URL's query and password.
// Servers print their command lines and the URLs they were given to stderr, which the hub logs
// and shows.
func argSecrets(args []string) []string {
	var out []string
	for i, arg := range args {
		if i > 0 {
			if prev := args[i-1]; strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") && secretName(strings.TrimLeft(prev, "-")) {
				out = append(out, arg)
				continue
			}
		}
		if name, value, ok := strings.Cut(arg, "="); ok && !strings.ContainsAny(name, " :/") && secretName(strings.TrimLeft(name, "-")) {
			out = append(out, value)
			continue
		}
		if name, value, ok := strings.Cut(arg, ":"); ok && !strings.ContainsAny(name, " /") && secretName(name) {
			out = append(out, strings.TrimLeft(value, " "))
			continue
		}
		if strings.Contains(arg, "://") {
			out = append(out, urlSecrets(arg)...)
		}
	}
	return out
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

// secretSuffixes and secretName are the config's rule for secret-like names (its masking of a
// server's args): a name is secret-like when, lowercased and without '_' and '-', it ends with
// one of these. "tokens" is left out: maxTokens is a count.
var secretSuffixes = []string{"apikey", "apikeys", "token", "password", "passwords", "passwd", "secret", "secrets", "authorization", "cookie", "cookies"}

func secretName(name string) bool {
	k := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(name))
	for _, suffix := range secretSuffixes {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	return false
}
