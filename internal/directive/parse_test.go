package directive

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestThinkAliases runs every level word of the page, every /think name and every form (inline
// with text after, directive-only, colon form) through Parse.
func TestThinkAliases(t *testing.T) {
	words := []struct{ arg, want string }{
		{"off", "off"}, {"none", "off"},
		{"minimal", "minimal"}, {"min", "minimal"}, {"think", "minimal"},
		{"low", "low"}, {"on", "low"}, {"enable", "low"}, {"think hard", "low"}, {"think-hard", "low"},
		{"think_hard", "low"}, {"thinkhard", "low"},
		{"medium", "medium"}, {"mid", "medium"}, {"med", "medium"}, {"think harder", "medium"},
		{"thinkharder", "medium"}, {"harder", "medium"},
		{"high", "high"}, {"highest", "high"}, {"ultrathink", "high"}, {"thinkhardest", "high"},
		{"xhigh", "xhigh"}, {"x-high", "xhigh"}, {"x_high", "xhigh"}, {"extra-high", "xhigh"},
		{"extra high", "xhigh"}, {"extra_high", "xhigh"}, {"extrahigh", "xhigh"},
		{"ultrathink+", "xhigh"}, {"X High", "xhigh"}, {"extra\thigh", "xhigh"},
		{"adaptive", "adaptive"}, {"auto", "adaptive"},
		{"max", "max"}, {"MAX", "max"},
	}
	for _, name := range []string{"/t", "/think", "/thinking", "/THINK", "/Thinking"} {
		for _, w := range words {
			forms := []struct {
				in, body string
				only     bool
			}{
				{name + " " + w.arg, "", true},
				{name + ":" + w.arg, "", true},
				{name + ": " + w.arg + "  ", "", true},
				{name + " " + w.arg + " please do X", "please do X", false},
				{"please " + name + " " + w.arg + " do X", "please do X", false},
				{"do X " + name + " " + w.arg, "do X", false},
				{"do X\n" + name + " " + w.arg + "\nthen Y", "do X\nthen Y", false},
			}
			for _, f := range forms {
				p := Parse(f.in)
				want := Parsed{Body: f.body, Only: f.only,
					Directives: []D{{Name: Think, Raw: w.arg, Value: w.want}}}
				if d := cmp.Diff(want, p); d != "" {
					t.Errorf("Parse(%q) (-want +got):\n%s", f.in, d)
				}
			}
		}
	}
}

// TestOtherAliases covers the names and value words of /verbose, /trace, /fast and /reasoning,
// inline and directive-only.
func TestOtherAliases(t *testing.T) {
	tests := []struct {
		names []string
		name  Name
		words map[string]string
	}{
		{[]string{"/v", "/verbose", "/V"}, Verbose, map[string]string{
			"on": "on", "off": "off", "full": "full", "true": "on", "yes": "on", "1": "on",
			"minimal": "on", "false": "off", "no": "off", "0": "off", "all": "full", "everything": "full"}},
		{[]string{"/trace", "/TRACE"}, Trace, map[string]string{
			"on": "on", "off": "off", "raw": "raw", "unfiltered": "raw", "yes": "on", "0": "off"}},
		{[]string{"/fast", "/Fast"}, Fast, map[string]string{
			"on": "on", "off": "off", "auto": "auto", "automatic": "auto", "true": "on", "enable": "on",
			"fast": "on", "normal": "off", "disabled": "off", "no": "off"}},
		{[]string{"/reasoning", "/reason"}, Reasoning, map[string]string{
			"on": "on", "off": "off", "stream": "stream", "show": "on", "visible": "on", "hide": "off",
			"hidden": "off", "streaming": "stream", "draft": "stream", "live": "stream"}},
	}
	for _, tt := range tests {
		for _, name := range tt.names {
			for arg, want := range tt.words {
				d := D{Name: tt.name, Raw: arg, Value: want}
				if got := Parse(name + " " + arg); !got.Only || !cmp.Equal(got.Directives, []D{d}) {
					t.Errorf("Parse(%q) = %+v, want only %+v", name+" "+arg, got, d)
				}
				in := "tell me " + name + ":" + arg + " about it"
				want := Parsed{Body: "tell me about it", Directives: []D{d}}
				if diff := cmp.Diff(want, Parse(in)); diff != "" {
					t.Errorf("Parse(%q) (-want +got):\n%s", in, diff)
				}
			}
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Parsed
	}{
		// Several directives in one message, inline and directive-only.
		{"/think high /fast on /v on do it", Parsed{Body: "do it", Directives: []D{
			{Name: Think, Raw: "high", Value: "high"}, {Name: Fast, Raw: "on", Value: "on"},
			{Name: Verbose, Raw: "on", Value: "on"}}}},
		{"/t high\n/fast off\n/reason on\n", Parsed{Only: true, Directives: []D{
			{Name: Think, Raw: "high", Value: "high"}, {Name: Fast, Raw: "off", Value: "off"},
			{Name: Reasoning, Raw: "on", Value: "on"}}}},
		// Every occurrence is read (the reference read only the first, improvements.md §9).
		{"/think low and then /think high go", Parsed{Body: "and then go", Directives: []D{
			{Name: Think, Raw: "low", Value: "low"}, {Name: Think, Raw: "high", Value: "high"}}}},
		// Queries, clears, status.
		{"/think", Parsed{Only: true, Directives: []D{{Name: Think, Query: true}}}},
		{"/think:", Parsed{Only: true, Directives: []D{{Name: Think, Query: true}}}},
		{"  /verbose  ", Parsed{Only: true, Directives: []D{{Name: Verbose, Query: true}}}},
		{"/fast status", Parsed{Only: true, Directives: []D{{Name: Fast, Raw: "status", Query: true}}}},
		{"/status", Parsed{Only: true, Directives: []D{{Name: Status, Query: true}}}},
		{"/status /think", Parsed{Only: true, Directives: []D{{Name: Status, Query: true}, {Name: Think, Query: true}}}},
		{"/think unpin", Parsed{Only: true, Directives: []D{{Name: Think, Raw: "unpin", Clear: true}}}},
		{"/fast default", Parsed{Only: true, Directives: []D{{Name: Fast, Raw: "default", Clear: true}}}},
		{"/think inherit now", Parsed{Body: "now", Directives: []D{{Name: Think, Raw: "inherit", Clear: true}}}},
		// Clear words are for /think and /fast only (verbose is cleared in the sessions UI).
		{"/verbose default", Parsed{Only: true, Directives: []D{{Name: Verbose, Raw: "default", Invalid: true}}}},
		// An argument that names nothing is an error only when nothing follows it.
		{"/thinking big", Parsed{Only: true, Directives: []D{{Name: Think, Raw: "big", Invalid: true}}}},
		{"/think big deal", Parsed{Body: "/think big deal"}},
		{"/think very high", Parsed{Body: "/think very high"}},
		// In a message with text, what does nothing stays the user's text.
		{"what does /v mean?", Parsed{Body: "what does /v mean?"}},
		{"hello /think big", Parsed{Body: "hello /think big"}},
		{"run /status and /think high now", Parsed{Body: "run /status and now",
			Directives: []D{{Name: Think, Raw: "high", Value: "high"}}}},
		// Not directives.
		{"foo/think high", Parsed{Body: "foo/think high"}},
		{"/thinkhigh", Parsed{Body: "/thinkhigh"}},
		{"/tx high", Parsed{Body: "/tx high"}},
		{"a /fasting diet", Parsed{Body: "a /fasting diet"}},
		{"see http://x/t high", Parsed{Body: "see http://x/t high"}},
		{"/\u212Aink high", Parsed{Body: "/\u212Aink high"}}, // Kelvin sign, not k
		// The argument stays on the directive's line.
		{"/think\nhigh", Parsed{Body: "/think\nhigh"}},
		// Span removal: whole line, one blank after, one blank before at the end of a line.
		{"line1\n/think high\nline3", Parsed{Body: "line1\nline3", Directives: []D{{Name: Think, Raw: "high", Value: "high"}}}},
		{"line1\r\n  /think high \r\nline3", Parsed{Body: "line1\r\nline3", Directives: []D{{Name: Think, Raw: "high", Value: "high"}}}},
		{"line1\n/think high", Parsed{Body: "line1", Directives: []D{{Name: Think, Raw: "high", Value: "high"}}}},
		{"a /think high\nb", Parsed{Body: "a\nb", Directives: []D{{Name: Think, Raw: "high", Value: "high"}}}},
		{"a /think high, b", Parsed{Body: "a , b", Directives: []D{{Name: Think, Raw: "high", Value: "high"}}}},
		{"a\t/think high\tb", Parsed{Body: "a\tb", Directives: []D{{Name: Think, Raw: "high", Value: "high"}}}},
		{"\u00a0/think high x", Parsed{Body: "\u00a0x", Directives: []D{{Name: Think, Raw: "high", Value: "high"}}}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, Parse(tt.in)); d != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		in   string
		want Parsed
	}{
		{"/think x_high", Parsed{Only: true, Directives: []D{{Name: Think, Raw: "x_high", Value: "xhigh"}}}},
		{"/think extra high", Parsed{Only: true, Directives: []D{{Name: Think, Raw: "extra high", Value: "xhigh"}}}},
		{"/think big", Parsed{Only: true, Directives: []D{{Name: Think, Raw: "big", Invalid: true}}}},
		{"/think big deal", Parsed{Body: "deal", Directives: []D{{Name: Think, Raw: "big", Invalid: true}}}},
		{"/think hi!gh", Parsed{Only: true, Directives: []D{{Name: Think, Raw: "hi!gh", Invalid: true}}}},
		{"/fast", Parsed{Only: true, Directives: []D{{Name: Fast, Query: true}}}},
		{"/status", Parsed{Only: true, Directives: []D{{Name: Status, Query: true}}}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, ParseCommand(tt.in)); d != "" {
			t.Errorf("ParseCommand(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}

func TestLast(t *testing.T) {
	p := Parse("/think low /v on /think high")
	if d, ok := p.Last(Think); !ok || d.Value != "high" {
		t.Errorf("Last(Think) = %+v, %v; want high", d, ok)
	}
	if _, ok := p.Last(Fast); ok {
		t.Error("Last(Fast) found a directive the message lacks")
	}
}

func BenchmarkParse(b *testing.B) {
	msgs := []string{
		"please summarise the attached thread and list the open questions",
		"/think high /fast on /v on do it",
		"/think extra high",
		strings.Repeat("a long message without any directive in it. ", 50),
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range msgs {
			Parse(m)
		}
	}
}

// BenchmarkParseAdversarial is a long message of directives that each name nothing: every one
// must be decided without rescanning the rest of the text.
func BenchmarkParseAdversarial(b *testing.B) {
	msg := strings.Repeat("/t x /fast y /v ", 20000) + "tail"
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(msg)
	}
}

// TestParseManyDirectivesAfterBlanks: a line that starts with a long run of blanks and then
// holds many directives keeps its blanks and its text, and every directive is read.
// BenchmarkParseManyDirectivesAfterBlanks measures it at the size where the removal's look back
// over the blanks was quadratic (about a minute before, 0.1 s after).
func TestParseManyDirectivesAfterBlanks(t *testing.T) {
	const n = 2000
	in, blanks := manyDirectivesAfterBlanks(n)
	p := Parse(in)
	if p.Body != blanks+"x" || p.Only || len(p.Directives) != n {
		t.Errorf("Parse: body of %d bytes (want %d), Only %v, %d directives (want %d)",
			len(p.Body), len(blanks)+1, p.Only, len(p.Directives), n)
	}
	if d, ok := p.Last(Think); !ok || d.Value != "low" {
		t.Errorf("Last(Think) = %+v, %v; want low", d, ok)
	}
}

// manyDirectivesAfterBlanks is 8n spaces, n directives and a word.
func manyDirectivesAfterBlanks(n int) (in, blanks string) {
	blanks = strings.Repeat(" ", 8*n)
	return blanks + strings.Repeat("/t on ", n) + "x", blanks
}

func BenchmarkParseManyDirectivesAfterBlanks(b *testing.B) {
	in, _ := manyDirectivesAfterBlanks(64000)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		Parse(in)
	}
}

// TestParseUnicodeBlanks: the blank between a directive and its argument may be any Unicode
// space on the line, as the reference's \s allows: an ideographic space (what a CJK input method
// types for the space bar) or a no-break space. The name already ended at such a blank, so the
// directive was found, its argument dropped, and "/think　high" went to the model as text.
func TestParseUnicodeBlanks(t *testing.T) {
	high := []D{{Name: Think, Raw: "high", Value: "high"}}
	tests := []struct {
		in   string
		want Parsed
	}{
		{"/think\u3000high", Parsed{Only: true, Directives: high}},
		{"/think\u00a0high", Parsed{Only: true, Directives: high}},
		{"/think:\u202fhigh", Parsed{Only: true, Directives: high}},
		{"/think\u3000high please", Parsed{Body: "please", Directives: high}},
		{"/think extra\u3000high", Parsed{Only: true, Directives: []D{{Name: Think, Raw: "extra\u3000high", Value: "xhigh"}}}},
		{"/fast\u3000on", Parsed{Only: true, Directives: []D{{Name: Fast, Raw: "on", Value: "on"}}}},
		// A line separator still ends the line: the argument does not move to the next one.
		{"/think\u2028high", Parsed{Body: "/think\u2028high"}},
		// A zero-width space is not a blank: the name does not end there.
		{"/think\u200bhigh", Parsed{Body: "/think\u200bhigh"}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, Parse(tt.in)); d != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, d)
		}
	}
	// A native command names its argument after such a blank too, and rejects what it is not.
	want := Parsed{Only: true, Directives: []D{{Name: Think, Raw: "big", Invalid: true}}}
	if d := cmp.Diff(want, ParseCommand("/think\u3000big")); d != "" {
		t.Errorf("ParseCommand (-want +got):\n%s", d)
	}
}
