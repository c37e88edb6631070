package provider

import (
	"fmt"

	"github.com/nodmix/nodmix/internal/llm"
)

// Dialect returns the built-in dialect for an api value, configured for the provider's quirks.
func Dialect(api, provider string) (llm.Dialect, error) {
	switch api {
	}
	return nil, fmt.Errorf("api %q is not available", api)
}
