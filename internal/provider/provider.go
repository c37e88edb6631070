// Package provider resolves "provider/model" references to the providers nodmix can call — the
// built-in table and models.providers from config — and sends requests to them over HTTP.
package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/llm"
)

// Errors callers test.
var (
	// ErrUnknownProvider: a model reference names a provider that is neither built in nor configured.
	ErrUnknownProvider = errors.New("unknown provider")
	// ErrModelRef: a model reference is not "provider/model".
	ErrModelRef = errors.New(`must be "<provider>/<model>" (for example openai/gpt-5.2)`)
)

// Options configure a Registry.
type Options struct {
	HTTP      *http.Client // nil: a client with no overall timeout (streams are long); ctx bounds calls
	LookupEnv func(string) (string, bool)
	Log       *slog.Logger
	// Dialect returns the dialect for a provider's api; nil uses the built-in dialects.
	Dialect func(api, provider string) (llm.Dialect, error)
	// Sleep waits between retries; nil waits for real (tests pass a recorder).
	Sleep func(ctx context.Context, d time.Duration) error
	// MaxResponse bounds the bytes of one response body, streamed or not; 0 is DefaultMaxResponse.
	MaxResponse int64
	// IdleTimeout bounds each wait for the provider: for its response headers, and for the next
	// bytes of its body. 0 is DefaultIdleTimeout; a negative value sets no bound (ctx alone
	// ends calls).
	IdleTimeout time.Duration
}

// DefaultMaxResponse bounds one response: a stream's deltas add up in memory into its message,
// and a provider that never stops (broken, or hostile) must not be able to grow that without
// end. 256 MiB is far above the wire size of the longest answer a model gives.
const DefaultMaxResponse = 256 << 20

// Registry holds every provider by id. It is read-only after New and safe for concurrent use.
type Registry struct {
	providers map[string]*Provider
}

// Provider is one provider id: where it lives, how it authenticates, which dialect it speaks.
// It is read-only after New and safe for concurrent use.
type Provider struct {
	ID      string
	API     string
	BaseURL string // without a trailing slash
	// Direct is true when BaseURL is the provider's own public endpoint, not a proxy: some
	// request fields (Anthropic service tiers) are only for the direct endpoint.
	Direct bool
	Models []config.Model // configured models (metadata); any model id may still be called

	dialect    llm.Dialect
	dialectErr error
	key        config.Secret
	keyEnv     string
	needsKey   bool
	authHeader string
	authPrefix string
	headers    map[string]config.Secret
	lookupEnv  func(string) (string, bool)
	http       *http.Client
	log        *slog.Logger
	sleep      func(ctx context.Context, d time.Duration) error
	maxResp    int64
	idle       time.Duration
}

// New builds the registry from the config: every built-in provider, overridden and extended by
// models.providers.
func New(cfg *config.Config, opts Options) (*Registry, error) {
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	opts.HTTP = sameOriginRedirects(opts.HTTP)
	if opts.LookupEnv == nil {
		opts.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepCtx
	}
	if opts.MaxResponse <= 0 {
		opts.MaxResponse = DefaultMaxResponse
	}
	if opts.Dialect == nil {
		opts.Dialect = Dialect
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	r := &Registry{providers: map[string]*Provider{}}
	ids := map[string]bool{}
	for id := range builtins {
		ids[id] = true
	}
	for id := range cfg.Models.Providers {
		ids[id] = true
	}
	for id := range ids {
		b, isBuiltin := builtins[id]
		c := cfg.Models.Providers[id]
		p := &Provider{
			ID: id, API: b.api, BaseURL: b.baseURL, keyEnv: b.keyEnv, needsKey: b.keyEnv != "",
			authHeader: b.authHeader, authPrefix: b.authPrefix,
			key: c.APIKey, headers: c.Headers, Models: c.Models,
			lookupEnv: opts.LookupEnv, http: opts.HTTP, log: opts.Log, sleep: opts.Sleep, maxResp: opts.MaxResponse,
			idle: opts.IdleTimeout,
		}
		if c.API != "" {
			p.API = c.API
		}
		if p.API == "" {
			p.API = "openai-completions"
		}
		if !isBuiltin {
			p.authHeader, p.authPrefix = authFor(p.API)
			// A custom endpoint may or may not want a key (a local vLLM does not).
			p.needsKey = false
		}
		p.BaseURL = strings.TrimRight(b.baseURL, "/")
		if c.BaseURL != "" {
			p.BaseURL = strings.TrimRight(c.BaseURL, "/")
		}
		p.Direct = isBuiltin && p.BaseURL == strings.TrimRight(b.baseURL, "/")
		if p.BaseURL == "" {
			return nil, &config.Error{Path: "models.providers." + id + ".baseUrl", Rule: "is required for a provider nodmix does not know"}
		}
		// A dialect that cannot be built fails the provider's calls, not the whole registry.
		// An entry at MiniMax's Chat Completions hosts gets MiniMax's quirks whatever its id.
		tagged := thinkTagged(p.API, p.BaseURL)
		profile := id
		if tagged {
			profile = thinkTagProfile
		}
		p.dialect, p.dialectErr = opts.Dialect(p.API, profile)
		if p.dialectErr == nil && tagged {
			p.dialect = thinkTags{p.dialect}
		}
		r.providers[id] = p
	}
	return r, nil
}

// IDs lists the provider ids in byte order.
func (r *Registry) IDs() []string {
	out := make([]string, 0, len(r.providers))
	for id := range r.providers {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Get returns a provider by id.
func (r *Registry) Get(id string) (*Provider, bool) {
	p, ok := r.providers[id]
	return p, ok
}

// Resolve splits a "provider/model" reference (the model part may contain '/', as OpenRouter's
// ids do) and finds the provider.
func (r *Registry) Resolve(ref string) (*Provider, string, error) {
	id, model, ok := strings.Cut(ref, "/")
	if !ok || id == "" || model == "" {
		return nil, "", fmt.Errorf("model %q: %w", ref, ErrModelRef)
	}
	p, ok := r.providers[id]
	if !ok {
		return nil, "", fmt.Errorf("model %q: %w %q (known: %s; or add models.providers.%s)", ref, ErrUnknownProvider, id, strings.Join(r.IDs(), ", "), id)
	}
	if p.dialectErr != nil {
		return nil, "", fmt.Errorf("model %q: models.providers.%s.api: %w", ref, id, p.dialectErr)
	}
	return p, model, nil
}

// Model returns the configured metadata of a model id, if any.
func (p *Provider) Model(id string) (config.Model, bool) {
	for _, m := range p.Models {
		if m.ID == id {
			return m, true
		}
	}
	return config.Model{}, false
}

// Dialect is the provider's wire dialect.
func (p *Provider) Dialect() llm.Dialect { return p.dialect }

// KeyHint says where the provider's key comes from, for error messages.
func (p *Provider) KeyHint() string {
	path := "models.providers." + p.ID + ".apiKey"
	if p.keyEnv != "" {
		return "set " + p.keyEnv + " or " + path
	}
	return "set " + path
}

// apiKey resolves the key: models.providers.<id>.apiKey, else the built-in's variable. "" with
// no error means the provider is called without a key. Space around a key (a pasted key's
// newline, a CRLF .env file) is not part of it: sent, it makes net/http refuse the header, an
// error that reads as a network failure.
func (p *Provider) apiKey() (string, error) {
	if p.key.IsSet() {
		v, err := p.key.Resolve(p.lookupEnv)
		if err != nil {
			return "", fmt.Errorf("provider %q: %w", p.ID, err)
		}
		return strings.TrimSpace(v), nil
	}
	if p.keyEnv != "" {
		if v, ok := p.lookupEnv(p.keyEnv); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v), nil
		}
	}
	if p.needsKey {
		return "", fmt.Errorf("provider %q: %w: %s", p.ID, ErrNoKey, p.KeyHint())
	}
	return "", nil
}

// ErrNoKey: the provider needs an API key and none is configured.
var ErrNoKey = errors.New("no API key")
