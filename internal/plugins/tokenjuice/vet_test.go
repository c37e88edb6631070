package tokenjuice

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// vetObject renders one package's go vet -json object as json.MarshalIndent does.
func vetObject(pkg string, analyzers ...string) string {
	return "{\n\t\"" + pkg + "\": {\n" + strings.Join(analyzers, ",\n") + "\n\t}\n}"
}

func vetAnalyzer(name string, diags ...string) string {
	return "\t\t\"" + name + "\": [\n" + strings.Join(diags, ",\n") + "\n\t\t]"
}

func vetDiag(posn, msg string) string {
	return fmt.Sprintf("\t\t\t{\n\t\t\t\t\"posn\": %q,\n\t\t\t\t\"end\": %q,\n\t\t\t\t\"message\": %q\n\t\t\t}", posn, posn, msg)
}

// TestReduceGoVetJSON: the objects go vet -json prints read as findings under their package, in
// the order of their positions, with what older Go and a failing build print around them.
func TestReduceGoVetJSON(t *testing.T) {
	printfA := vetDiag("/src/m/a/a.go:9:2", "fmt.Printf format %d has arg s of wrong type string")
	printfB := vetDiag("/src/m/a/a.go:12:2", "fmt.Println arg list ends with redundant newline")
	shift := vetDiag("/src/m/a/a.go:10:9", "v (8 bits) too small for shift of 9")
	for _, tc := range []struct {
		name string
		in   string
		want string // "" when the output is not go vet's objects
	}{{
		name: "two packages and a clean one",
		in: "{}\n" + vetObject("example.com/m/a", vetAnalyzer("printf", printfA, printfB), vetAnalyzer("shift", shift)) + "\n" +
			vetObject("example.com/m/b", vetAnalyzer("copylocks", vetDiag("/src/m/b/b.go:4:1", "Get passes lock by value"))),
		want: "go vet: 4 findings in 2 packages\n# example.com/m/a\n" +
			"/src/m/a/a.go:9:2: fmt.Printf format %d has arg s of wrong type string (printf)\n" +
			"/src/m/a/a.go:10:9: v (8 bits) too small for shift of 9 (shift)\n" +
			"/src/m/a/a.go:12:2: fmt.Println arg list ends with redundant newline (printf)\n" +
			"# example.com/m/b\n/src/m/b/b.go:4:1: Get passes lock by value (copylocks)",
	}, {
		// older Go wrote the objects to stderr, each after a "# pkg" line
		name: "headers ahead of the objects",
		in:   "# example.com/m/c\n{}\n# example.com/m/a\n" + vetObject("example.com/m/a", vetAnalyzer("printf", printfA)),
		want: "go vet: 1 finding in 1 package\n# example.com/m/a\n/src/m/a/a.go:9:2: fmt.Printf format %d has arg s of wrong type string (printf)",
	}, {
		name: "a package that does not compile",
		in: "{}\n# example.com/m/broken\nvet: broken/b.go:3:23: cannot use \"x\" (untyped string constant) as int value in return statement\n" +
			vetObject("example.com/m/a", vetAnalyzer("printf", printfA)),
		want: "go vet: 1 finding in 1 package\n# example.com/m/a\n/src/m/a/a.go:9:2: fmt.Printf format %d has arg s of wrong type string (printf)\n" +
			"# example.com/m/broken\nvet: broken/b.go:3:23: cannot use \"x\" (untyped string constant) as int value in return statement",
	}, {
		name: "an analyzer that failed and a related position",
		in: vetObject("example.com/m/a", "\t\t\"buildtag\": {\n\t\t\t\"error\": \"reading a.go: permission denied\"\n\t\t}",
			vetAnalyzer("loopclosure", "\t\t\t{\n\t\t\t\t\"posn\": \"a.go:5:3\",\n\t\t\t\t\"end\": \"a.go:5:4\",\n\t\t\t\t\"message\": \"loop variable v captured\\nby func literal\",\n"+
				"\t\t\t\t\"related\": [\n\t\t\t\t\t{\n\t\t\t\t\t\t\"posn\": \"a.go:3:6\",\n\t\t\t\t\t\t\"end\": \"a.go:3:7\",\n\t\t\t\t\t\t\"message\": \"v declared here\"\n\t\t\t\t\t}\n\t\t\t\t]\n\t\t\t}")),
		want: "go vet: 1 finding in 1 package; 1 analyzer could not run\n# example.com/m/a\n" +
			"error: reading a.go: permission denied (buildtag)\na.go:5:3: loop variable v captured by func literal (loopclosure)\n\ta.go:3:6: v declared here",
	}, {
		name: "many related positions",
		in: vetObject("example.com/m/a", vetAnalyzer("copylocks", "\t\t\t{\n\t\t\t\t\"posn\": \"a.go:9:1\",\n\t\t\t\t\"end\": \"a.go:9:2\",\n\t\t\t\t\"message\": \"m\",\n"+
			"\t\t\t\t\"related\": ["+strings.Repeat("{\"posn\": \"a.go:1:1\", \"end\": \"a.go:1:2\", \"message\": \"r\"},", 6)+"{\"posn\": \"a.go:2:1\", \"message\": \"last\"}]\n\t\t\t}")),
		want: "go vet: 1 finding in 1 package\n# example.com/m/a\na.go:9:1: m (copylocks)\n" + strings.Repeat("\ta.go:1:1: r\n", 4) + "\t… 3 more related positions omitted …",
	}, {
		name: "only clean packages",
		in:   "{}\n{}\n",
		want: "go vet: no findings",
	}, {
		name: "plain go vet output",
		in:   "# example.com/m/a\na/a.go:9:2: fmt.Printf format %d has arg s of wrong type string\n",
	}, {
		name: "an object that is not vet's",
		in:   "{\n\t\"example.com/m/a\": [1, 2]\n}\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rep := decodeVetJSON(normalize([]byte(tc.in)))
			got := ""
			if rep != nil {
				got, _ = reduceGoVetJSON(rep)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestGoVetJSONKeepsEveryFinding: go vet -json's objects were outlined as a JSON sequence, whose
// middle findings were omitted; findings that differ only in their line are each a place to fix,
// not a run to fold; beyond the budget the text says how many findings it left out.
func TestGoVetJSONKeepsEveryFinding(t *testing.T) {
	gen := func(pkgs, n int) string {
		var objs []string
		for p := range pkgs {
			var diags []string
			for i := range n {
				diags = append(diags, vetDiag(fmt.Sprintf("/src/m/p%d/f.go:%d:2", p, i+1), "non-constant format string in call to fmt.Errorf"))
			}
			objs = append(objs, vetObject(fmt.Sprintf("example.com/m/p%d", p), vetAnalyzer("printf", diags...)))
		}
		return strings.Join(objs, "\n") + "\n"
	}
	out := Compact(Input{Command: "go vet -json ./...", Output: []byte(gen(2, 12))})
	if out.Raw || out.Rule != "build/go" {
		t.Fatalf("rule %s, raw %v (%s), want build/go compacted:\n%s", out.Rule, out.Raw, out.Reason, out.Text)
	}
	for p := range 2 {
		for i := range 12 {
			if want := fmt.Sprintf("/src/m/p%d/f.go:%d:2: non-constant format string in call to fmt.Errorf (printf)\n", p, i+1); !strings.Contains(out.Text, want) {
				t.Errorf("finding lost: %q", want)
			}
		}
	}
	if strings.Contains(out.Text, "omitted") {
		t.Errorf("findings within budget were left out:\n%s", out.Text)
	}

	out = Compact(Input{Command: "go vet -json ./...", Output: []byte(gen(3, 200))})
	for _, want := range []string{"go vet: 600 findings in 3 packages\n", "/src/m/p0/f.go:1:2: ", "more findings of example.com/m/p0 omitted …\n",
		"… 400 findings in 2 more packages omitted …\n"} {
		if !strings.Contains(out.Text, want) {
			t.Errorf("%q missing:\n%s", want, out.Text)
		}
	}
	if out.CompactChars > vetFindingsBudget+400 {
		t.Errorf("%d chars, over the budget of %d", out.CompactChars, vetFindingsBudget)
	}
}

// TestGoVetJSONLinearInBraces: text of many "{" lines and one "}" at its end is not vet's objects;
// each "{" used to be joined with every line up to that "}" and parsed, so that the allocation grew
// with the square of the output (80 kB took seconds; this 16 kB allocated 4,400 bytes a byte, 150
// now, most of it what any reducer spends on so many one-character lines).
func TestGoVetJSONLinearInBraces(t *testing.T) {
	in := Input{Command: "go vet -json ./...", Output: []byte(strings.Repeat("{\nx\n", 4000) + "}\n")}
	Compact(in) // the expressions compile on first use
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out := Compact(in)
	runtime.ReadMemStats(&after)
	if out.Rule != "build/go" {
		t.Errorf("rule %s, want build/go", out.Rule)
	}
	if perByte := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(in.Output)); perByte > 1000 {
		t.Errorf("%.0f bytes allocated per byte of input", perByte)
	}
}

// TestReduceGoVetText: go vet's text findings read as findings in the order of their positions,
// under the "# pkg" line older Go printed ahead of them; a "# pkg" line ahead of a package that
// does not compile, and its "vet:" errors, are other lines, reduced like a build's.
func TestReduceGoVetText(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want string // "" when the output holds no finding
	}{{
		name: "bare findings as Go 1.26 prints them",
		in:   "a/a.go:12:2: fmt.Println arg list ends with redundant newline\na/a.go:9:2: fmt.Printf format %d has arg s of wrong type string\nb/b.go:4:1: Get passes lock by value\n",
		want: "go vet: 3 findings\na/a.go:9:2: fmt.Printf format %d has arg s of wrong type string\n" +
			"a/a.go:12:2: fmt.Println arg list ends with redundant newline\nb/b.go:4:1: Get passes lock by value",
	}, {
		name: "headers ahead of the findings",
		in:   "# example.com/m/a\na/a.go:9:2: printf finding\na/a.go:3:1: other finding\n# example.com/m/b\nb/b.go:4:1: copylocks finding\n",
		want: "go vet: 3 findings in 2 packages\n# example.com/m/a\na/a.go:3:1: other finding\na/a.go:9:2: printf finding\n# example.com/m/b\nb/b.go:4:1: copylocks finding",
	}, {
		// The second group's findings follow a line that is not a finding and no header: they
		// are of no known package, so the packages are not counted.
		name: "a headed group, then findings of no header",
		in:   "# example.com/m/a\na/a.go:9:2: printf finding\ngo: downloading example.com/x v1.0.0\nb/b.go:4:1: copylocks finding\n",
		want: "go vet: 2 findings\n# example.com/m/a\na/a.go:9:2: printf finding\nb/b.go:4:1: copylocks finding\ngo: downloading example.com/x v1.0.0",
	}, {
		name: "findings of no header, then a headed group",
		in:   "a/a.go:9:2: printf finding\n# example.com/m/b\nb/b.go:4:1: copylocks finding\n",
		want: "go vet: 2 findings\na/a.go:9:2: printf finding\n# example.com/m/b\nb/b.go:4:1: copylocks finding",
	}, {
		name: "a package that does not compile",
		in:   "a/a.go:9:2: printf finding\n# example.com/m/broken\n# [example.com/m/broken]\nvet: broken/b.go:2:12: declared and not used: x\n",
		want: "go vet: 1 finding\na/a.go:9:2: printf finding\n# example.com/m/broken\n# [example.com/m/broken]\nvet: broken/b.go:2:12: declared and not used: x",
	}, {
		name: "a Windows path and a position without a column",
		in:   `C:\src\m\a.go:7: finding one` + "\n" + `C:\src\m\a.go:5:3: finding two` + "\n",
		want: "go vet: 2 findings\n" + `C:\src\m\a.go:5:3: finding two` + "\n" + `C:\src\m\a.go:7: finding one`,
	}, {
		name: "only a build error",
		in:   "# example.com/m/broken\nvet: broken/b.go:2:12: declared and not used: x\n",
	}, {
		name: "go vet -json's objects",
		in:   vetObject("example.com/m/a", vetAnalyzer("printf", vetDiag("/src/m/a/a.go:9:2", "m"))),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rep := decodeVetText(normalize([]byte(tc.in)))
			got := ""
			if rep != nil {
				got, _ = reduceGoVetText(rep)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestGoVetTextKeepsEveryFinding: findings of go vet's text output that differ only in their line
// were folded as similar lines to the first and the last; each is a place to fix. Beyond the
// budget the text says how many findings it left out.
func TestGoVetTextKeepsEveryFinding(t *testing.T) {
	gen := func(pkgs, n int) string {
		var b strings.Builder
		for p := range pkgs {
			for i := range n {
				fmt.Fprintf(&b, "p%d/f.go:%d:2: non-constant format string in call to fmt.Errorf\n", p, i+1)
			}
		}
		return b.String()
	}
	// Within the budget every finding is kept, which saves too little to compact.
	out := Compact(Input{Command: "go vet ./...", ExitCode: 1, Output: []byte(gen(2, 24))})
	if out.Rule != "build/go" {
		t.Errorf("rule %s, want build/go", out.Rule)
	}
	for p := range 2 {
		for i := range 24 {
			if want := fmt.Sprintf("p%d/f.go:%d:2: non-constant format string in call to fmt.Errorf\n", p, i+1); !strings.Contains(out.Text, want) {
				t.Errorf("finding lost: %q", want)
			}
		}
	}
	if strings.Contains(out.Text, "omitted") {
		t.Errorf("findings within budget were left out:\n%s", out.Text)
	}

	out = Compact(Input{Command: "go vet ./...", ExitCode: 1, Output: []byte(gen(3, 200))})
	kept := strings.Count(out.Text, ": non-constant format string")
	for _, want := range []string{"go vet: 600 findings\n", "p0/f.go:1:2: ", fmt.Sprintf("\n… %d more findings omitted …\n", 600-kept)} {
		if !strings.Contains(out.Text, want) {
			t.Errorf("%q missing:\n%s", want, out.Text)
		}
	}
	if out.CompactChars > vetFindingsBudget+400 {
		t.Errorf("%d chars, over the budget of %d", out.CompactChars, vetFindingsBudget)
	}
}
