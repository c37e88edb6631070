package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/nodmix/nodmix/internal/config/json5"
	"github.com/nodmix/nodmix/internal/regular"
)

var (
	_ fmt.Formatter    = Secret{}
	_ fmt.GoStringer   = Secret{}
	_ slog.LogValuer   = Secret{}
	_ json.Marshaler   = Secret{}
	_ json.Unmarshaler = (*Secret)(nil)
	_ fmt.Formatter    = PluginEntry{}
	_ json.Marshaler   = PluginEntry{}
	_ fmt.Formatter    = Agents{}
	_ json.Marshaler   = Agents{}
)

// Mask is what a secret's value looks like wherever it is shown.
const Mask = "********"

// ErrSecretNotSet is returned by Resolve for a secret that the config does not set.
var ErrSecretNotSet = errors.New("secret is not set")

// maxSecretFile bounds what a $file secret may hold; a key or token is far smaller.
const maxSecretFile = 64 << 10

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// Secret is a string setting that may be given literally or as a SecretRef: {"$env": "NAME"}
// reads an environment variable, {"$file": "/path"} reads a file (trimmed). A literal value is
// never printed, logged or marshalled: those show Mask. The zero Secret is unset.
type Secret struct {
	literal string
	env     string
	file    string
	present bool   // the config gives a value, possibly "", or a reference
	path    string // the config path, for error messages
	dir     string // anchors a relative $file
}

// NewSecret returns a Secret holding a literal value.
func NewSecret(value string) Secret { return Secret{literal: value, present: true} }

// IsSet reports whether the config gives a reference or a non-empty value.
func (s Secret) IsSet() bool { return s.env != "" || s.file != "" || s.literal != "" }

// Ref returns the reference kind ("$env" or "$file") and its target, or "", "" for a literal or
// an unset secret. References are not secret.
func (s Secret) Ref() (kind, target string) {
	switch {
	case s.env != "":
		return "$env", s.env
	case s.file != "":
		return "$file", s.file
	}
	return "", ""
}

// Resolve returns the secret's value. lookupEnv is os.LookupEnv in production; it also provides
// HOME for a $file path starting with ~/. A relative $file path is relative to the config file's
// directory. Errors name the config path, never the value. A secret the config does not give
// at all yields ErrSecretNotSet; an empty literal (an environment variable set to "") yields "".
func (s Secret) Resolve(lookupEnv func(string) (string, bool)) (string, error) {
	where := s.path
	if where == "" {
		where = "secret"
	}
	switch {
	case !s.present:
		return "", fmt.Errorf("%s: %w", where, ErrSecretNotSet)
	case s.env != "":
		v, ok := lookupEnv(s.env)
		if !ok || v == "" {
			return "", fmt.Errorf("%s: environment variable %s is not set", where, s.env)
		}
		return v, nil
	case s.file != "":
		name := s.file
		if rest, ok := strings.CutPrefix(name, "~/"); ok {
			home, _ := lookupEnv("HOME")
			if home == "" {
				return "", fmt.Errorf("%s: cannot expand ~ in secret file path: HOME is not set", where)
			}
			name = filepath.Join(home, rest)
		} else if !filepath.IsAbs(name) && s.dir != "" {
			name = filepath.Join(s.dir, name)
		}
		v, err := readSecretFile(name)
		if err != nil {
			return "", fmt.Errorf("%s: %w", where, err)
		}
		return v, nil
	}
	return s.literal, nil
}

// readSecretFile reads the secret of a regular file. A named pipe, a device or a directory is
// refused at once by regular.Open, which does not wait for a pipe's writer: a command resolving
// its secrets would otherwise hang on a FIFO, with no signal short of SIGKILL ending it.
func readSecretFile(name string) (string, error) {
	f, _, err := regular.Open(name)
	if errors.Is(err, regular.ErrNotRegular) {
		return "", fmt.Errorf("secret file %s: %w", name, ErrNotRegular)
	}
	if err != nil {
		return "", fmt.Errorf("read secret file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", fmt.Errorf("read secret file %s: %w", name, err)
	}
	if len(data) > maxSecretFile {
		return "", fmt.Errorf("secret file %s is larger than %d bytes", name, maxSecretFile)
	}
	v := strings.TrimSpace(string(data))
	if v == "" {
		return "", fmt.Errorf("secret file %s is empty", name)
	}
	return v, nil
}

// String shows Mask for a literal, the reference for a SecretRef and "" when unset.
func (s Secret) String() string {
	switch kind, target := s.Ref(); {
	case kind != "":
		return kind + ":" + target
	case s.literal != "":
		return Mask
	}
	return ""
}

// GoString keeps %#v from printing the fields.
func (s Secret) GoString() string { return fmt.Sprintf("config.Secret(%q)", s.String()) }

// Format makes every fmt verb print String, so no verb can reach the literal.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, s.GoString())
		return
	}
	_, _ = io.WriteString(f, s.String())
}

// LogValue masks the secret in slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON writes Mask for a literal, the SecretRef object for a reference and null when unset.
func (s Secret) MarshalJSON() ([]byte, error) {
	switch kind, target := s.Ref(); {
	case kind != "":
		return json.Marshal(map[string]string{kind: target})
	case s.present:
		return json.Marshal(Mask)
	}
	return []byte("null"), nil
}

// UnmarshalJSON accepts a string or a SecretRef object, so plugins can decode their raw config
// into structs with Secret fields.
func (s *Secret) UnmarshalJSON(data []byte) error {
	n, err := json5.Parse(data)
	if err != nil {
		return errors.New("secret: invalid JSON")
	}
	v, rule := decodeSecret(n)
	if rule != "" {
		return errors.New("secret: " + rule)
	}
	*s = v
	return nil
}

const secretRule = `must be a string or a SecretRef: {"$env": "NAME"} or {"$file": "/path"}`

// decodeSecret turns a node into a Secret, or returns the rule it breaks.
func decodeSecret(n *json5.Node) (Secret, string) {
	switch n.Kind {
	case json5.Null:
		return Secret{}, ""
	case json5.String:
		return Secret{literal: n.Str, present: true}, ""
	case json5.Object:
		if len(n.Members) != 1 || n.Members[0].Value.Kind != json5.String || n.Members[0].Value.Str == "" {
			return Secret{}, secretRule
		}
		m := n.Members[0]
		switch m.Key {
		case "$env":
			if !envName().MatchString(m.Value.Str) {
				return Secret{}, "$env must name an environment variable (letters, digits and _, not starting with a digit)"
			}
			return Secret{env: m.Value.Str, present: true}, ""
		case "$file":
			return Secret{file: m.Value.Str, present: true}, ""
		}
	}
	return Secret{}, secretRule
}

// isSecretRef reports whether n is a well-formed SecretRef object.
func isSecretRef(n *json5.Node) bool {
	if n.Kind != json5.Object {
		return false
	}
	s, rule := decodeSecret(n)
	return rule == "" && s.present
}

// secretSuffixes are the key names that hold secrets. A key is secret-like when, lowercased and
// without '_' and '-', it ends with one of these: apiKey, api_key, apiKeys, token, accessToken,
// clientSecret, password, dbPassword, an Authorization header, a Cookie... "tokens" is left out on
// purpose: maxTokens is a count.
var secretSuffixes = []string{"apikey", "apikeys", "token", "password", "passwords", "passwd", "secret", "secrets", "authorization", "cookie", "cookies"}

// separators is built once: isSecretName runs for every value a masked rendering visits.
var separators = strings.NewReplacer("_", "", "-", "")

// IsSecretName reports whether a key or variable name marks its value as a secret (token,
// secret, password, apiKey, … at its end, separators and case aside): the rule every mask of
// nodmix's uses.
func IsSecretName(key string) bool { return isSecretName(key) }

func isSecretName(key string) bool {
	k := strings.ToLower(separators.Replace(key))
	for _, suffix := range secretSuffixes {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	return false
}

// isSecretPath reports whether the value at path (absolute segments) holds a secret: the
// values of the maps the decoder reads as Secrets (mcp.servers.*.env and .headers,
// models.providers.*.headers, tools.exec.env), and any secret-like key anywhere, which covers
// gateway.auth.token and plugins.entries.*.config.**.apiKey.
func isSecretPath(path []string) bool {
	if len(path) == 0 {
		return false
	}
	switch {
	case len(path) == 5 && path[0] == "mcp" && path[1] == "servers" && (path[3] == "env" || path[3] == "headers"),
		len(path) == 5 && path[0] == "models" && path[1] == "providers" && path[3] == "headers",
		len(path) == 4 && path[0] == "tools" && path[1] == "exec" && path[2] == "env":
		return true
	}
	last := path[len(path)-1]
	if _, isIndex := json5.Index(last); isIndex {
		return false
	}
	return isSecretName(last)
}

// masker returns a ReplaceFunc for json5.AppendJSON that shows every string or number lying
// under a secret path as Mask, except inside a SecretRef, which is shown as it is, and a server
// URL as RedactURL does. root is a tree whose place in the whole config is prefix, and sub is
// the path under root of the value being rendered.
//
// Its cost per value is constant: what a value lies under is its parent's answer and one check of
// its own key, kept as the renderer goes down (it visits a container before what it holds); the
// containers come from the renderer's parents. Looking them up again from the root for each
// value made `config get` of a map of many entries (tools.exec.env) quadratic, and walking the
// whole path at each value made deep nesting quadratic too.
func masker(root *json5.Node, prefix, sub []string) json5.ReplaceFunc {
	const (
		plain  = iota // under no secret key
		masked        // under a secret key holding a literal
		shown         // under a secret key holding a SecretRef
	)
	// seg and view give the absolute path of the node at local[:k] (sub, then rel): the checks
	// read at most its first six segments and its last, so a long path is its last segment.
	var rel []string
	seg := func(i int) string {
		switch {
		case i < len(prefix):
			return prefix[i]
		case i < len(prefix)+len(sub):
			return sub[i-len(prefix)]
		}
		return rel[i-len(prefix)-len(sub)]
	}
	var short [6]string
	view := func(k int) []string {
		l := len(prefix) + k
		if l > len(short) {
			return []string{seg(l - 1)}
		}
		for i := range l {
			short[i] = seg(i)
		}
		return short[:l]
	}
	step := func(under int, k int, n *json5.Node) int {
		switch {
		case under != plain || k == 0 || !isSecretPath(view(k)):
			return under
		case n != nil && isSecretRef(n):
			return shown
		}
		return masked
	}
	// state[k] is what the node at local[:k] lies under; above[k] is the node at sub[:k].
	state := make([]int, 1, len(sub)+16)
	above := make([]*json5.Node, len(sub)+1)
	above[0] = root
	for k := 1; k <= len(sub); k++ {
		above[k], _ = json5.Lookup(root, sub[:k])
		state = append(state, step(state[k-1], k, above[k]))
	}
	return func(path []string, parents []*json5.Node, n *json5.Node) ([]byte, bool) {
		rel = path
		k := len(sub) + len(path)
		if len(path) > 0 {
			state = append(state[:k], step(state[k-1], k, n))
		}
		if n.Kind != json5.String && n.Kind != json5.Number {
			return nil, false
		}
		// Secrets first: a secret named like a URL (a webhook) may hold its credential in
		// the path, which RedactURL keeps.
		switch state[k] {
		case masked:
			return []byte(`"` + Mask + `"`), true
		case shown:
			return nil, false
		}
		full := view(k)
		if i, ok := argIndex(full); ok && n.Kind == json5.String && k > 0 {
			var args *json5.Node
			if len(path) > 0 {
				args = parents[len(path)-1]
			} else {
				args = above[k-1] // the argument itself is being rendered
			}
			var prev string
			if i > 0 && args != nil && args.Kind == json5.Array && i-1 < len(args.Elems) {
				if p := args.Elems[i-1]; p.Kind == json5.String {
					prev = p.Str
				}
			}
			if masked := maskArg(n.Str, prev); masked != n.Str {
				b, _ := json.Marshal(masked)
				return b, true
			}
			return nil, false
		}
		if n.Kind == json5.String && isURLPath(full) {
			if r := RedactURL(n.Str); r != n.Str {
				b, _ := json.Marshal(r)
				return b, true
			}
		}
		return nil, false
	}
}

// argIndex returns i when path is a command-line argument: mcp.servers.*.args.i, or
// tools.hooks.beforeCall.*.command.i (a hook's argv may carry a key as a server's args do).
func argIndex(path []string) (int, bool) {
	switch {
	case len(path) == 5 && path[0] == "mcp" && path[1] == "servers" && path[3] == "args":
		return json5.Index(path[4])
	case len(path) == 6 && path[0] == "tools" && path[1] == "hooks" && path[2] == "beforeCall" && path[4] == "command":
		return json5.Index(path[5])
	}
	return 0, false
}

// maskArg masks what a server's command-line argument carries of a secret, going by names as
// the rest of the config does: the value of a secret-like flag (`--api-key=v`, or `v` after
// `--api-key`) or variable (`GITHUB_TOKEN=v`, as `docker -e` and `env` take it), a header
// (`Authorization: Bearer v`, as `mcp-remote --header` takes it), and a URL's credentials. prev
// is the argument before arg.
func maskArg(arg, prev string) string {
	if head, _, ok := argSecret(arg, prev); ok {
		return head + Mask
	}
	if strings.Contains(arg, "://") {
		return RedactURL(arg)
	}
	return arg
}

// ArgSecrets returns what a server's command-line arguments carry of secrets, by the rule
// `config get` masks them with (see maskArg), a URL's query, its values and its password
// included: servers print their command lines and the URLs they were given to stderr, which the
// hub logs and shows, so it masks these wherever they appear.
func ArgSecrets(args []string) []string {
	var out []string
	for i, arg := range args {
		prev := ""
		if i > 0 {
			prev = args[i-1]
		}
		if _, secret, ok := argSecret(arg, prev); ok {
			out = append(out, secret)
		} else if strings.Contains(arg, "://") {
			out = append(out, urlSecrets(arg)...)
		}
	}
	return out
}

// argSecret splits arg into what stays shown and the secret it carries, when it carries one by
// name (see maskArg; URLs aside).
func argSecret(arg, prev string) (head, secret string, ok bool) {
	if strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") && isSecretName(strings.TrimLeft(prev, "-")) {
		return "", arg, true
	}
	if name, value, ok := strings.Cut(arg, "="); ok && !strings.ContainsAny(name, " :/") && isSecretName(strings.TrimLeft(name, "-")) {
		return name + "=", value, true
	}
	if name, value, ok := strings.Cut(arg, ":"); ok && !strings.ContainsAny(name, " /") && isSecretName(name) {
		v := strings.TrimLeft(value, " ")
		return name + ":" + value[:len(value)-len(v)], v, true
	}
	return "", "", false
}

// maskRaw renders raw JSON compactly with secret-like keys masked. It treats raw as free-form
// (plugin config, agents), so only key names decide.
func maskRaw(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	n, err := json5.Parse(raw)
	if err != nil {
		return `"` + Mask + `"`
	}
	return string(json5.AppendJSON(nil, raw, n, "", masker(n, []string{"plugins", "entries", "_", "config"}, nil)))
}
