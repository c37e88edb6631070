package tokenjuice

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	set       string // "a" (the first split) or "b" (meta.json "set")
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
			ExpectRaw bool   `json:"expect_raw"`
			Set       string `json:"set"`
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
			raw: raw, expectRaw: meta.ExpectRaw, set: cmp.Or(meta.Set, "a"), facts: facts,
		})
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	return cs
}

// tally sums the figures of a set of cases.
type tally struct {
	cases, facts, kept         int
	rawChars, compactChars     int
	rawTokens, compactTokens   int
	nrRawChars, nrCompactChars int // the cases that may be compacted (expect_raw excluded)
	leftRaw, leftRawChars      int // cases that came back raw, and their characters
	savedShares                []float64
}

func (t *tally) add(c corpusCase, out Output, kept int) {
	t.cases++
	t.facts += len(c.facts)
	t.kept += kept
	t.rawChars += out.RawChars
	t.compactChars += out.CompactChars
	t.rawTokens += out.RawTokens
	t.compactTokens += out.CompactTokens
	if !c.expectRaw {
		t.nrRawChars += out.RawChars
		t.nrCompactChars += out.CompactChars
	}
	t.savedShares = append(t.savedShares, 1-float64(out.CompactChars)/float64(max(out.RawChars, 1)))
	if out.Raw {
		t.leftRaw++
		t.leftRawChars += out.RawChars
	}
}

// plus sums two tallies (their medians are not kept).
func (t *tally) plus(u *tally) *tally {
	return &tally{cases: t.cases + u.cases, facts: t.facts + u.facts, kept: t.kept + u.kept,
		rawChars: t.rawChars + u.rawChars, compactChars: t.compactChars + u.compactChars}
}

func (t *tally) saved() float64 { return 1 - float64(t.compactChars)/float64(max(t.rawChars, 1)) }

func (t *tally) String() string {
	shares := slices.Sorted(slices.Values(t.savedShares))
	median := 0.0
	if n := len(shares); n > 0 {
		median = (shares[(n-1)/2] + shares[n/2]) / 2
	}
	return fmt.Sprintf("%d cases, chars %d → %d (%.1f%% saved), est. tokens %d → %d (%.1f%% saved), "+
		"without exact reads %d → %d (%.1f%% saved), median case %.1f%% saved, left raw %d cases (%d chars), facts kept %d/%d",
		t.cases, t.rawChars, t.compactChars, 100*t.saved(), t.rawTokens, t.compactTokens,
		100*(1-float64(t.compactTokens)/float64(max(t.rawTokens, 1))), t.nrRawChars, t.nrCompactChars,
		100*(1-float64(t.nrCompactChars)/float64(max(t.nrRawChars, 1))), 100*median, t.leftRaw, t.leftRawChars, t.kept, t.facts)
}

// heldOut are the sets recorded after the rules were tuned: their figures are reported and their
// lost facts logged, but the rules are not tuned on them (they would then be development sets).
// Set C was held out until its first measurement (72/79 facts, 85.0% saved); the four causes of
// its losses were then fixed, so it is a development set now.
var heldOut = map[string]bool{}

// TestCorpus runs every recorded case: each fact survives, exact reads stay byte-identical, and
// each set shrinks by the share of characters it is held to (markers included). Set A is the
// split the rules were first tuned on; sets B and C, outputs of other tools and failure shapes
// recorded later; their figures are reported apart.
func TestCorpus(t *testing.T) {
	cs := loadCorpus(t)
	if len(cs) == 0 {
		t.Fatal("empty corpus")
	}
	sets := map[string]*tally{}
	var all tally
	var report strings.Builder
	fmt.Fprintf(&report, "%-32s %-3s %-18s %8s %8s %6s %s\n", "case", "set", "rule", "raw", "compact", "saved", "facts")
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
			switch {
			case strings.Contains(out.Text, f):
				got++
			case heldOut[c.set]:
				t.Logf("%s (held out): fact lost: %q", c.name, f)
			default:
				t.Errorf("%s: fact lost: %q", c.name, f)
			}
		}
		if sets[c.set] == nil {
			sets[c.set] = &tally{}
		}
		sets[c.set].add(c, out, got)
		all.add(c, out, got)
		fmt.Fprintf(&report, "%-32s %-3s %-18s %8d %8d %5.1f%% %d/%d\n", c.name, c.set, out.Rule, out.RawChars, out.CompactChars,
			100*(1-float64(out.CompactChars)/float64(max(out.RawChars, 1))), got, len(c.facts))
		if *dumpDir != "" {
			_ = os.MkdirAll(*dumpDir, 0o755)
			_ = os.WriteFile(filepath.Join(*dumpDir, c.name+".txt"), []byte(out.Text), 0o644)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(sets)) {
		fmt.Fprintf(&report, "set %s: %v\n", strings.ToUpper(name), sets[name])
	}
	fmt.Fprintf(&report, "all sets: %v\n", &all)
	t.Log("\n" + report.String())
	// The floors are the figures reached, less a little: every fact is kept first. Set A holds
	// exact file reads (10% of its characters) that stay whole; set B many small failures that
	// stay raw because compaction would save too little of them (Settings), and listings whose
	// entries are all named.
	want := map[string]float64{"a": 0.80, "b": 0.775, "c": 0.82}
	for name, s := range sets {
		if w, ok := want[name]; ok && s.saved() < w {
			t.Errorf("set %s saved %.1f%% of its characters, want at least %.1f%%", strings.ToUpper(name), 100*s.saved(), 100*w)
		}
	}
	if ab := sets["a"].plus(sets["b"]); ab.saved() < 0.785 {
		t.Errorf("sets A and B saved %.1f%% of their characters, want at least 78.5%%", 100*ab.saved())
	}
}

// TestHeadTailBaseline measures, on the same corpus, the plain cut the README compares with:
// the first and last 40 lines of every output, per set. It must lose facts that nodmix keeps.
func TestHeadTailBaseline(t *testing.T) {
	type cut struct{ raw, cut, facts, lost int }
	sets := map[string]*cut{}
	for _, c := range loadCorpus(t) {
		lines := strings.SplitAfter(string(c.raw), "\n")
		text := string(c.raw)
		if len(lines) > 80 {
			text = strings.Join(lines[:40], "") + strings.Join(lines[len(lines)-40:], "")
		}
		s := sets[c.set]
		if s == nil {
			s = &cut{}
			sets[c.set] = s
		}
		s.raw += utf8.RuneCount(c.raw)
		s.cut += utf8.RuneCountInString(text)
		for _, f := range c.facts {
			s.facts++
			if !strings.Contains(text, f) {
				s.lost++
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(sets)) {
		s := sets[name]
		t.Logf("set %s, first-40/last-40: chars %d → %d (%.1f%% saved), facts lost %d/%d (%.1f%%)", strings.ToUpper(name),
			s.raw, s.cut, 100*(1-float64(s.cut)/float64(s.raw)), s.lost, s.facts, 100*float64(s.lost)/float64(s.facts))
		if s.lost == 0 {
			t.Errorf("set %s: the plain cut lost no fact: the corpus no longer tells rules from cuts", name)
		}
	}
}
