package thinktag

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type splitCase struct {
	name, in           string
	visible, reasoning string
}

// same marks a case whose reply is visible unchanged with no reasoning.
func same(name, in string) splitCase { return splitCase{name, in, in, ""} }

var splitCases = []splitCase{
	same("empty", ""),
	same("plain", "Hello, world."),
	same("blank only", " \n\t "),

	// Closed blocks.
	{"closed at start", "<think>plan</think>Answer.", "Answer.", "plan"},
	{"closed mid text", "Hello <think>x</think> world", "Hello  world", "x"},
	{"thinking", "<thinking>a</thinking>b", "b", "a"},
	{"thought", "<thought>a</thought>b", "b", "a"},
	{"upper case", "<THINK>a</THINK>b", "b", "a"},
	{"mixed case", "<Think>a</tHiNk>b", "b", "a"},
	{"blank before bracket", "<think >a</think >b", "b", "a"},
	{"attributes", `<think type="reasoning" id=1>a</think>b`, "b", "a"},
	{"tab and attribute", "<thinking\tmode=deep>a</thinking\t>b", "b", "a"},
	{"names need not match", "<thinking>a</think>b", "b", "a"},
	{"two blocks", "<think>a</think>x<think>b</think>y", "xy", "a\nb"},
	{"multi-line block", "<think>\nstep 1\nstep 2\n</think>\n\nAnswer", "Answer", "\nstep 1\nstep 2\n"},
	{"empty block", "<think></think>Answer", "Answer", ""},
	{"empty then full", "<think></think>x<think>b</think>", "x", "b"},
	{"self-closing", "<think/>Answer", "Answer", ""},
	{"self-closing with blank", "a<think />b", "ab", ""},

	// Whitespace after a closing tag: dropped only while nothing visible came before it.
	{"blank lines after the block", "<think>a</think>\n\nHello", "Hello", "a"},
	{"blanks and CRLF after the block", "<think>a</think> \t\r\n \r\nHello", "Hello", "a"},
	{"whitespace inside the answer kept", "<think>a</think>\n\nHello\n\n  world  \n", "Hello\n\n  world  \n", "a"},
	{"after text the whitespace is kept", "Hi<think>a</think>\n\nthere", "Hi\n\nthere", "a"},
	{"a later block keeps the paragraph break", "One.\n<think>a</think>\n\nTwo.", "One.\n\n\nTwo.", "a"},
	{"blanks before the block kept", "\n <think>a</think>\n\nHello", "\n Hello", "a"},
	{"two blocks before the answer", "<think>a</think>\n\n<think>b</think>\n\nHello", "Hello", "a\nb"},
	{"whitespace only after the block", "<think>a</think>\n\n \n", "", "a"},
	{"after an empty tag", "<think/>\n\nHello", "Hello", ""},
	{"after an empty tag mid-text", "Hi<think/>\n\nthere", "Hi\n\nthere", ""},
	{"fence after the dropped lines", "<think>a</think>\n\n```\n<think>b</think>\n```", "```\n<think>b</think>\n```", "a"},
	{"dropped indentation: the fence is what shows", "<think>a</think>\n    ```\n<think>b</think>", "```\n<think>b</think>", "a"},
	{"code span after the dropped lines", "<think>a</think>\n\n`<think>`", "`<think>`", "a"},
	{"unclosed after the dropped lines", "<think>a</think>\n\n<think>b", "", "a\nb"},
	{"no-break space is no blank", "<think>a</think>\u00a0Hi", "\u00a0Hi", "a"},
	same("stray closing tag drops nothing", "</think>\n\nHi"),
	same("closing tag in a fence drops nothing", "```\n</think>\n\nx\n```"),

	// Nested and duplicate tags: the first closing tag ends the block.
	{"duplicate opening", "<think><think>plan</think>Answer", "Answer", "<think>plan"},
	{"nested", "<think>a<think>b</think>c</think>d", "c</think>d", "a<think>b"},
	{"duplicate closing", "<think>a</think></think>b", "</think>b", "a"},
	{"other name inside", "<think>a<thought>b</thought>c", "c", "a<thought>b"},

	// Unclosed blocks.
	{"unclosed after text", "Answer.\n<think>more thoughts", "Answer.\n", "more thoughts"},
	{"unclosed after block", "<think>a</think>Answer<think>b", "Answer", "a\nb"},
	{"unclosed only", "<think>The answer is 42.", "The answer is 42.", ""},
	{"unclosed only after blanks", "\n  <think>\nThe answer", "\n  \nThe answer", ""},
	{"unclosed only, nothing in it", "<think>", "", ""},
	{"unclosed only keeps inner tag", "<think>x<think>y", "x<think>y", ""},
	{"unclosed only, attributes", "<thinking level=high>The answer", "The answer", ""},
	{"unclosed after closed block, nothing visible", "<think>a</think>\n<think>b", "", "a\nb"},
	{"unclosed after empty tag", "<think/><think>b", "", "b"},
	{"unclosed after stray closing tag", "</think><think>b", "</think>", "b"},
	{"unclosed after code", "`x`<think>b", "`x`", "b"},

	// A closing tag without a block stays visible.
	same("closing without opening", "The plan</think>Answer"),
	same("closing only", "</thinking>"),
	same("closing with attributes", "a</think x=1>b"),

	// Not reasoning tags.
	same("longer name", "<thinker>a</thinker>"),
	same("hyphenated", "<think-tank>a"),
	same("name too long", "<thinkingx>a"),
	same("blank after bracket", "< think>a</ think>"),
	same("no closing bracket", "<think"),
	same("comparison", "a < b > c <= d"),
	same("prose with bracket", "<thinking about it, no"),
	same("tag across lines", "<think\n>a</think>"),
	same("bracket in attributes", "<think a<b>x"),
	same("tag too long", "<think "+strings.Repeat("x", 130)+">a</think>b"),
	same("other tags", "<b>bold</b> <final>x</final>"),
	{"longest tag", "<think " + strings.Repeat("x", maxTagLen-8) + ">a</think>b", "b", "a"},

	// Fenced code.
	same("fence", "```\n<think>x</think>\n```\nafter"),
	same("tilde fence", "~~~\n<think>x</think>\n~~~"),
	same("fence with info", "```go\n<think>\n```"),
	same("unclosed fence", "```\n<think>x"),
	same("fence indented three", "   ```\n<think>x</think>\n   ```"),
	same("long fence", "`````\n<think>x</think>\n`````"),
	same("tag in info string", "```<think>\ncode\n```"),
	same("tag in tilde info string", "~~~ <think> `x`\ncode"),
	same("tilde info may hold backticks", "~~~a`b\n<think>x</think>\n~~~"),
	same("closing line with text does not close", "```\n``` x\n<think>a</think>\n```\nb"),
	same("tilde does not close backticks", "```\n~~~\n<think>a</think>\n```"),
	same("empty lines in fence", "```\n\n<think>a</think>\n\n```"),
	{"after fence", "```\ncode\n```\n<think>x</think>done", "```\ncode\n```\ndone", "x"},
	{"after fence, closing with blanks", "```\ncode\n  ```  \n<think>x</think>", "```\ncode\n  ```  \n", "x"},
	{"fence indented four is not", "    ```\n<think>x</think>y", "    ```\ny", "x"},
	{"shorter closing fence does not close", "````\n```\n<think>x</think>\n````\n<think>y</think>z",
		"````\n```\n<think>x</think>\n````\nz", "y"},
	{"backtick in info is no fence", "```a`b\n<think>x</think>y", "```a`b\ny", "x"},
	{"fence mid line is not", "text ```\n<think>x</think>", "text ```\n", "x"},
	{"tag on a backtick line that is no fence", "```<think>x</think>`", "````", "x"},
	{"fence after a block", "<think>x</think>```\n<think>y</think>\n```", "```\n<think>y</think>\n```", "x"},
	{"fence on the line after a block", "<think>x</think>\n```\n<think>y</think>\n```", "```\n<think>y</think>\n```", "x"},
	{"block inside a line keeps the line", "a<think>x</think>```\n<think>y</think>", "a```\n", "x\ny"},
	{"fences do not count in reasoning", "<think>```\n</think>\n```</think>Answer", "```</think>Answer", "```\n"},

	// Code spans.
	same("code span", "`<think>` starts reasoning"),
	same("double code span", "Use ``<think>`` tags"),
	same("code span with a backtick", "`` a`<think>` ``"),
	same("code span across lines", "`a\n<think>x</think> b`"),
	same("code span closes after the block", "`a <think>x</think>`"),
	same("code span closes inside the block", "`a <think>x` y</think>z"),
	same("later span covers the tag", "``a `b <think>x` c"),
	same("closing tag in a span", "`</think>`"),
	same("even backslashes", "\\\\`<think>x</think>`"),
	same("span closed by a line's first run", "`a <think>x\n` b"),
	same("span closed by a backtick line that is no fence", "``a <think>x\n```y``"),
	same("two spans", "`<think>` and `</think>`"),
	same("self-closing in span", "`<think/>`"),
	{"unmatched backtick", "a ` b <think>x</think> c", "a ` b  c", "x"},
	{"run of another length", "`` a <think>x</think> ` b", "`` a  ` b", "x"},
	{"escaped backtick", "\\`<think>x</think>`", "\\``", "x"},
	{"escaped run is shorter", "\\``<think>x</think>``", "\\````", "x"},
	same("escaped run closed by a single", "\\``<think>x</think>`"),
	{"escaped run opens a shorter span", "\\``<think>x</think>`` `", "\\``<think>x</think>`` `", ""},
	{"blank line ends a span", "`a\n\n<think>x</think> b`", "`a\n\n b`", "x"},
	{"blank line with blanks ends a span", "`a\n \t\n<think>x</think> b`", "`a\n \t\n b`", "x"},
	{"fence ends a span", "`a\n~~~\nx\n~~~\n<think>y</think>`", "`a\n~~~\nx\n~~~\n`", "y"},
	{"backtick fence ends a span", "`a <think>y</think>\n```\n`", "`a \n```\n`", "y"},
	{"span before the tag closed", "`a` <think>x</think>", "`a` ", "x"},
	{"span closed by a run in the tag", "`a <think b=\"`\">x</think>", "`a <think b=\"`\">x</think>", ""},
	{"tag after a closed span", "`a` ``b`` <think>x</think>c", "`a` ``b`` c", "x"},
	{"runs closed in turn", "`` ` x ` <think>y</think>", "`` ` x ` ", "y"},
	{"run closed then tag", "``` `` x `` <think>y</think>", "``` `` x `` ", "y"},
	{"blank line after a tag", "`a <think>x\n\ny</think>z`", "`a z`", "x\n\ny"},
	{"empty tag after a run", "`a <think/>b", "`a b", ""},
	{"empty tag at a line start", "<think/>```\n<think>x</think>", "```\n<think>x</think>", ""},
	{"unclosed after a run", "`a <think>b", "`a ", "b"},
	{"tags after unmatched runs", "` a <think>x</think> `` b <think>y</think> ``` c <think>z</think> d",
		"` a  `` b  ``` c  d", "x\ny\nz"},
	{"a later run closes after the first lookahead", "` a <think>x</think> `` b <think>y</think> c ``",
		"` a  `` b <think>y</think> c ``", "x"},
	{"a new paragraph looks ahead again", "` a <think>x</think>\n\n` b <think>y</think> `",
		"` a \n\n` b <think>y</think> `", "x"},
	{"unclosed only in a span-free line", "<think>`a`", "`a`", ""},

	// Reasoning blocks hide backticks and fences from the text around them.
	{"backticks in reasoning", "<think>`</think><think>x</think>`", "`", "`\nx"},
	{"carriage returns", "<think>a\r\n</think>\r\nb", "b", "a\r\n"},
	{"unicode", "<think>ça</think>ü€", "ü€", "ça"},
}

// parts is a reply's two halves, for diffs.
type parts struct{ Visible, Reasoning string }

func partsOf(visible, reasoning string) parts { return parts{visible, reasoning} }

func TestSplit(t *testing.T) {
	for _, tc := range splitCases {
		t.Run(tc.name, func(t *testing.T) {
			want := parts{tc.visible, tc.reasoning}
			if d := cmp.Diff(want, partsOf(Split(tc.in))); d != "" {
				t.Errorf("Split(%q) (-want +got):\n%s", tc.in, d)
			}
			if d := cmp.Diff(want, partsOf(reference(tc.in))); d != "" {
				t.Errorf("reference(%q) (-want +got):\n%s", tc.in, d)
			}
		})
	}
}

// stream runs text through a Filter in the given pieces and returns the concatenated output and
// the reasoning. It fails t when the filter holds back more than it may.
func stream(t *testing.T, pieces []string) (visible, reasoning string) {
	t.Helper()
	var f Filter
	var b strings.Builder
	for _, p := range pieces {
		b.WriteString(f.Write(p))
		if !heldOK(&f) {
			t.Fatalf("pieces %q: holds %q after %q", pieces, f.hold, p)
		}
	}
	b.WriteString(f.Close())
	if len(f.hold) != 0 {
		t.Fatalf("pieces %q: holds %q after Close", pieces, f.hold)
	}
	return b.String(), f.Reasoning()
}

// heldOK reports whether f holds back no more than a partial tag or fence marker, unless it waits
// for the meaning of a complete tag.
func heldOK(f *Filter) bool {
	if f.wait != waitNone || len(f.hold) < maxTagLen {
		return true
	}
	return strings.Trim(string(f.hold), " `~") == "" // a line start: indentation and a run
}

// TestFilterSplits checks the streaming invariant over every split point of every case, and over
// every pair of split points of the shorter ones.
func TestFilterSplits(t *testing.T) {
	for _, tc := range splitCases {
		t.Run(tc.name, func(t *testing.T) {
			want := parts{tc.visible, tc.reasoning}
			check := func(pieces ...string) {
				t.Helper()
				if d := cmp.Diff(want, partsOf(stream(t, pieces))); d != "" {
					t.Fatalf("pieces %q (-want +got):\n%s", pieces, d)
				}
			}
			s := tc.in
			check(s)
			check(strings.Split(s, "")...)
			for i := 0; i <= len(s); i++ {
				check(s[:i], s[i:])
				if len(s) > 48 {
					continue
				}
				for j := i; j <= len(s); j++ {
					check(s[:i], s[i:j], s[j:])
				}
			}
		})
	}
}

// TestFilterWrites pins what each Write delivers: visible text goes out at once, and only what
// may still be a tag or a fence waits.
func TestFilterWrites(t *testing.T) {
	tests := []struct {
		name      string
		pieces    []string
		writes    []string
		close     string
		reasoning string
	}{
		{"plain passes through", []string{"Hello ", "world", "."}, []string{"Hello ", "world", "."}, "", ""},
		{"tag split in two", []string{"Hello <thi", "nk>x</think> world"}, []string{"Hello ", " world"}, "", "x"},
		{"tag in pieces", []string{"<", "think", ">", "x", "</", "think>", "ok"}, []string{"", "", "", "", "", "", "ok"}, "", "x"},
		{"bracket that is no tag", []string{"a <", "b"}, []string{"a ", "<b"}, "", ""},
		{"partial tag at the end", []string{"a <thin"}, []string{"a "}, "<thin", ""},
		{"closing tag split", []string{"<think>x</th", "ink>y"}, []string{"", "y"}, "", "x"},
		{"reasoning streams", []string{"<think>a", "b", "</think>"}, []string{"", "", ""}, "", "ab"},
		{"code span", []string{"Use `", "<think>", "` tags"}, []string{"Use `", "", "<think>` tags"}, "", ""},
		{"run then tag then blank line", []string{"`a ", "<think>x", "\n\ny</think>b"}, []string{"`a ", "", "b"}, "", "x\n\ny"},
		{"fence marker", []string{"``", "`go\n", "<think>\n"}, []string{"", "```go\n", "<think>\n"}, "", ""},
		{"indentation", []string{"  ", "x"}, []string{"", "  x"}, "", ""},
		{"fence info waits for the line", []string{"```<think>", " more", "\ncode"}, []string{"```", "", "<think> more\ncode"}, "", ""},
		{"no fence after all", []string{"```<think>", "x</think>", "`", " b", "\n\nc"}, []string{"```", "", "", "", "` b\n\nc"}, "", "x"},
		{"newlines after the closing tag in later deltas", []string{"<think>a</th", "ink>", "\n", "\r\n ", "Hel", "lo\n\n", "x"},
			[]string{"", "", "", "", "Hel", "lo\n\n", "x"}, "", "a"},
		{"whitespace after the tag at the end", []string{"<think>a</think>\n", "\n"}, []string{"", ""}, "", "a"},
		{"unclosed only waits for Close", []string{"<think>", "The answer"}, []string{"", ""}, "The answer", ""},
		{"unclosed after text", []string{"Answer", "<think>", "more"}, []string{"Answer", "", ""}, "", "more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Filter
			var writes []string
			for _, p := range tt.pieces {
				writes = append(writes, f.Write(p))
			}
			got := []any{writes, f.Close(), f.Reasoning()}
			want := []any{tt.writes, tt.close, tt.reasoning}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestFilterReasoningBeforeClose(t *testing.T) {
	var f Filter
	f.Write("<think>The answer")
	if got := f.Reasoning(); got != "The answer" {
		t.Errorf("Reasoning before Close = %q, want the open block", got)
	}
	if got := f.Close(); got != "The answer" {
		t.Errorf("Close = %q, want the rescued block", got)
	}
	if got := f.Reasoning(); got != "" {
		t.Errorf("Reasoning after Close = %q, want none: the block was the answer", got)
	}
}

func TestFilterAfterClose(t *testing.T) {
	var f Filter
	f.Write("a <thi")
	if got := f.Close(); got != "<thi" {
		t.Fatalf("Close = %q", got)
	}
	if got := f.Write("b"); got != "" {
		t.Errorf("Write after Close = %q, want nothing", got)
	}
	if got := f.Close(); got != "" {
		t.Errorf("second Close = %q, want nothing", got)
	}
}

// TestFilterLongFenceRunByteByByte: a line that starts with a long run of tildes or backticks,
// streamed a byte at a time, as a model caught in a repetition loop writes it, is filtered as
// Split reads it whole. The run is held until it ends, as the fence it may open is as long as the
// run; BenchmarkFilterLongFenceRun measures the size where each Write read the held run again
// (160,000 tildes took about 17 s before, 0.2 s after).
func TestFilterLongFenceRunByteByByte(t *testing.T) {
	for _, c := range []string{"~", "`"} {
		in, run := longFenceRuns(c, 5000)
		wantV, wantR := Split(in)
		if wantV != run+"\n<think>code</think>\n"+run+"\nafter done" || wantR != "why" {
			t.Fatalf("Split of the %q fences: visible of %d bytes, reasoning %q", c, len(wantV), wantR)
		}
		got, reasoning := streamBytes(in)
		if got != wantV || reasoning != wantR {
			t.Errorf("%q: streamed visible of %d bytes (Split: %d), reasoning %q (Split: %q)",
				c, len(got), len(wantV), reasoning, wantR)
		}
	}
}

// longFenceRuns is a reply of two fences of n characters c, a block inside and one after.
func longFenceRuns(c string, n int) (in, run string) {
	run = strings.Repeat(c, n)
	return run + "\n<think>code</think>\n" + run + "\nafter <think>why</think>done", run
}

// streamBytes filters in delivered a byte at a time.
func streamBytes(in string) (visible, reasoning string) {
	var f Filter
	var b strings.Builder
	for i := 0; i < len(in); i++ {
		b.WriteString(f.Write(in[i : i+1]))
	}
	b.WriteString(f.Close())
	return b.String(), f.Reasoning()
}

func BenchmarkFilterLongFenceRun(b *testing.B) {
	in, _ := longFenceRuns("~", 160000)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		streamBytes(in)
	}
}

// More pending run lengths than the filter searches one by one (it indexes them then): the result
// still equals the reference reading, whole and in pieces.
func TestManyPendingRunLengths(t *testing.T) {
	for _, size := range []int{200, 2000, 20000} {
		text := manyRunLengths(size)
		for _, cuts := range [][]byte{nil, {1}, {3, 0, 7}, {31}} {
			checkStream(t, text, cuts)
		}
		// A run of every pending length in turn, newest first, closes them one at a time.
		var b strings.Builder
		b.WriteString(text)
		for l := 40; l > 0; l-- {
			b.WriteString(" <think>c</think> " + strings.Repeat("`", l))
		}
		checkStream(t, b.String(), []byte{5})
	}
}
