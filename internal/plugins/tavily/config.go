package tavily

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/plugin"
)

// Defaults of the plugin configuration.
const (
	DefaultBaseURL        = "https://api.tavily.com"
	DefaultSearchTimeout  = 30 * time.Second
	DefaultExtractTimeout = 60 * time.Second
	maxTimeoutSeconds     = 600
)

// pluginConfig is plugins.entries.tavily.config:
//
//	webSearch: {
//	  apiKey: "tvly-..." | {"$env": "NAME"} | {"$file": "/path"},  // else TAVILY_API_KEY
//	  baseUrl: "https://api.tavily.com",                            // else TAVILY_BASE_URL, else the default
//	  searchTimeoutSeconds: 30,                                     // tavily_search and web_search
//	  extractTimeoutSeconds: 60,                                    // tavily_extract
//	}
type pluginConfig struct {
	apiKey         config.Secret
	baseURL        string
	searchTimeout  float64 // seconds; 0 means the default
	extractTimeout float64
}

// resolveKey resolves the configured key on every call, so a rotated $file or environment value
// takes effect without a restart. It returns the trimmed value, or "" and a note for the setup
// error saying why a configured reference gave nothing; the note never contains a value.
func resolveKey(s config.Secret, lookupEnv func(string) (string, bool)) (value, note string) {
	if !s.IsSet() {
		return "", ""
	}
	v, err := s.Resolve(lookupEnv)
	if err != nil {
		return "", "webSearch.apiKey" + strings.TrimPrefix(err.Error(), "secret")
	}
	return strings.TrimSpace(v), ""
}

// decodeConfig decodes the raw plugin config strictly. Errors are plugin.FieldErrors with paths
// inside plugins.entries.tavily.config, e.g. "webSearch.apiKye: unknown field", every one of the
// section joined: a value that does not decode leaves its default, and the rest are still read.
func decodeConfig(raw json.RawMessage) (pluginConfig, error) {
	c, errs := decodeFields(raw)
	return c, errors.Join(errs...)
}

// decodeChecked is decodeConfig that, when a value does not decode, adds the errors validate
// finds in the values that did.
func decodeChecked(raw json.RawMessage) (pluginConfig, error) {
	c, errs := decodeFields(raw)
	if len(errs) > 0 {
		return c, errors.Join(append(errs, c.check()...)...)
	}
	return c, nil
}

func decodeFields(raw json.RawMessage) (pluginConfig, []error) {
	var c pluginConfig
	top, errs := objectFields("", raw, "webSearch")
	ws, ok := top["webSearch"]
	if !ok {
		return c, errs
	}
	fields, wsErrs := objectFields("webSearch", ws, "apiKey", "baseUrl", "searchTimeoutSeconds", "extractTimeoutSeconds")
	errs = append(errs, wsErrs...)
	if v, ok := fields["apiKey"]; ok {
		var err error
		if c.apiKey, err = decodeSecret("webSearch.apiKey", v); err != nil {
			errs = append(errs, err)
		}
	}
	if v, ok := fields["baseUrl"]; ok && !isNull(v) {
		if json.Unmarshal(v, &c.baseURL) != nil {
			errs = append(errs, plugin.FieldError("webSearch.baseUrl", "must be a string"))
		}
	}
	for _, t := range []struct {
		name string
		dst  *float64
	}{{"searchTimeoutSeconds", &c.searchTimeout}, {"extractTimeoutSeconds", &c.extractTimeout}} {
		if v, ok := fields[t.name]; ok && !isNull(v) {
			if json.Unmarshal(v, t.dst) != nil {
				*t.dst = 0 // the default: a half-decoded value is not checked again
				errs = append(errs, plugin.FieldError("webSearch."+t.name, "must be a number of seconds"))
			}
		}
	}
	return c, errs
}

func decodeSecret(path string, raw json.RawMessage) (config.Secret, error) {
	var s config.Secret
	if err := json.Unmarshal(raw, &s); err != nil {
		return config.Secret{}, plugin.FieldError(path, strings.TrimPrefix(err.Error(), "secret: "))
	}
	return s, nil
}

// envName is the rule for the variable onboarding stores in a {"$env": NAME} reference.
var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// validate checks values the decoder cannot: URLs, names, ranges. It reports every value that
// breaks a rule, joined.
func (c *pluginConfig) validate() error { return errors.Join(c.check()...) }

func (c *pluginConfig) check() []error {
	var errs []error
	switch kind, target := c.apiKey.Ref(); {
	case kind == "$file" && !filepath.IsAbs(target) && !strings.HasPrefix(target, "~/"):
		// The plugin is not told where the config file is, so a relative path would depend on the
		// gateway's working directory.
		errs = append(errs, plugin.FieldError("webSearch.apiKey.$file", "must be an absolute path (or start with ~/)"))
	case kind == "" && c.apiKey.IsSet():
		if v, _ := c.apiKey.Resolve(func(string) (string, bool) { return "", false }); strings.TrimSpace(v) == "" {
			errs = append(errs, plugin.FieldError("webSearch.apiKey", "must not be blank"))
		}
	}
	if b := strings.TrimSpace(c.baseURL); b != "" && !absHTTPURL(b) {
		errs = append(errs, plugin.FieldError("webSearch.baseUrl", "must be an absolute http(s) URL like "+DefaultBaseURL))
	}
	for _, t := range []struct {
		name string
		v    float64
	}{{"searchTimeoutSeconds", c.searchTimeout}, {"extractTimeoutSeconds", c.extractTimeout}} {
		if t.v != 0 && (math.IsNaN(t.v) || t.v < 1 || t.v > maxTimeoutSeconds) {
			errs = append(errs, plugin.FieldError("webSearch."+t.name, fmt.Sprintf("must be from 1 to %d seconds", maxTimeoutSeconds)))
		}
	}
	return errs
}

// timeout applies the documented rule: an override must be finite and positive and is floored to
// whole seconds; anything else means the default.
func timeout(override float64, def time.Duration) time.Duration {
	if math.IsNaN(override) || math.IsInf(override, 0) || override < 1 {
		return def
	}
	return time.Duration(math.Floor(override)) * time.Second
}

// absHTTPURL is the rule for the base URL and for the pages tavily_extract fetches.
func absHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// endpoint joins the base URL and an API path, keeping a proxy's path prefix:
// https://proxy.example/api/tavily/ + /extract → https://proxy.example/api/tavily/extract.
// An empty or invalid base falls back to the default.
func endpoint(base, path string) string {
	base = strings.TrimSpace(base)
	if base == "" || !absHTTPURL(base) {
		return DefaultBaseURL + path
	}
	u, _ := url.Parse(base)
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawPath = ""
	return u.String()
}

// objectFields decodes raw as a JSON object whose keys must be among allowed. It returns nil for
// null or an empty value, and with the unknown keys refused (each its own error) the known ones.
func objectFields(path string, raw json.RawMessage, allowed ...string) (map[string]json.RawMessage, []error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &fields) != nil {
		return nil, []error{plugin.FieldError(path, "must be an object")}
	}
	var errs []error
	for _, k := range unknownKeys(fields, allowed) {
		p := k
		if path != "" {
			p = path + "." + k
		}
		errs = append(errs, plugin.FieldError(p, "unknown field"))
		delete(fields, k)
	}
	return fields, errs
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// unknownKeys lists the keys of fields that allowed does not name, sorted, so that the first
// one reported is the same on every run.
func unknownKeys[V any](fields map[string]V, allowed []string) []string {
	var unknown []string
	for k := range fields {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	return unknown
}
