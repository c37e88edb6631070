package directive_test

import (
	"fmt"

	"github.com/nodmix/nodmix/internal/directive"
	"github.com/nodmix/nodmix/internal/thinking"
)

// A directive-only message changes the session; any other message runs a turn with its inline
// directives applied to that turn only.
func Example() {
	session := map[string]string{}
	layers := func(p directive.Parsed) directive.Layers {
		return directive.Layers{
			Inline:  p.Directives,
			Session: session,
			Profile: thinking.Profile{Default: thinking.Medium, Levels: []thinking.Option{
				{ID: "off", Label: "off"}, {ID: "low", Label: "low"},
				{ID: "medium", Label: "medium"}, {ID: "high", Label: "high"}}},
			Model: "acme/model-1",
		}
	}
	for _, msg := range []string{"/think high", "/t low explain this", "/think max"} {
		p := directive.Parse(msg)
		l := layers(p)
		if p.Only {
			res := directive.Apply(p.Directives, l)
			session = res.Overrides
			fmt.Println(res.Reply)
			continue
		}
		if reply, ok := directive.Check(p.Directives, l); !ok {
			fmt.Println(reply)
			continue
		}
		r := directive.Resolve(l)
		fmt.Printf("turn %q think=%s (%s)\n", p.Body, r.Think, r.Sources.Think)
	}
	// Output:
	// Thinking level set to high.
	// turn "explain this" think=low (inline)
	// Thinking level "max" is not supported for acme/model-1. Use one of: off, low, medium, high.
}
