package tokenjuice

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noiseFragments are pieces of the lines testNoiseRE and pytestDotsRE tell apart, and of the
// lines just beside them, joined at random by TestTestNoiseMatchesRE.
var noiseFragments = []string{"", " ", "  ", "\t", "\r", "\f", "\v", "\u00a0", "_", "_ ", "=", "==", " test session starts ",
	"✓", "√", "✔", "PASS", "PASSED", " PASSED", "ok", "ok ", "test ", " ... ok", "...", "::", ":", "a", "tests/t.py", "t.py",
	"platform ", "rootdir:", "plugins:", "cachedir:", "configfile:", "collecting", "collected ", "12", "0", " item", " items",
	"s", "Compiling ", "Finished ", "Running ", "Downloaded ", "Downloading ", "Fresh ", "Blocking ", ".", "x", "X", "F", "E",
	"[", "]", "%", "[ 42%]", "\xff", "é"}

// TestTestNoiseMatchesRE: isTestNoise and isPytestDots, which skip the regexps where they cannot
// match, decide every line as the regexps do: random joins of the pieces those tell apart, and
// every line of the recorded outputs.
func TestTestNoiseMatchesRE(t *testing.T) {
	var lines []string
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		var b strings.Builder
		for range r.IntN(6) + 1 {
			b.WriteString(noiseFragments[r.IntN(len(noiseFragments))])
		}
		lines = append(lines, b.String())
	}
	files, _ := filepath.Glob("testdata/golden/*/output.txt")
	corpus, _ := filepath.Glob(filepath.Join(corpusDir, "*", "output.txt"))
	for _, f := range append(files, corpus...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, normalize(b)...)
	}
	for _, l := range lines {
		checkNoiseLine(t, l)
	}
}

func checkNoiseLine(t *testing.T, l string) {
	t.Helper()
	if got, want := isTestNoise(l), testNoiseRE.MatchString(l); got != want {
		t.Errorf("isTestNoise(%q) = %v, testNoiseRE says %v", l, got, want)
	}
	tr := strings.TrimSpace(l)
	if got, want := isPytestDots(tr), pytestDotsRE.MatchString(tr); got != want {
		t.Errorf("isPytestDots(%q) = %v, pytestDotsRE says %v", tr, got, want)
	}
}

func FuzzTestNoise(f *testing.F) {
	for _, s := range []string{"tests/a.py::test_b PASSED", "  x::y PASSED [ 50%]", "::: PASSED", "a::: PASSED", "collected 3 items",
		"==== test session starts ====", "_ _ _", "tests/a.py ..sx [ 42%]", "test foo ... ok", "ok 1 - x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, l string) {
		if strings.Contains(l, "\n") {
			return // reducers see one line at a time
		}
		checkNoiseLine(t, l)
	})
}
