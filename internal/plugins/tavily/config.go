package tavily

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Defaults of the plugin configuration.
const (
	DefaultBaseURL        = "https://api.tavily.com"
	DefaultSearchTimeout  = 30 * time.Second
	DefaultExtractTimeout = 60 * time.Second
	maxTimeoutSeconds     = 600
)

// config is plugins.entries.tavily.config:
//
//	webSearch: {
//	  apiKey: "tvly-..." | {"$env": "NAME"} | {"$file": "/path"},  // else TAVILY_API_KEY
//	  baseUrl: "https://api.tavily.com",                            // else TAVILY_BASE_URL, else the default
//	  searchTimeoutSeconds: 30,                                     // tavily_search and web_search
//	  extractTimeoutSeconds: 60,                                    // tavily_extract
//	}
type config struct {
	apiKey         secret
	baseURL        string
	searchTimeout  float64 // seconds; 0 means the default
	extractTimeout float64
}

// secret is a credential as configured: a literal string or a SecretRef. It is resolved on every
// call, so a rotated $file or environment value takes effect without a restart. A local type until
// internal/config offers one.
type secret struct {
	literal string
	env     string // {"$env": NAME}
	file    string // {"$file": PATH}
}

func (s secret) isSet() bool { return s.literal != "" || s.env != "" || s.file != "" }

// resolve returns the trimmed secret value, or "" and a note for the setup error saying why a
// configured reference gave nothing. The note never contains the value.
func (s secret) resolve(lookupEnv func(string) (string, bool)) (value, note string) {
	switch {
	case s.env != "":
		v, ok := lookupEnv(s.env)
		if v = strings.TrimSpace(v); !ok || v == "" {
			return "", fmt.Sprintf("webSearch.apiKey refers to $env %s, which is not set", s.env)
		}
		return v, ""
	case s.file != "":
		data, err := os.ReadFile(s.file)
		if err != nil {
			return "", fmt.Sprintf("webSearch.apiKey refers to $file %s, which cannot be read", s.file)
		}
		if v := strings.TrimSpace(string(data)); v != "" {
			return v, ""
		}
		return "", fmt.Sprintf("webSearch.apiKey refers to $file %s, which is empty", s.file)
	default:
		return strings.TrimSpace(s.literal), ""
	}
}

// decodeConfig decodes the raw plugin config strictly. Errors name the path relative to
// plugins.entries.tavily.config, e.g. "webSearch.apiKye: unknown field".
func decodeConfig(raw json.RawMessage) (config, error) {
	var c config
	top, err := objectFields("", raw, "webSearch")
	if err != nil || top == nil {
		return c, err
	}
	ws, ok := top["webSearch"]
	if !ok {
		return c, nil
	}
	fields, err := objectFields("webSearch", ws, "apiKey", "baseUrl", "searchTimeoutSeconds", "extractTimeoutSeconds")
	if err != nil || fields == nil {
		return c, err
	}
	if v, ok := fields["apiKey"]; ok {
		if c.apiKey, err = decodeSecret("webSearch.apiKey", v); err != nil {
			return c, err
		}
	}
	if v, ok := fields["baseUrl"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &c.baseURL); err != nil {
			return c, fmt.Errorf("webSearch.baseUrl: must be a string")
		}
	}
	for _, t := range []struct {
		name string
		dst  *float64
	}{{"searchTimeoutSeconds", &c.searchTimeout}, {"extractTimeoutSeconds", &c.extractTimeout}} {
		if v, ok := fields[t.name]; ok && !isNull(v) {
			if err := json.Unmarshal(v, t.dst); err != nil {
				return c, fmt.Errorf("webSearch.%s: must be a number of seconds", t.name)
			}
		}
	}
	return c, nil
}

func decodeSecret(path string, raw json.RawMessage) (secret, error) {
	var s secret
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return s, nil
	}
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s.literal); err != nil {
			return s, fmt.Errorf("%s: must be a string or a SecretRef", path)
		}
		return s, nil
	}
	if raw[0] != '{' {
		return s, fmt.Errorf(`%s: must be a string or a SecretRef ({"$env": "NAME"} or {"$file": "/path"})`, path)
	}
	fields, err := objectFields(path, raw, "$env", "$file")
	if err != nil {
		return s, err
	}
	if len(fields) != 1 {
		return s, fmt.Errorf(`%s: a SecretRef has exactly one of "$env" or "$file"`, path)
	}
	for k, v := range fields {
		var val string
		if err := json.Unmarshal(v, &val); err != nil {
			return s, fmt.Errorf("%s.%s: must be a string", path, k)
		}
		if k == "$env" {
			s.env = val
		} else {
			s.file = val
		}
	}
	return s, nil
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validate checks values the decoder cannot: URLs, names, ranges.
func (c *config) validate() error {
	if c.apiKey.env != "" || c.apiKey.file != "" {
		if c.apiKey.env != "" && !envName.MatchString(c.apiKey.env) {
			return fmt.Errorf("webSearch.apiKey.$env: %q is not a valid environment variable name", c.apiKey.env)
		}
		if c.apiKey.file != "" && !filepath.IsAbs(c.apiKey.file) {
			return fmt.Errorf("webSearch.apiKey.$file: must be an absolute path")
		}
	} else if c.apiKey.literal != "" && strings.TrimSpace(c.apiKey.literal) == "" {
		return fmt.Errorf("webSearch.apiKey: must not be blank")
	}
	if b := strings.TrimSpace(c.baseURL); b != "" && !validBaseURL(b) {
		return fmt.Errorf("webSearch.baseUrl: must be an absolute http(s) URL like %s", DefaultBaseURL)
	}
	for _, t := range []struct {
		name string
		v    float64
	}{{"searchTimeoutSeconds", c.searchTimeout}, {"extractTimeoutSeconds", c.extractTimeout}} {
		if t.v != 0 && (math.IsNaN(t.v) || t.v < 1 || t.v > maxTimeoutSeconds) {
			return fmt.Errorf("webSearch.%s: must be from 1 to %d seconds", t.name, maxTimeoutSeconds)
		}
	}
	return nil
}

// timeout applies the documented rule: an override must be finite and positive and is floored to
// whole seconds; anything else means the default.
func timeout(override float64, def time.Duration) time.Duration {
	if math.IsNaN(override) || math.IsInf(override, 0) || override < 1 {
		return def
	}
	return time.Duration(math.Floor(override)) * time.Second
}

func validBaseURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// endpoint joins the base URL and an API path, keeping a proxy's path prefix:
// https://proxy.example/api/tavily/ + /extract → https://proxy.example/api/tavily/extract.
// An empty or invalid base falls back to the default.
func endpoint(base, path string) string {
	base = strings.TrimSpace(base)
	if base == "" || !validBaseURL(base) {
		return DefaultBaseURL + path
	}
	u, _ := url.Parse(base)
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawPath = ""
	return u.String()
}

// objectFields decodes raw as a JSON object whose keys must be among allowed. It returns nil, nil
// for null or an empty value.
func objectFields(path string, raw json.RawMessage, allowed ...string) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &fields) != nil {
		if path == "" {
			return nil, fmt.Errorf("must be an object")
		}
		return nil, fmt.Errorf("%s: must be an object", path)
	}
	var unknown []string
	for k := range fields {
		known := false
		for _, a := range allowed {
			if k == a {
				known = true
				break
			}
		}
		if !known {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		if path == "" {
			return nil, fmt.Errorf("%s: unknown field", unknown[0])
		}
		return nil, fmt.Errorf("%s.%s: unknown field", path, unknown[0])
	}
	return fields, nil
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }
