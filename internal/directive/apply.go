package directive

import (
	"maps"
	"strings"

	"github.com/nodmix/nodmix/internal/thinking"
)

// Result is what a directive-only message does to its session.
type Result struct {
	// Overrides is the session's overrides after the message: a new map, never the caller's.
	Overrides map[string]string
	// Reply is the text to answer with.
	Reply string
	// Changed is set when Overrides differs from the overrides before the message.
	Changed bool
	// Events are system events to queue for the session's next turn ("Fast mode enabled.").
	Events []string
}

// order is the order directives are answered in.
var order = [...]Name{Think, Verbose, Trace, Fast, Reasoning, Status}

// Check reports whether the directives may be applied: every argument names a value, and every
// thinking level is one the model supports. The reply is the rejection otherwise (one line per
// refused directive). A typed level the model lacks is refused, never remapped: only stored
// levels are remapped. Use it on an inline message before its turn; Apply calls it itself.
func Check(ds []D, l Layers) (reply string, ok bool) {
	var errs []string
	for _, n := range order {
		d, found := last(ds, n)
		switch {
		case !found:
		case d.Invalid:
			errs = append(errs, invalidReply(d, l.Profile))
		case n == Think && d.Value != "" && len(l.Profile.Levels) > 0 &&
			!l.Profile.Supports(thinking.Level(d.Value)):
			errs = append(errs, unsupportedReply(thinking.Level(d.Value), l))
		}
	}
	return strings.Join(errs, "\n"), len(errs) == 0
}

// Apply answers a directive-only message (Parsed.Only): it sets or clears the session overrides
// in l.Session and words the reply. When a directive repeats, the last one counts. A message
// that Check refuses changes nothing and gets the rejection. A query (/think, /fast status) is
// answered from the levels resolved before the message; /status from those after it. l.Inline
// is ignored: the message's directives are ds. Apply is a pure function.
func Apply(ds []D, l Layers) Result {
	cur := l.Session
	next := maps.Clone(cur)
	if next == nil {
		next = map[string]string{}
	}
	if reply, ok := Check(ds, l); !ok {
		return Result{Overrides: next, Reply: reply}
	}

	l.Inline = nil
	before := Resolve(l)
	var acks, answers, events []string
	for _, n := range order {
		d, found := last(ds, n)
		if !found {
			continue
		}
		if n == Status {
			after := l
			after.Session = next
			answers = append(answers, StatusText(after, Resolve(after)))
			continue
		}
		if d.Query {
			answers = append(answers, queryReply(n, l, before, d.Raw != ""))
			continue
		}
		stored := d.Value
		if d.Clear {
			delete(next, n.key())
		} else {
			if n == Think {
				stored = string(supported(l.Profile, thinking.Level(d.Value)))
			}
			next[n.key()] = stored
		}
		acks = append(acks, ack(d, stored, l.Profile))
		if n == Fast && !d.Clear {
			events = append(events, fastEvent(stored))
		}
	}

	reply := strings.Join(acks, " ")
	if len(answers) > 0 {
		if reply != "" {
			reply += "\n"
		}
		reply += strings.Join(answers, "\n")
	}
	if reply == "" {
		reply = "OK."
	}
	return Result{Overrides: next, Reply: reply, Changed: !maps.Equal(cur, next), Events: events}
}

func last(ds []D, n Name) (D, bool) { return Parsed{Directives: ds}.Last(n) }
