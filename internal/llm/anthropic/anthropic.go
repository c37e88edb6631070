// Package anthropic is the Anthropic Messages wire format (`api: "anthropic-messages"`), spoken by
// Anthropic itself and by compatible endpoints such as MiniMax's.
package anthropic

import (
	"github.com/nodmix/nodmix/internal/llm"
)

// Name is the config's `api` value for this dialect.
const Name = "anthropic-messages"

// APIVersion is the `anthropic-version` header every request carries.
const APIVersion = "2023-06-01"

// DefaultMaxTokens is max_tokens when neither the request nor Options set one: the API requires
// the field, and 4096 fits every model's output limit.
const DefaultMaxTokens = 4096

// Options are what one provider's endpoint needs beyond the Anthropic defaults. The provider
// table sets them; the zero value is Anthropic's own API.
type Options struct {
	// DefaultMaxTokens is max_tokens for a request that sets none (the model's configured
	// maxTokens). 0 means DefaultMaxTokens.
	DefaultMaxTokens int
	// TextOnly marks an endpoint that takes no image input (MiniMax documents text and tool
	// calls only): image parts are sent as a short text note instead, so a transcript that
	// holds an image from another model stays usable.
	TextOnly bool
	// MinTemperature is the lowest temperature the endpoint accepts. Anthropic's range is
	// [0, 1]; MiniMax's is (0, 1], so its table entry sets a small positive floor. Temperatures
	// are clamped to [MinTemperature, 1].
	MinTemperature float64
}

// dialect is immutable after New, so one value serves concurrent requests.
type dialect struct {
	opt Options
}

var _ llm.Dialect = (*dialect)(nil)

// New returns the Anthropic Messages dialect configured by o. It is stateless and safe for
// concurrent use.
func New(o Options) llm.Dialect {
	return &dialect{opt: o}
}

func (d *dialect) Name() string { return Name }
