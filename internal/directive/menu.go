package directive

import "github.com/nodmix/nodmix/internal/thinking"

// Choice is one entry of a thinking picker (the web chat's selector).
type Choice struct {
	// Value is the level to store as the session override; "" clears the override.
	Value thinking.Level `json:"value"`
	Label string         `json:"label"`
	// Selected marks the entry the session is on.
	Selected bool `json:"selected,omitempty"`
}

// ThinkingMenu lists a picker's entries for the session in l. The first entry always clears the
// override: "Inherited: <level>" when the level the session would inherit is not off, "Off"
// when it is. Then one "Override: <label>" entry per level of the profile, keeping provider
// labels ("Override: on" on a binary provider). Picking an entry writes the same override a
// /think directive writes, so the two stay in step.
func ThinkingMenu(l Layers) []Choice {
	inherit := l
	inherit.Inline = nil
	inherit.Session = nil
	r := Resolve(inherit)
	first := Choice{Label: "Off"}
	if r.Think != thinking.Off {
		first.Label = "Inherited: " + thinkLabel(l.Profile, r.Think)
	}
	stored, pinned := thinking.NormalizeThink(l.Session[KeyThinking])
	first.Selected = !pinned
	out := []Choice{first}
	for _, o := range l.Profile.Levels {
		out = append(out, Choice{Value: o.ID, Label: "Override: " + o.Label,
			Selected: pinned && supported(l.Profile, stored) == o.ID})
	}
	return out
}
