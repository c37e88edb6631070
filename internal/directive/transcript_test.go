package directive

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/thinking"
)

var update = flag.Bool("update", false, "rewrite testdata/transcript.golden")

// TestTranscript plays one session's messages through Parse, Apply, Check and Resolve and
// compares what the user and the model would see with testdata/transcript.golden (-update
// rewrites it). The model switches once, to show a stored level remapped.
func TestTranscript(t *testing.T) {
	xhighModel := Layers{Model: "openai/gpt-x", Profile: profile("off minimal low medium high xhigh", thinking.Medium),
		Global: Defaults{Verbose: "on"}}
	smallModel := Layers{Model: "local/small", Profile: profile("off low medium high", thinking.Low)}
	msgs := []struct {
		switchTo *Layers
		text     string
	}{
		{text: "/think"},
		{text: "/think x_high"},
		{text: "summarise the thread"},
		{text: "/t low please, quickly"},
		{text: "what does /v mean?"},
		{text: "/fast on\n/v full"},
		{text: "/status"},
		{switchTo: &smallModel, text: "/think"},
		{text: "/think extra high"},
		{text: "/think inherit and answer"},
		{text: "/think default /fast reset"},
		{text: "/reason stream\n/trace raw"},
		{text: "/status"},
	}
	var b strings.Builder
	l := xhighModel
	session := map[string]string{}
	for _, m := range msgs {
		if m.switchTo != nil {
			l = *m.switchTo
			fmt.Fprintf(&b, "== model %s\n", l.Model)
			l.Session = session
			if n, ok := RemapNotice(l); ok {
				fmt.Fprintf(&b, "notice  %s\n", n)
			}
		}
		l.Session = session
		p := Parse(m.text)
		fmt.Fprintf(&b, "> %q\n", m.text)
		for _, d := range p.Directives {
			fmt.Fprintf(&b, "  directive %+v\n", d)
		}
		if p.Only {
			res := Apply(p.Directives, l)
			for _, line := range strings.Split(res.Reply, "\n") {
				fmt.Fprintf(&b, "  reply   %s\n", line)
			}
			session = res.Overrides
			fmt.Fprintf(&b, "  session %s changed=%v events=%q\n", fmtMap(session), res.Changed, res.Events)
			continue
		}
		if reply, ok := Check(p.Directives, l); !ok {
			fmt.Fprintf(&b, "  refused %s\n", reply)
			continue
		}
		l.Inline = p.Directives
		r := Resolve(l)
		l.Inline = nil
		fmt.Fprintf(&b, "  model sees %q\n  turn think=%s(%s) fast=%s(%s) verbose=%s(%s) trace=%s reasoning=%s\n",
			p.Body, r.Think, r.Sources.Think, r.Fast, r.Sources.Fast, r.Verbose, r.Sources.Verbose, r.Trace, r.Reasoning)
	}
	got := b.String()
	const path = "testdata/transcript.golden"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("transcript differs from %s (-want +got):\n%s", path, d)
	}
}

func fmtMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return "{" + strings.Join(parts, " ") + "}"
}
