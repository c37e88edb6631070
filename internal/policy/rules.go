// Package policy decides which tools a run may see and call (allow/deny globs) and gates the calls
// that remain: approvals asked of a person, and before-call hook commands that can block a call.
package policy

import (
	"errors"
	"fmt"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/glob"
)

// Rules is the allow/deny policy of tools.allow and tools.deny. Each pattern is a glob (see glob.Match)
// tested against both the tool id and its model-facing name. Deny wins over allow; an empty Allow
// allows every tool that no Deny pattern names. A Rules value is immutable once in use and safe for
// concurrent use.
type Rules struct {
	Allow []string
	Deny  []string
}

var _ dispatch.Policy = Rules{}

// Validate reports the first malformed pattern of each list, naming its config path
// (`tools.deny[2]: "mcp:[x" unterminated character class`).
func (r Rules) Validate() error {
	return errors.Join(validatePatterns("tools.allow", r.Allow), validatePatterns("tools.deny", r.Deny))
}

// Allowed reports whether t may be listed and called. It fails closed when the rules are
// malformed: a deny pattern that cannot be parsed denies every tool, and an allow pattern that
// cannot be parsed allows none.
func (r Rules) Allowed(t *catalog.Tool) bool {
	for _, p := range r.Deny {
		if glob.Validate(p) != nil || matchTool(p, t) {
			return false
		}
	}
	if len(r.Allow) == 0 {
		return true
	}
	for _, p := range r.Allow {
		if matchTool(p, t) {
			return true
		}
	}
	return false
}

// matchTool matches a pattern against the tool's id and its model-facing name.
func matchTool(pattern string, t *catalog.Tool) bool {
	return glob.Match(pattern, t.ID) || (t.Name != "" && glob.Match(pattern, t.Name))
}

// firstMatch returns the first pattern that names t, or "".
func firstMatch(patterns []string, t *catalog.Tool) (string, bool) {
	for _, p := range patterns {
		if matchTool(p, t) {
			return p, true
		}
	}
	return "", false
}

// validatePatterns checks every pattern of one config list, naming the first bad one by path.
func validatePatterns(field string, patterns []string) error {
	for i, p := range patterns {
		if err := glob.Validate(p); err != nil {
			return fmt.Errorf("%s[%d]: %q %w", field, i, p, err)
		}
	}
	return nil
}
