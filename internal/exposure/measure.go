package exposure

import (
	"context"
	"encoding/json"

	"github.com/nodmix/nodmix/internal/catalog"
)

// Definition is a tool as a model receives it up front (the MCP tools/list shape).
type Definition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Report is what `nodmix tools exposure` prints: the exact definitions of a mode and their size.
type Report struct {
	Mode           Mode         `json:"mode"`
	Count          int          `json:"count"`
	Bytes          int          `json:"bytes"`
	TokensEstimate int          `json:"tokens_estimate"`
	Tools          []Definition `json:"tools"`
}

// Definitions converts tools into what a model receives.
func Definitions(tools []catalog.Tool) []Definition {
	out := make([]Definition, len(tools))
	for i, t := range tools {
		out[i] = Definition{Name: t.Name, Description: t.ModelDescription(), InputSchema: t.Schema()}
	}
	return out
}

// Measure reports what a fresh session of the engine sees up front. Bytes are those of the
// serialized definitions (compact JSON); tokens are estimated as one per four bytes, the usual
// rule of thumb for English and JSON with BPE tokenizers.
func Measure(ctx context.Context, e *Engine, session string) (*Report, error) {
	_, vis, err := e.Run(ctx, session)
	if err != nil {
		return nil, err
	}
	defs := Definitions(vis)
	b, err := json.Marshal(defs)
	if err != nil {
		return nil, err
	}
	return &Report{Mode: e.Mode(), Count: len(defs), Bytes: len(b), TokensEstimate: (len(b) + 3) / 4, Tools: defs}, nil
}
