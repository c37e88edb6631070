package provider

// builtin is a provider nodmix knows without a config entry: a key (or none, for Ollama) is all
// it needs. models.providers.<id> with the same id overrides any field it sets.
type builtin struct {
	api     string
	baseURL string
	keyEnv  string // "" for providers that need no key
	// authHeader and authPrefix say where the key goes: keys travel in headers only, never in
	// a URL (URLs end up in logs and proxies' access lines).
	authHeader, authPrefix string
}

var builtins = map[string]builtin{
	"openai":     {api: "openai-responses", baseURL: "https://api.openai.com/v1", keyEnv: "OPENAI_API_KEY", authHeader: "Authorization", authPrefix: "Bearer "},
	"anthropic":  {api: "anthropic-messages", baseURL: "https://api.anthropic.com/v1", keyEnv: "ANTHROPIC_API_KEY", authHeader: "x-api-key"},
	"google":     {api: "google-generative-ai", baseURL: "https://generativelanguage.googleapis.com/v1beta", keyEnv: "GEMINI_API_KEY", authHeader: "x-goog-api-key"},
	"ollama":     {api: "ollama", baseURL: "http://127.0.0.1:11434"},
	"deepseek":   {api: "openai-completions", baseURL: "https://api.deepseek.com", keyEnv: "DEEPSEEK_API_KEY", authHeader: "Authorization", authPrefix: "Bearer "},
	"openrouter": {api: "openai-completions", baseURL: "https://openrouter.ai/api/v1", keyEnv: "OPENROUTER_API_KEY", authHeader: "Authorization", authPrefix: "Bearer "},
	"moonshot":   {api: "openai-completions", baseURL: "https://api.moonshot.ai/v1", keyEnv: "MOONSHOT_API_KEY", authHeader: "Authorization", authPrefix: "Bearer "},
	"zai":        {api: "openai-completions", baseURL: "https://api.z.ai/api/paas/v4", keyEnv: "ZAI_API_KEY", authHeader: "Authorization", authPrefix: "Bearer "},
	"minimax":    {api: "anthropic-messages", baseURL: "https://api.minimax.io/anthropic/v1", keyEnv: "MINIMAX_API_KEY", authHeader: "x-api-key"},
}

// KeyEnvs lists the environment variables the built-in providers read their keys from, for
// keeping them out of child processes' environments.
func KeyEnvs() []string {
	out := make([]string, 0, len(builtins))
	for _, b := range builtins {
		if b.keyEnv != "" {
			out = append(out, b.keyEnv)
		}
	}
	return out
}

// authFor is where a key goes for a dialect when the provider is not a built-in one.
func authFor(api string) (header, prefix string) {
	switch api {
	case "anthropic-messages":
		return "x-api-key", ""
	case "google-generative-ai":
		return "x-goog-api-key", ""
	default:
		return "Authorization", "Bearer "
	}
}
