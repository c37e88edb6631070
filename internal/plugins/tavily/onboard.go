package tavily

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Edit is one config change for `nodmix configure --section web`: set the dotted Path to Value, a
// JSON5 literal (valid JSON, which is valid JSON5). Secret marks a value holding a literal API key,
// which the CLI must not echo or log.
type Edit struct {
	Path   string
	Value  string
	Secret bool
}

// Config paths the onboarding writes.
const (
	PathEnabled  = "plugins.entries.tavily.enabled"
	PathProvider = "tools.web.search.provider"
	PathAPIKey   = "plugins.entries.tavily.config.webSearch.apiKey"
)

// ConfigureEdits returns the edits that make provider the web_search provider: enable its plugin,
// select it, and store the key. apiKeyEnv stores a SecretRef {"$env": NAME} (preferred: the key stays
// out of the file); apiKey stores a literal key; with neither, no key is written and the calls use
// TAVILY_API_KEY from the gateway environment. Giving both is an error. Only "tavily" is a provider
// today. Errors name the flag and never contain the key.
func ConfigureEdits(provider, apiKeyEnv, apiKey string) ([]Edit, error) {
	provider = strings.ToLower(strings.TrimSpace(provider))
	if provider != ID {
		return nil, fmt.Errorf("provider: %s is not a web search provider (supported: tavily)", typed(provider))
	}
	apiKeyEnv, apiKey = strings.TrimSpace(apiKeyEnv), strings.TrimSpace(apiKey)
	if apiKeyEnv != "" && apiKey != "" {
		return nil, fmt.Errorf("api-key-env and api-key: give one or the other, not both")
	}
	edits := []Edit{
		{Path: PathEnabled, Value: "true"},
		{Path: PathProvider, Value: `"tavily"`},
	}
	switch {
	case apiKeyEnv != "":
		if !envName().MatchString(apiKeyEnv) {
			return nil, fmt.Errorf("api-key-env: %s is not a valid environment variable name (letters, digits and _, not starting with a digit)", typed(apiKeyEnv))
		}
		ref, _ := json.Marshal(map[string]string{"$env": apiKeyEnv})
		edits = append(edits, Edit{Path: PathAPIKey, Value: string(ref)})
	case apiKey != "":
		for _, r := range apiKey {
			if unicode.IsSpace(r) || unicode.IsControl(r) {
				return nil, fmt.Errorf("api-key: must not contain spaces or control characters")
			}
		}
		lit, _ := json.Marshal(apiKey)
		edits = append(edits, Edit{Path: PathAPIKey, Value: string(lit), Secret: true})
	}
	return edits, nil
}

// typed quotes what was given for a name in an error, unless it may be a key pasted at the wrong
// prompt: anything longer than a name would be, or holding other characters, is described
// instead (keys are long runs of letters, digits and dashes).
func typed(s string) string {
	const longest = 24
	plain := len(s) <= longest
	for i := 0; plain && i < len(s); i++ {
		c := s[i]
		plain = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
	}
	if plain {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("the value given (%d characters, not shown: it may be a key)", utf8.RuneCountInString(s))
}
