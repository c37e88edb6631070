package tokenjuice

import (
	"fmt"
	"strings"
)

var (
	// buildCmdRE are the commands a build tool echoes: compiler and linker invocations and their
	// short forms (kbuild's "  CC foo.o", CMake's "[ 45%] Building C object ...").
	buildCmdRE   = lazyRE(`^\s*((/\S+/)?(cc|gcc|g\+\+|c\+\+|clang|clang\+\+|ld|ar|as|nvcc|javac|rustc|libtool|ranlib|install)\s|(CC|CXX|LD|AR|AS|GEN|CCLD|CXXLD|LINK|INSTALL|HOSTCC)\s+\S+$|\[\s*\d+%\] (Building|Linking|Generating|Built target|Scanning))`)
	buildNoiseRE = lazyRE(`^(make(\[\d+\])?: (Entering|Leaving|Nothing to be done)|\s*\d+ \| |\s+\| |-- (Detecting|Check|Looking|Performing|Found|Configuring done|Generating done|Build files))`)
	diagRE       = lazyRE(`(?i)(^|\s|:)(error|warning|fatal error|note)(\[\w+\])?:|\w\.\w{1,6}[:(]\d+|\(\d+,\d+\)|^\S+:\d+:\d+|In function|undefined reference|\*\*\*`)
)

// reduceBuild serves compilers, linters, make and friends: echoed compile commands collapse to the
// first and last of each run, directory chatter and source snippets go, and diagnostic lines
// (file:line, error, warning) are kept ahead of the ordinary lines, within a budget of their own.
func reduceBuild(d *doc) (string, bool) {
	var out []string
	run := []string{}
	flushRun := func() {
		switch n := len(run); {
		case n == 0:
		case n <= 2:
			out = append(out, run...)
		default:
			out = append(out, clip(run[0], 120), fmt.Sprintf("… %d build commands omitted …", n-2), clip(run[n-1], 120))
		}
		run = run[:0]
	}
	for _, l := range d.lines {
		switch {
		case buildCmdRE.MatchString(l) && !diagRE.MatchString(l):
			run = append(run, l)
		case buildNoiseRE.MatchString(l):
		default:
			flushRun()
			out = append(out, l)
		}
	}
	flushRun()
	if len(out) == 0 {
		return "", false
	}
	return strings.Join(selectFailure(out, sampleBudget, diagRE.Match, salientBudget*2), "\n"), true
}

// reduceGoBuild serves go build, vet, install, run and generate: with -json (Go 1.24+) the
// build-output and build-fail events are read as the text they carry, then reduced like any build;
// go vet's findings are read, with -json or without (see reduceGoVetJSON, reduceGoVetText).
func reduceGoBuild(d *doc) (string, bool) {
	lines := decodeTestEvents(d.lines, hasJSONFlag(d.src))
	if lines == nil && isGoVet(d.src) {
		if rep := decodeVetJSON(d.lines); rep != nil {
			return reduceGoVetJSON(rep)
		}
		if rep := decodeVetText(d.lines); rep != nil {
			return reduceGoVetText(rep)
		}
	}
	if lines != nil {
		dd := *d
		dd.lines = lines
		d = &dd
	}
	return reduceBuild(d)
}

var (
	rustHeaderRE   = lazyRE(`^(error|warning)(\[\w+\])?: `)
	rustLocRE      = lazyRE(`^\s*--> `)
	rustSnippetRE  = lazyRE(`^\s*\d+\s*\|`)
	rustLabelRE    = lazyRE(`^\s*\d*\s*\|[-\s|_/\\]*\^+[\s^]*([^\s^].*)$`)
	cargoChatterRE = lazyRE(`^\s*(Compiling|Checking|Downloaded|Downloading|Locking|Adding|Updating|Fresh|Blocking|Documenting|Packaging|Verifying|Installing|Installed|Replacing|Finished|Running) `)
)

// reduceCargoBuild condenses rustc diagnostics to their header, location and primary label; cargo's
// progress lines are counted, and the final summary ("could not compile ...") stays.
func reduceCargoBuild(d *doc) (string, bool) {
	var out []string
	chatter := 0
	inDiag, labeled := false, false
	for _, l := range d.lines {
		switch {
		case rustHeaderRE.MatchString(l):
			out = append(out, l)
			inDiag, labeled = true, false
		case cargoChatterRE.MatchString(l):
			if strings.Contains(l, "Finished ") || strings.Contains(l, "Running ") {
				out = append(out, strings.TrimSpace(l))
			} else {
				chatter++
			}
			inDiag = false
		case inDiag && rustLocRE.MatchString(l):
			out = append(out, l)
		case inDiag && !labeled && rustLabelRE.MatchString(l):
			out = append(out, "    ^ "+rustLabelRE.FindStringSubmatch(l)[1])
			labeled = true
		case inDiag && (l == "" || strings.HasPrefix(strings.TrimSpace(l), "|") || strings.HasPrefix(strings.TrimSpace(l), "=") ||
			strings.HasPrefix(l, "help:") || strings.HasPrefix(l, "note:") || rustLabelRE.MatchString(l) || rustSnippetRE.MatchString(l)):
		default:
			inDiag = false
			if l != "" {
				out = append(out, l)
			}
		}
	}
	if chatter > 0 {
		out = append([]string{fmt.Sprintf("(%s of cargo progress omitted)", plural(chatter, "line"))}, out...)
	}
	return strings.Join(selectFailure(out, sampleBudget, diagRE.Match, salientBudget*2), "\n"), true
}

var (
	bkNoiseRE  = lazyRE(`^#\d+ (DONE|CACHED)\b|^#\d+ (sha256:|resolve |transferring |extracting |exporting |writing image|naming to|unpacking )|^ ---> |^Removing intermediate container|^#\d+ \[internal\]|^#\d+ load (build definition|\.dockerignore|metadata)`)
	bkOutputRE = lazyRE(`^#(\d+) \d+\.\d+ `)
	bkStepRE   = lazyRE(`^#(\d+) \[`)
)

// reduceDockerBuild keeps the build steps and errors; the output of a step is kept only for the
// last step (where a failing build stopped) and where it is salient.
func reduceDockerBuild(d *doc) (string, bool) {
	last := ""
	for _, l := range d.lines {
		if m := bkStepRE.FindStringSubmatch(l); m != nil {
			last = m[1]
		}
	}
	var out []string
	for _, l := range d.lines {
		if bkNoiseRE.MatchString(l) {
			continue
		}
		if m := bkOutputRE.FindStringSubmatch(l); m != nil && m[1] != last && !isSalientString(l) {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(selectFailure(out, sampleBudget, isSalient, salientBudget), "\n"), true
}
