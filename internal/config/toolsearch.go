package config

import (
	"encoding/json"
	"math"
	"time"
)

// ToolSearch is tools.toolSearch resolved with the documented defaults and clamps.
type ToolSearch struct {
	Enabled            bool
	Mode               string // "code" or "tools"
	CodeTimeout        time.Duration
	SearchDefaultLimit int
	MaxSearchLimit     int
}

// ToolSearch resolves tools.toolSearch:
//   - unset or false: disabled (nodmix's choice: unlike the reference, unset does not enable
//     the structured mode; the exposure default is the design's §4);
//   - true: enabled in code mode;
//   - an object: mode defaults to code; enabled is the object's own enabled flag, or else
//     whether it sets anything besides enabled (so {} is disabled and {mode: "tools"} enabled);
//   - maxSearchLimit = clamp(posInt or 20, 1, 50), searchDefaultLimit = clamp(posInt or 8, 1,
//     maxSearchLimit), codeTimeoutMs = clamp(posInt or 10000, 1000, 60000), where a value
//     that is not a positive integer falls back to the default before clamping.
//
// Whether code mode can actually run (it falls back to tools) is for the caller to decide.
func (c Config) ToolSearch() ToolSearch {
	ts := ToolSearch{
		Mode:               "code",
		CodeTimeout:        10 * time.Second,
		SearchDefaultLimit: 8,
		MaxSearchLimit:     20,
	}
	if len(c.Tools.ToolSearch) == 0 {
		return ts
	}
	var v any
	if err := json.Unmarshal(c.Tools.ToolSearch, &v); err != nil {
		return ts
	}
	switch v := v.(type) {
	case bool:
		ts.Enabled = v
	case map[string]any:
		if m, ok := v["mode"].(string); ok && (m == "code" || m == "tools") {
			ts.Mode = m
		}
		if on, ok := v["enabled"].(bool); ok {
			ts.Enabled = on
		} else {
			for k := range v {
				if k != "enabled" {
					ts.Enabled = true
					break
				}
			}
		}
		ts.MaxSearchLimit = clamp(posInt(v["maxSearchLimit"], 20), 1, 50)
		ts.SearchDefaultLimit = clamp(posInt(v["searchDefaultLimit"], 8), 1, ts.MaxSearchLimit)
		ts.CodeTimeout = time.Duration(clamp(posInt(v["codeTimeoutMs"], 10000), 1000, 60000)) * time.Millisecond
	}
	return ts
}

// posInt returns v when it is a positive integer, else def. The result may be huge; clamp it.
func posInt(v any, def float64) float64 {
	f, ok := v.(float64)
	if !ok || f <= 0 || f != math.Trunc(f) || math.IsInf(f, 0) {
		return def
	}
	return f
}

func clamp(v float64, lo, hi int) int {
	return int(math.Max(float64(lo), math.Min(float64(hi), v)))
}
