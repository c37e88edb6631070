package thinking

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type thinkCase struct {
	in   string
	want Level // "" means not a level
}

func TestNormalizeThink(t *testing.T) {
	tests := []thinkCase{
		// The eight canonical names, any case, trimmed.
		{"off", Off}, {"minimal", Minimal}, {"low", Low}, {"medium", Medium}, {"high", High},
		{"xhigh", XHigh}, {"adaptive", Adaptive}, {"max", Max},
		{"HIGH", High}, {"  Medium\t", Medium}, {"Max", Max},

		// The seed page's aliases, verbatim.
		{"think", Minimal},
		{"think hard", Low},
		{"think harder", Medium},
		{"ultrathink", High},
		{"ultrathink+", XHigh},
		{"x-high", XHigh}, {"x_high", XHigh}, {"extra-high", XHigh}, {"extra high", XHigh}, {"extra_high", XHigh},
		{"highest", High},

		// The reference normalizer's table (directives.md §5.2.1).
		{"none", Off},
		{"on", Low}, {"enable", Low}, {"enabled", Low},
		{"min", Minimal},
		{"thinkhard", Low}, {"think-hard", Low}, {"think_hard", Low},
		{"mid", Medium}, {"med", Medium}, {"thinkharder", Medium}, {"think-harder", Medium}, {"harder", Medium},
		{"thinkhardest", High}, {"think hardest", High},
		{"auto", Adaptive},
		{"extrahigh", XHigh}, {"x high", XHigh}, {"X  High", XHigh}, {"x__high", XHigh}, {"x - high", XHigh},

		// nodmix's set ends at max: the reference's "ultra" is max here, and so is the label "maximum".
		{"ULTRA", Max}, {"ultra", Max}, {"maximum", Max},

		// Not levels (the reference's undefined cases, and near misses).
		{"", ""}, {"   ", ""}, {"disabled", ""}, {"extra-highest", ""}, {"xhigher", ""}, {"big", ""},
		{"h-i-g-h", ""}, {"hi gh", ""}, {"default", ""}, {"inherit", ""}, {"clear", ""},
		{"high please", ""}, {"extra", ""}, {"-high", High}, {"high-", High},
	}
	for _, tc := range tests {
		got, ok := NormalizeThink(tc.in)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("NormalizeThink(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
		if ok && !got.Valid() {
			t.Errorf("NormalizeThink(%q) = %q, not a canonical level", tc.in, got)
		}
	}
}

// TestNormalizeThinkGolden runs the reference's normalizeThinkLevel golden vectors. Only "ULTRA"
// differs: the reference has an "ultra" level, nodmix maps the word to max.
func TestNormalizeThinkGolden(t *testing.T) {
	golden := map[string]string{
		"x-high": "xhigh", "x_high": "xhigh", "extra-high": "xhigh", "extra high": "xhigh",
		"extra_high": "xhigh", "highest": "high", "auto": "adaptive", "think": "minimal",
		"thinkhard": "low", "harder": "medium", "min": "minimal", "mid": "medium",
		"med": "medium", "on": "low", "enable": "low", "ULTRA": "max", "Max": "max",
		"none": "off", "disabled": "", "": "",
		// The reference leaves "think hard" (with a space) undefined although the page names it
		// as low's alias; the page wins (improvements.md §9: multi-word aliases).
		"think hard": "low",
	}
	got := map[string]string{}
	for in := range golden {
		l, _ := NormalizeThink(in)
		got[in] = string(l)
	}
	if d := cmp.Diff(golden, got); d != "" {
		t.Errorf("NormalizeThink golden (-want +got):\n%s", d)
	}
}

func TestRank(t *testing.T) {
	got := map[Level]int{}
	for _, l := range All() {
		got[l] = l.Rank()
	}
	want := map[Level]int{Off: 0, Minimal: 10, Low: 20, Medium: 30, Adaptive: 30, High: 40, XHigh: 60, Max: 70}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ranks (-want +got):\n%s", d)
	}
	if Level("ultra").Rank() != -1 || Level("").Valid() {
		t.Error("unknown levels must rank -1 and be invalid")
	}
	if d := cmp.Diff([]Level{Off, Minimal, Low, Medium, High, XHigh, Adaptive, Max}, All()); d != "" {
		t.Errorf("help order (-want +got):\n%s", d)
	}
}

func TestIsClear(t *testing.T) {
	for _, s := range []string{"default", "inherit", "inherited", "clear", "reset", "unpin", " Default ", "RESET"} {
		if !IsClear(s) {
			t.Errorf("IsClear(%q) = false", s)
		}
	}
	for _, s := range []string{"", "off", "defaults", "un pin", "none", "status"} {
		if IsClear(s) {
			t.Errorf("IsClear(%q) = true", s)
		}
	}
}

func TestNormalizeFast(t *testing.T) {
	want := map[string]FastMode{
		"off": FastOff, "false": FastOff, "no": FastOff, "0": FastOff, "disable": FastOff,
		"disabled": FastOff, "normal": FastOff, "OFF": FastOff,
		"on": FastOn, "true": FastOn, "yes": FastOn, "1": FastOn, "enable": FastOn,
		"enabled": FastOn, "fast": FastOn, " On ": FastOn,
		"auto": FastAuto, "automatic": FastAuto,
		"status": "", "default": "", "inherit": "", "": "", "maybe": "", "2": "",
	}
	got := map[string]FastMode{}
	for in := range want {
		m, ok := NormalizeFast(in)
		if ok != (m != "") {
			t.Errorf("NormalizeFast(%q) = %q, %v", in, m, ok)
		}
		got[in] = m
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("NormalizeFast (-want +got):\n%s", d)
	}
}

func TestNormalizeWords(t *testing.T) {
	tests := []struct {
		name string
		fn   func(string) (string, bool)
		want map[string]string
	}{
		{"verbose", NormalizeVerbose, map[string]string{
			"off": "off", "false": "off", "no": "off", "0": "off",
			"on": "on", "minimal": "on", "true": "on", "yes": "on", "1": "on",
			"full": "full", "all": "full", "everything": "full", "FULL": "full",
			"maybe": "", "": "", "default": "", "stream": "", "raw": "",
		}},
		{"trace", NormalizeTrace, map[string]string{
			"off": "off", "false": "off", "no": "off", "0": "off",
			"on": "on", "true": "on", "yes": "on", "1": "on",
			"raw": "raw", "unfiltered": "raw", " Raw ": "raw",
			"full": "", "": "", "default": "", "minimal": "",
		}},
		{"reasoning", NormalizeReasoning, map[string]string{
			"off": "off", "false": "off", "no": "off", "0": "off", "hide": "off", "hidden": "off",
			"disable": "off", "disabled": "off",
			"on": "on", "true": "on", "yes": "on", "1": "on", "show": "on", "visible": "on",
			"enable": "on", "enabled": "on",
			"stream": "stream", "streaming": "stream", "draft": "stream", "live": "stream", "STREAM": "stream",
			"full": "", "": "", "default": "", "raw": "",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for in := range tc.want {
				v, ok := tc.fn(in)
				if ok != (v != "") {
					t.Errorf("%s(%q) = %q, %v", tc.name, in, v, ok)
				}
				got[in] = v
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestFastAutoWindow(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		want   time.Duration
	}{
		{"no params", nil, DefaultFastAutoWindow},
		{"no window", map[string]any{"fastMode": true}, DefaultFastAutoWindow},
		{"seconds", map[string]any{"fastAutoOnSeconds": 5.0}, 5 * time.Second},
		{"a fraction", map[string]any{"fast_seconds": 0.25}, 250 * time.Millisecond},
		{"zero", map[string]any{"fastSeconds": 0.0}, 0},
		{"the first key wins", map[string]any{"fast_seconds": 3.0, "fastAutoOnSeconds": 9.0}, 9 * time.Second},
		{"snake case before the short forms", map[string]any{"fastSeconds": 3.0, "fast_auto_on_seconds": 7.0}, 7 * time.Second},
		{"not a number", map[string]any{"fastAutoOnSeconds": "60"}, DefaultFastAutoWindow},
		{"negative", map[string]any{"fastAutoOnSeconds": -1.0}, DefaultFastAutoWindow},
		{"NaN", map[string]any{"fastAutoOnSeconds": math.NaN()}, DefaultFastAutoWindow},
		{"beyond any run", map[string]any{"fastAutoOnSeconds": 1e300}, math.MaxInt64},
	}
	for _, tc := range tests {
		if got := FastAutoWindow(tc.params); got != tc.want {
			t.Errorf("%s: FastAutoWindow(%v) = %v, want %v", tc.name, tc.params, got, tc.want)
		}
	}
}
