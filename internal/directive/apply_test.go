package directive

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/thinking"
)

type ov = map[string]string

func TestApplyReplies(t *testing.T) {
	const model = "openai/gpt-x"
	tests := []struct {
		msg     string
		session ov
		profile thinking.Profile
		global  Defaults
		reply   string
		want    ov
		events  []string
	}{
		// Thinking: set, off, clear, invalid, unsupported, query.
		{msg: "/think high", reply: "Thinking level set to high.", want: ov{"thinking": "high"}},
		{msg: "/t:medium", session: ov{"thinking": "high"}, reply: "Thinking level set to medium.", want: ov{"thinking": "medium"}},
		{msg: "/think x-high", profile: profile("off low high xhigh", thinking.Low), reply: "Thinking level set to xhigh.", want: ov{"thinking": "xhigh"}},
		{msg: "/think extra high", profile: profile("off low high xhigh", thinking.Low), reply: "Thinking level set to xhigh.", want: ov{"thinking": "xhigh"}},
		{msg: "/think highest", reply: "Thinking level set to high.", want: ov{"thinking": "high"}},
		{msg: "/think off", reply: "Thinking disabled.", want: ov{"thinking": "off"}},
		{msg: "/think default", session: ov{"thinking": "high", "fast": "on"}, reply: "Thinking level reset to default.", want: ov{"fast": "on"}},
		{msg: "/think inherit", session: ov{"thinking": "high"}, reply: "Thinking level reset to default.", want: ov{}},
		{msg: "/think clear", reply: "Thinking level reset to default.", want: ov{}},
		{msg: "/thinking big", session: ov{"thinking": "low"},
			reply: `Unrecognized thinking level "big". Valid levels: default, off, minimal, low, medium, high.`, want: ov{"thinking": "low"}},
		{msg: "/think xhigh", session: ov{"thinking": "low"},
			reply: `Thinking level "xhigh" is not supported for openai/gpt-x. Use one of: off, minimal, low, medium, high.`, want: ov{"thinking": "low"}},
		{msg: "/think x_high", profile: binaryProfile, reply: "Thinking level set to on.", want: ov{"thinking": "low"}},
		{msg: "/think", session: ov{"thinking": "high"}, reply: "Current thinking level: high.\nOptions: default, off, minimal, low, medium, high."},
		{msg: "/think:", reply: "Current thinking level: medium.\nOptions: default, off, minimal, low, medium, high."},
		{msg: "/think", profile: binaryProfile, session: ov{"thinking": "low"}, reply: "Current thinking level: on.\nOptions: default, off, on."},
		{msg: "/think", profile: ownedProfile, reply: "Current thinking level: default.\nOptions: default, low, medium, high, xhigh, adaptive, max."},
		{msg: "/think", profile: profile("off high", thinking.High), session: ov{"thinking": "max"},
			reply: "Current thinking level: high.\nOptions: default, off, high."},

		// Fast mode.
		{msg: "/fast on", reply: "⚙️ Fast mode enabled.", want: ov{"fast": "on"}, events: []string{"Fast mode enabled."}},
		{msg: "/fast off", reply: "⚙️ Fast mode disabled.", want: ov{"fast": "off"}, events: []string{"Fast mode disabled."}},
		{msg: "/fast auto", reply: "⚙️ Fast mode set to auto.", want: ov{"fast": "auto"}, events: []string{"Fast mode set to auto."}},
		{msg: "/fast default", session: ov{"fast": "on"}, reply: "⚙️ Fast mode reset to default.", want: ov{}},
		{msg: "/fast", reply: "Current fast mode: off (default).\nOptions: on, off, auto, default, status."},
		{msg: "/fast status", session: ov{"fast": "on"}, reply: "Current fast mode: on (session)."},
		{msg: "/fast status", global: Defaults{Params: map[string]any{"fastMode": true}}, reply: "Current fast mode: on (model)."},
		{msg: "/fast bogus", reply: `Unrecognized fast mode "bogus". Valid levels: on, off, auto, default, status.`},

		// Verbose.
		{msg: "/verbose on", reply: "⚙️ Verbose logging enabled.", want: ov{"verbose": "on"}},
		{msg: "/v off", reply: "⚙️ Verbose logging disabled.", want: ov{"verbose": "off"}},
		{msg: "/v full", reply: "⚙️ Verbose logging set to full.", want: ov{"verbose": "full"}},
		{msg: "/verbose", session: ov{"verbose": "full"}, reply: "Current verbose level: full.\nOptions: on, full, off."},
		{msg: "/verbose maybe", reply: `Unrecognized verbose level "maybe". Valid levels: off, on, full.`},

		// Trace: the page's wording ("Plugin trace …"), which wins over the reference code's.
		{msg: "/trace on", reply: "⚙️ Plugin trace enabled.", want: ov{"trace": "on"}},
		{msg: "/trace off", reply: "⚙️ Plugin trace disabled.", want: ov{"trace": "off"}},
		{msg: "/trace raw", reply: "⚙️ Plugin trace set to raw. Warning: trace output may contain sensitive information.", want: ov{"trace": "raw"}},
		{msg: "/trace:", reply: "Current trace level: off.\nOptions: on, off, raw."},
		{msg: "/trace loud", reply: `Unrecognized trace level "loud". Valid levels: off, on, raw.`},

		// Reasoning.
		{msg: "/reasoning on", reply: "⚙️ Reasoning visibility enabled.", want: ov{"reasoning": "on"}},
		{msg: "/reason hide", reply: "⚙️ Reasoning visibility disabled.", want: ov{"reasoning": "off"}},
		{msg: "/reason stream", reply: "⚙️ Reasoning stream enabled.", want: ov{"reasoning": "stream"}},
		{msg: "/reasoning", session: ov{"reasoning": "stream"}, reply: "Current reasoning level: stream.\nOptions: on, off, stream."},
		{msg: "/reasoning loud", reply: `Unrecognized reasoning level "loud". Valid levels: on, off, stream.`},

		// Several directives: acknowledgements joined by a space, answers on their own lines;
		// one refused directive refuses the message.
		{msg: "/think high /fast on", reply: "Thinking level set to high. ⚙️ Fast mode enabled.",
			want: ov{"thinking": "high", "fast": "on"}, events: []string{"Fast mode enabled."}},
		{msg: "/think high\n/v on\n/reason stream", reply: "Thinking level set to high. ⚙️ Verbose logging enabled. ⚙️ Reasoning stream enabled.",
			want: ov{"thinking": "high", "verbose": "on", "reasoning": "stream"}},
		{msg: "/think high /fast bogus", session: ov{"fast": "off"},
			reply: `Unrecognized fast mode "bogus". Valid levels: on, off, auto, default, status.`, want: ov{"fast": "off"}},
		{msg: "/think max /trace bogus",
			reply: "Thinking level \"max\" is not supported for openai/gpt-x. Use one of: off, minimal, low, medium, high.\nUnrecognized trace level \"bogus\". Valid levels: off, on, raw."},
		{msg: "/v on /think", reply: "⚙️ Verbose logging enabled.\nCurrent thinking level: medium.\nOptions: default, off, minimal, low, medium, high.",
			want: ov{"verbose": "on"}},
		{msg: "/think low /think high", reply: "Thinking level set to high.", want: ov{"thinking": "high"}},

		// Status: the levels after the message; Fast only when on.
		{msg: "/status", reply: "⚙️ Model: openai/gpt-x · Think: medium · Verbose: off · Trace: off · Reasoning: off"},
		{msg: "/status", session: ov{"fast": "on", "verbose": "full", "thinking": "low"},
			reply: "⚙️ Model: openai/gpt-x · Think: low · Verbose: full · Trace: off · Reasoning: off · Fast"},
		{msg: "/fast auto /status", reply: "⚙️ Fast mode set to auto.\n⚙️ Model: openai/gpt-x · Think: medium · Verbose: off · Trace: off · Reasoning: off · Fast: auto",
			want: ov{"fast": "auto"}, events: []string{"Fast mode set to auto."}},
	}
	for _, tt := range tests {
		p := Parse(tt.msg)
		if !p.Only {
			t.Fatalf("%q is not directive-only: %+v", tt.msg, p)
		}
		prof := tt.profile
		if prof.Levels == nil {
			prof = baseProfile
		}
		session := cloneOv(tt.session)
		got := Apply(p.Directives, Layers{Session: session, Global: tt.global, Profile: prof, Model: model})
		want := tt.want
		if want == nil {
			want = cloneOv(tt.session)
		}
		if got.Reply != tt.reply {
			t.Errorf("%q reply:\n got %q\nwant %q", tt.msg, got.Reply, tt.reply)
		}
		if d := cmp.Diff(want, got.Overrides); d != "" {
			t.Errorf("%q overrides (-want +got):\n%s", tt.msg, d)
		}
		if changed := !cmp.Equal(want, cloneOv(tt.session)); got.Changed != changed {
			t.Errorf("%q Changed = %v, want %v", tt.msg, got.Changed, changed)
		}
		if d := cmp.Diff(tt.events, got.Events); d != "" {
			t.Errorf("%q events (-want +got):\n%s", tt.msg, d)
		}
		if !cmp.Equal(session, cloneOv(tt.session)) {
			t.Errorf("%q modified the caller's map: %v", tt.msg, session)
		}
	}
}

func cloneOv(m ov) ov {
	out := ov{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestApplyNoProfile(t *testing.T) {
	// Without a profile every canonical level is accepted and listed.
	got := Apply(Parse("/think bogus").Directives, Layers{})
	want := `Unrecognized thinking level "bogus". Valid levels: default, off, minimal, low, medium, high, xhigh, adaptive, max.`
	if got.Reply != want || got.Changed {
		t.Errorf("reply %q changed %v, want %q", got.Reply, got.Changed, want)
	}
	got = Apply(Parse("/think max").Directives, Layers{Model: "custom/m"})
	if got.Reply != "Thinking level set to max." || got.Overrides[KeyThinking] != "max" {
		t.Errorf("got %+v", got)
	}
	if got := Apply(nil, Layers{}); got.Reply != "OK." || got.Changed || got.Overrides == nil {
		t.Errorf("Apply(nil) = %+v, want OK. and an empty map", got)
	}
}

func TestCheckInline(t *testing.T) {
	l := Layers{Profile: baseProfile, Model: "openai/gpt-x"}
	p := Parse("/think max summarise this")
	if p.Only || p.Body != "summarise this" {
		t.Fatalf("parse: %+v", p)
	}
	reply, ok := Check(p.Directives, l)
	if ok || reply != `Thinking level "max" is not supported for openai/gpt-x. Use one of: off, minimal, low, medium, high.` {
		t.Errorf("Check = %q, %v", reply, ok)
	}
	if reply, ok := Check(Parse("/think high go").Directives, l); !ok || reply != "" {
		t.Errorf("Check(high) = %q, %v; want ok", reply, ok)
	}
}

func TestRemapNotice(t *testing.T) {
	tests := []struct {
		stored string
		p      thinking.Profile
		want   string
	}{
		{"max", profile("off high", thinking.High), "Thinking level set to high (max not supported for openrouter/deepseek-v4)."},
		{"xhigh", baseProfile, "Thinking level set to high (xhigh not supported for openrouter/deepseek-v4)."},
		{"adaptive", baseProfile, "Thinking level set to medium (adaptive not supported for openrouter/deepseek-v4)."},
		{"high", baseProfile, ""},
		{"high", binaryProfile, ""},
		{"", baseProfile, ""},
	}
	for _, tt := range tests {
		got, ok := RemapNotice(Layers{Session: ov{KeyThinking: tt.stored}, Profile: tt.p, Model: "openrouter/deepseek-v4"})
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("RemapNotice(%s) = %q, %v; want %q", tt.stored, got, ok, tt.want)
		}
	}
}

func TestSystemPrefixOnce(t *testing.T) {
	if got := system(system("x")); got != "⚙️ x" {
		t.Errorf("system(system(x)) = %q", got)
	}
}

func TestThinkingMenu(t *testing.T) {
	maxLabel := profile("off low high max:maximum", thinking.Low)
	tests := []struct {
		name string
		l    Layers
		want []Choice
	}{
		{"inheriting a non-off default", Layers{Profile: maxLabel}, []Choice{
			{Label: "Inherited: low", Selected: true}, {Value: "off", Label: "Override: off"},
			{Value: "low", Label: "Override: low"}, {Value: "high", Label: "Override: high"},
			{Value: "max", Label: "Override: maximum"}}},
		{"inheriting off, override pinned", Layers{Profile: binaryProfile, Session: ov{KeyThinking: "high"}}, []Choice{
			{Label: "Off"}, {Value: "off", Label: "Override: off"}, {Value: "low", Label: "Override: on", Selected: true}}},
		{"configured default, stored level remapped", Layers{Profile: maxLabel, Global: Defaults{Thinking: "high"},
			Session: ov{KeyThinking: "medium"}}, []Choice{
			{Label: "Inherited: high"}, {Value: "off", Label: "Override: off"},
			{Value: "low", Label: "Override: low", Selected: true}, {Value: "high", Label: "Override: high"},
			{Value: "max", Label: "Override: maximum"}}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, ThinkingMenu(tt.l)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, d)
		}
	}
}
