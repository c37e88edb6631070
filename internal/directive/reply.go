package directive

import (
	"fmt"
	"strings"

	"github.com/nodmix/nodmix/internal/thinking"
)

// systemPrefix marks a reply as the gateway's own, not the model's.
const systemPrefix = "⚙️ "

// system prefixes s with systemPrefix once.
func system(s string) string {
	if strings.HasPrefix(s, strings.TrimSpace(systemPrefix)) {
		return s
	}
	return systemPrefix + s
}

func withOptions(line, options string) string {
	return line + "\nOptions: " + options + "."
}

// thinkLabel is how replies name a level on this model: the profile's label ("on" for a binary
// provider's low), "default" when the provider owns the default.
func thinkLabel(p thinking.Profile, l thinking.Level) string {
	if l == "" {
		return "default"
	}
	return p.Label(l)
}

func labels(p thinking.Profile) string {
	if len(p.Levels) == 0 {
		all := thinking.All()
		s := make([]string, len(all))
		for i, l := range all {
			s[i] = string(l)
		}
		return strings.Join(s, ", ")
	}
	return strings.Join(p.Labels(), ", ")
}

func queryReply(n Name, l Layers, r Resolved, status bool) string {
	switch n {
	case Think:
		return withOptions("Current thinking level: "+thinkLabel(l.Profile, r.Think)+".",
			"default, "+labels(l.Profile))
	case Verbose:
		return withOptions("Current verbose level: "+r.Verbose+".", "on, full, off")
	case Trace:
		return withOptions("Current trace level: "+r.Trace+".", "on, off, raw")
	case Reasoning:
		return withOptions("Current reasoning level: "+r.Reasoning+".", "on, off, stream")
	case Fast:
		line := fmt.Sprintf("Current fast mode: %s (%s).", r.Fast, r.Sources.Fast)
		if status {
			return line
		}
		return withOptions(line, "on, off, auto, default, status")
	case Status:
		return StatusText(l, r)
	}
	return ""
}

func invalidReply(d D, p thinking.Profile) string {
	switch d.Name {
	case Think:
		return fmt.Sprintf("Unrecognized thinking level %q. Valid levels: default, %s.", d.Raw, labels(p))
	case Verbose:
		return fmt.Sprintf("Unrecognized verbose level %q. Valid levels: off, on, full.", d.Raw)
	case Trace:
		return fmt.Sprintf("Unrecognized trace level %q. Valid levels: off, on, raw.", d.Raw)
	case Fast:
		return fmt.Sprintf("Unrecognized fast mode %q. Valid levels: on, off, auto, default, status.", d.Raw)
	case Reasoning:
		return fmt.Sprintf("Unrecognized reasoning level %q. Valid levels: on, off, stream.", d.Raw)
	}
	return ""
}

func unsupportedReply(l thinking.Level, ls Layers) string {
	return fmt.Sprintf("Thinking level %q is not supported for %s. Use one of: %s.",
		l, modelRef(ls.Model), strings.Join(ls.Profile.Labels(), ", "))
}

func modelRef(m string) string {
	if m == "" {
		return "this model"
	}
	return m
}

// ack is the confirmation of an applied directive; stored is the value written (for Think, the
// level after a binary profile's remap).
func ack(d D, stored string, p thinking.Profile) string {
	switch d.Name {
	case Think:
		switch {
		case d.Clear:
			return "Thinking level reset to default."
		case stored == string(thinking.Off):
			return "Thinking disabled."
		}
		return "Thinking level set to " + thinkLabel(p, thinking.Level(stored)) + "."
	case Fast:
		switch {
		case d.Clear:
			return system("Fast mode reset to default.")
		case stored == string(thinking.FastAuto):
			return system("Fast mode set to auto.")
		case stored == string(thinking.FastOn):
			return system("Fast mode enabled.")
		}
		return system("Fast mode disabled.")
	case Verbose:
		switch stored {
		case "off":
			return system("Verbose logging disabled.")
		case "full":
			return system("Verbose logging set to full.")
		}
		return system("Verbose logging enabled.")
	case Trace:
		switch stored {
		case "off":
			return system("Plugin trace disabled.")
		case "raw":
			return system("Plugin trace set to raw. Warning: trace output may contain sensitive information.")
		}
		return system("Plugin trace enabled.")
	case Reasoning:
		switch stored {
		case "off":
			return system("Reasoning visibility disabled.")
		case "stream":
			return system("Reasoning stream enabled.")
		}
		return system("Reasoning visibility enabled.")
	}
	return ""
}

// fastEvent is the system event a fast-mode change queues for the model's next turn.
func fastEvent(stored string) string {
	switch stored {
	case string(thinking.FastAuto):
		return "Fast mode set to auto."
	case string(thinking.FastOn):
		return "Fast mode enabled."
	}
	return "Fast mode disabled."
}

// StatusText is the /status reply: the model and the resolved levels. Fast is listed only when
// it is on (or auto).
func StatusText(l Layers, r Resolved) string {
	parts := make([]string, 0, 6)
	if l.Model != "" {
		parts = append(parts, "Model: "+l.Model)
	}
	parts = append(parts,
		"Think: "+thinkLabel(l.Profile, r.Think),
		"Verbose: "+r.Verbose,
		"Trace: "+r.Trace,
		"Reasoning: "+r.Reasoning)
	switch r.Fast {
	case thinking.FastOn:
		parts = append(parts, "Fast")
	case thinking.FastAuto:
		parts = append(parts, "Fast: auto")
	}
	return system(strings.Join(parts, " · "))
}

// RemapNotice is the reply owed after a model switch when the session's stored thinking level is
// not supported by the new model: "Thinking level set to high (max not supported for p/m)." The
// stored override is kept, so switching back restores it; Resolve remaps it on every turn.
func RemapNotice(l Layers) (string, bool) {
	stored, ok := thinking.NormalizeThink(l.Session[KeyThinking])
	if !ok || len(l.Profile.Levels) == 0 {
		return "", false
	}
	got := l.Profile.Nearest(stored)
	if got == stored || l.Profile.Binary && stored != thinking.Off {
		return "", false
	}
	return fmt.Sprintf("Thinking level set to %s (%s not supported for %s).",
		thinkLabel(l.Profile, got), stored, modelRef(l.Model)), true
}
