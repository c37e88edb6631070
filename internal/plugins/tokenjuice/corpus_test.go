package tokenjuice

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

const corpusDir = "../../../testdata/bench/compact"

var dumpDir = flag.String("corpus.dump", "", "write each case's compacted text to this directory")

type corpusCase struct {
	name      string
	cmd       string
	exit      int
	raw       []byte
	expectRaw bool
	facts     []string
}

func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	var cs []corpusCase
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(corpusDir, e.Name())
		read := func(name string) []byte {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("corpus %s: %v", e.Name(), err)
			}
			return b
		}
		stdout, stderr := read("stdout.txt"), read("stderr.txt")
		raw := append([]byte(nil), stdout...)
		if len(stdout) > 0 && stdout[len(stdout)-1] != '\n' && len(stderr) > 0 {
			raw = append(raw, '\n')
		}
		raw = append(raw, stderr...)
		exit, err := strconv.Atoi(strings.TrimSpace(string(read("exit_code.txt"))))
		if err != nil {
			t.Fatalf("corpus %s: exit code: %v", e.Name(), err)
		}
		var meta struct {
			ExpectRaw bool `json:"expect_raw"`
		}
		if err := json.Unmarshal(read("meta.json"), &meta); err != nil {
			t.Fatalf("corpus %s: meta: %v", e.Name(), err)
		}
		var facts []string
		for _, f := range strings.Split(string(read("facts.txt")), "\n") {
			if f != "" {
				facts = append(facts, f)
			}
		}
		cs = append(cs, corpusCase{
			name: e.Name(), cmd: strings.TrimRight(string(read("cmd.txt")), "\n"), exit: exit,
			raw: raw, expectRaw: meta.ExpectRaw, facts: facts,
		})
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	return cs
}

// TestCorpus runs every recorded case: each fact survives, exact reads stay byte-identical, and
// the whole set shrinks by at least 80% of its characters (markers included).
func TestCorpus(t *testing.T) {
	cs := loadCorpus(t)
	if len(cs) == 0 {
		t.Fatal("empty corpus")
	}
	var rawChars, compactChars, rawTokens, compactTokens, facts, kept int
	var nrRawChars, nrCompactChars int // the cases that may be compacted
	var report strings.Builder
	fmt.Fprintf(&report, "%-28s %-18s %8s %8s %6s %s\n", "case", "rule", "raw", "compact", "saved", "facts")
	for _, c := range cs {
		out := Compact(Input{Command: c.cmd, ExitCode: c.exit, Output: c.raw, Handle: "tj_0123456789ab"})
		if out.Err != nil {
			t.Errorf("%s: rule error: %v", c.name, out.Err)
		}
		if c.expectRaw && (!out.Raw || out.Text != string(c.raw)) {
			t.Errorf("%s: an exact file read must come back byte-identical (raw=%v rule=%s)", c.name, out.Raw, out.Rule)
		}
		if out.Raw && out.Text != string(c.raw) {
			t.Errorf("%s: Raw is set but the text differs from the output", c.name)
		}
		got := 0
		for _, f := range c.facts {
			if strings.Contains(out.Text, f) {
				got++
			} else {
				t.Errorf("%s: fact lost: %q", c.name, f)
			}
		}
		facts += len(c.facts)
		kept += got
		rawChars += out.RawChars
		compactChars += out.CompactChars
		rawTokens += out.RawTokens
		compactTokens += out.CompactTokens
		if !c.expectRaw {
			nrRawChars += out.RawChars
			nrCompactChars += out.CompactChars
		}
		fmt.Fprintf(&report, "%-28s %-18s %8d %8d %5.1f%% %d/%d\n", c.name, out.Rule, out.RawChars, out.CompactChars,
			100*(1-float64(out.CompactChars)/float64(max(out.RawChars, 1))), got, len(c.facts))
		if *dumpDir != "" {
			_ = os.MkdirAll(*dumpDir, 0o755)
			_ = os.WriteFile(filepath.Join(*dumpDir, c.name+".txt"), []byte(out.Text), 0o644)
		}
	}
	savings := 1 - float64(compactChars)/float64(rawChars)
	fmt.Fprintf(&report, "whole set: %d cases, chars %d → %d (%.1f%% saved), est. tokens %d → %d (%.1f%% saved), facts kept %d/%d\n",
		len(cs), rawChars, compactChars, 100*savings, rawTokens, compactTokens,
		100*(1-float64(compactTokens)/float64(rawTokens)), kept, facts)
	fmt.Fprintf(&report, "compactable cases only (expect_raw excluded): chars %d → %d (%.1f%% saved)\n",
		nrRawChars, nrCompactChars, 100*(1-float64(nrCompactChars)/float64(nrRawChars)))
	t.Log("\n" + report.String())
	if savings < 0.80 {
		t.Errorf("saved %.1f%% of all characters, want at least 80%%", 100*savings)
	}
}

// TestHeadTailBaseline measures, on the same corpus, the plain cut the README compares with:
// the first and last 40 lines of every output. It must lose facts that nodmix keeps.
func TestHeadTailBaseline(t *testing.T) {
	var raw, cut, facts, lost int
	for _, c := range loadCorpus(t) {
		lines := strings.SplitAfter(string(c.raw), "\n")
		text := string(c.raw)
		if len(lines) > 80 {
			text = strings.Join(lines[:40], "") + strings.Join(lines[len(lines)-40:], "")
		}
		raw += utf8.RuneCount(c.raw)
		cut += utf8.RuneCountInString(text)
		for _, f := range c.facts {
			facts++
			if !strings.Contains(text, f) {
				lost++
			}
		}
	}
	t.Logf("first-40/last-40: chars %d → %d (%.1f%% saved), facts lost %d/%d (%.1f%%)",
		raw, cut, 100*(1-float64(cut)/float64(raw)), lost, facts, 100*float64(lost)/float64(facts))
	if lost == 0 {
		t.Error("the plain cut lost no fact: the corpus no longer tells rules from cuts")
	}
}
