// Package thinking is nodmix's one model of reasoning effort: canonical levels and the words that
// name them, provider profiles as data, and the mapping of a level and fast mode to a request patch.
package thinking

// Level is a canonical thinking level, the value stored in sessions and config. The zero Level
// is no level (nothing set); Off is an explicit "no thinking".
type Level string

// The canonical levels, in the order menus list them.
const (
	Off      Level = "off"
	Minimal  Level = "minimal"
	Low      Level = "low"
	Medium   Level = "medium"
	High     Level = "high"
	XHigh    Level = "xhigh"
	Adaptive Level = "adaptive"
	Max      Level = "max"
)

// levels is every canonical level in help order: off|minimal|low|medium|high|xhigh|adaptive|max.
var levels = [...]Level{Off, Minimal, Low, Medium, High, XHigh, Adaptive, Max}

// All returns the canonical levels in help order. The slice is a fresh copy.
func All() []Level { return append([]Level(nil), levels[:]...) }

// Rank orders levels for remapping a stored level onto a profile that lacks it: the reference
// ranks (off 0, minimal 10, low 20, medium 30, adaptive 30, high 40, xhigh 60, max 70), so
// adaptive sits beside medium, the depth a provider-managed model picks on its own. An unknown
// level ranks -1.
func (l Level) Rank() int {
	switch l {
	case Off:
		return 0
	case Minimal:
		return 10
	case Low:
		return 20
	case Medium, Adaptive:
		return 30
	case High:
		return 40
	case XHigh:
		return 60
	case Max:
		return 70
	}
	return -1
}

// Valid reports whether l is one of the canonical levels.
func (l Level) Valid() bool { return l.Rank() >= 0 }

func (l Level) String() string { return string(l) }
