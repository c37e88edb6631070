package tokenjuice

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// vetFindingsBudget is what reduceBuild keeps of a failing build at most, its ordinary and its
// salient lines: every vet finding is a diagnostic, kept in full up to that.
const vetFindingsBudget = sampleBudget + salientBudget*2

// vetRelatedMax is how many related positions of a finding are shown: a finding is kept whole even
// when it alone is over the budget, so its related positions are bounded.
const vetRelatedMax = 4

// vetFinding is one diagnostic of go vet -json (x/tools' JSONDiagnostic), or the error of an
// analyzer that could not run, with the analyzer that reported it.
type vetFinding struct {
	analyzer string
	Posn     string
	Message  string
	Related  []struct{ Posn, Message string }
	Error    string `json:"error"`
}

// vetReport is what go vet -json printed: each package's findings as the lines a model reads, and
// the lines that were not vet's objects (build errors, "vet:" errors, "go: downloading").
type vetReport struct {
	pkgs             []vetPackage
	other            []string
	findings, failed int
}

type vetPackage struct {
	path     string
	findings []string
}

// isGoVet says whether s runs go vet, whose -json output is a stream of indented JSON objects that
// reduceGoBuild decodes rather than outlines.
func isGoVet(s *simple) bool {
	return s != nil && s.name() == "go" && firstOperand(s) == "vet"
}

// reduceGoVetJSON shows go vet -json's findings as "file:line:col: message (analyzer)" lines under
// a "# pkg" line, in the order of their positions, related positions indented below (see
// listVetFindings).
func reduceGoVetJSON(rep *vetReport) (string, bool) {
	summary := fmt.Sprintf("go vet: %s in %s", plural(rep.findings, "finding"), plural(len(rep.pkgs), "package"))
	if rep.findings == 0 && rep.failed == 0 {
		summary = "go vet: no findings"
	}
	if rep.failed > 0 {
		summary += fmt.Sprintf("; %s could not run", plural(rep.failed, "analyzer"))
	}
	return listVetFindings(summary, rep), true
}

// listVetFindings shows every finding of rep under its package's "# pkg" line (none for a package
// of no name) within vetFindingsBudget, and how many were left out beyond it. Similar findings are
// not folded as build lines are: each is a place to fix. The other lines are reduced like any
// build's.
func listVetFindings(summary string, rep *vetReport) string {
	out := []string{summary}
	used, restFindings, restPkgs := 0, 0, 0
	for _, p := range rep.pkgs {
		if used >= vetFindingsBudget {
			restFindings += len(p.findings)
			restPkgs++
			continue
		}
		if p.path != "" {
			out = append(out, "# "+p.path)
			used += charCount(p.path) + 3
		}
		kept := 0
		for _, f := range p.findings {
			c := charCount(f) + 1
			if kept > 0 && used+c > vetFindingsBudget {
				break
			}
			out = append(out, f)
			used += c
			kept++
		}
		if n := len(p.findings) - kept; n > 0 && p.path != "" {
			out = append(out, fmt.Sprintf("… %s of %s omitted …", plural(n, "more finding"), p.path))
			used = vetFindingsBudget
		} else if n > 0 {
			out = append(out, fmt.Sprintf("… %s omitted …", plural(n, "more finding")))
			used = vetFindingsBudget
		}
	}
	if restPkgs > 0 {
		out = append(out, fmt.Sprintf("… %s in %s omitted …", plural(restFindings, "finding"), plural(restPkgs, "more package")))
	}
	if len(rep.other) > 0 {
		if body, ok := reduceBuild(&doc{lines: rep.other}); ok {
			out = append(out, body)
		}
	}
	return strings.Join(out, "\n")
}

// vetTextFindingRE is a finding as go vet prints it without -json: "file:line:col: message", the
// file relative to the current directory. A package that does not compile is reported on lines of
// "vet: file:line:col: message", which are errors, not findings.
var vetTextFindingRE = lazyRE(`^((?:[A-Za-z]:)?[^\s:]+:\d+(?::\d+)?): \S`)

// decodeVetText reads the findings of go vet's text output, in the order of their positions (vet
// prints a package's findings by analyzer). Go 1.26 prints them bare; older Go printed a "# pkg" line ahead of a package's findings, and that line
// goes with them. Every other line (a "# pkg" line ahead of a build error, "vet:" errors, "go:
// downloading") is other. It returns nil when there is no finding.
func decodeVetText(lines []string) *vetReport {
	rep := &vetReport{}
	var cur *vetPackage
	for i, l := range lines {
		if !vetTextFindingRE.MatchString(l) {
			cur = nil
			if pkg, ok := strings.CutPrefix(l, "# "); ok && i+1 < len(lines) && vetTextFindingRE.MatchString(lines[i+1]) {
				rep.pkgs = append(rep.pkgs, vetPackage{path: pkg})
				cur = &rep.pkgs[len(rep.pkgs)-1]
				continue
			}
			rep.other = append(rep.other, l)
			continue
		}
		if cur == nil {
			rep.pkgs = append(rep.pkgs, vetPackage{})
			cur = &rep.pkgs[len(rep.pkgs)-1]
		}
		cur.findings = append(cur.findings, clip(l, maxLineChars))
		rep.findings++
	}
	if rep.findings == 0 {
		return nil
	}
	for _, p := range rep.pkgs {
		slices.SortStableFunc(p.findings, func(a, b string) int {
			fa, la, ca := splitPosn(vetTextFindingRE.FindStringSubmatch(a)[1])
			fb, lb, cb := splitPosn(vetTextFindingRE.FindStringSubmatch(b)[1])
			return cmp.Or(strings.Compare(fa, fb), cmp.Compare(la, lb), cmp.Compare(ca, cb))
		})
	}
	return rep
}

// reduceGoVetText shows go vet's text findings as vet printed them, each kept (see
// listVetFindings), and how many there are.
func reduceGoVetText(rep *vetReport) (string, bool) {
	summary := "go vet: " + plural(rep.findings, "finding")
	// Packages are counted only when every group has its header: findings of no header may
	// be of any package, one of the named ones included.
	named := !slices.ContainsFunc(rep.pkgs, func(p vetPackage) bool { return p.path == "" })
	if named {
		summary += " in " + plural(len(rep.pkgs), "package")
	}
	return listVetFindings(summary, rep), true
}

// decodeVetJSON reads the objects go vet -json prints, one per package ({"pkg": {"analyzer":
// [finding…]}}, indented as json.MarshalIndent does, "{}" for a package without findings). The
// "# pkg" line older Go printed ahead of an object goes with it. It returns nil when no object
// decodes.
func decodeVetJSON(lines []string) *vetReport {
	rep := &vetReport{}
	decoded := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "{}" {
			decoded = true
			if n := len(rep.other); n > 0 && strings.HasPrefix(rep.other[n-1], "# ") {
				rep.other = rep.other[:n-1] // go's header of a package vet found nothing in
			}
			continue
		}
		if l != "{" {
			rep.other = append(rep.other, l)
			continue
		}
		end := objectEnd(lines[i+1:])
		var tree map[string]map[string]json.RawMessage
		if end < 0 || json.Unmarshal([]byte(strings.Join(lines[i:i+end+2], "\n")), &tree) != nil {
			rep.other = append(rep.other, l)
			continue
		}
		decoded = true
		i += end + 1
		for _, pkg := range slices.Sorted(maps.Keys(tree)) {
			if n := len(rep.other); n > 0 && rep.other[n-1] == "# "+pkg {
				rep.other = rep.other[:n-1]
			}
			if p := rep.add(pkg, tree[pkg]); len(p.findings) > 0 {
				rep.pkgs = append(rep.pkgs, p)
			}
		}
	}
	if !decoded {
		return nil
	}
	return rep
}

// objectEnd is the index of the line that closes an object whose first line came before lines, or
// -1. MarshalIndent indents every line inside an object, so a line "{" or "{}" begins another:
// stopping there reads each line once however many "{" lines a text holds.
func objectEnd(lines []string) int {
	for j, l := range lines {
		switch l {
		case "}":
			return j
		case "{", "{}":
			return -1
		}
	}
	return -1
}

// add renders the results of one package's analyzers, each a list of diagnostics or an error, in
// the order of their positions (JSON keeps them by analyzer).
func (rep *vetReport) add(pkg string, results map[string]json.RawMessage) vetPackage {
	var all []vetFinding
	for _, name := range slices.Sorted(maps.Keys(results)) {
		var diags []vetFinding
		if json.Unmarshal(results[name], &diags) != nil {
			var e vetFinding
			if json.Unmarshal(results[name], &e) != nil || e.Error == "" {
				continue
			}
			diags = []vetFinding{e}
		}
		for _, d := range diags {
			if d.Error == "" && d.Posn == "" && d.Message == "" {
				continue
			}
			d.analyzer = name
			all = append(all, d)
		}
	}
	slices.SortStableFunc(all, func(a, b vetFinding) int {
		fa, la, ca := splitPosn(a.Posn)
		fb, lb, cb := splitPosn(b.Posn)
		return cmp.Or(strings.Compare(fa, fb), cmp.Compare(la, lb), cmp.Compare(ca, cb))
	})
	p := vetPackage{path: oneLine(pkg)}
	for _, f := range all {
		var s string
		if f.Error != "" {
			rep.failed++
			s = clip(fmt.Sprintf("error: %s (%s)", oneLine(f.Error), f.analyzer), maxLineChars)
		} else {
			rep.findings++
			s = clip(fmt.Sprintf("%s: %s (%s)", oneLine(f.Posn), oneLine(f.Message), f.analyzer), maxLineChars)
			for i, r := range f.Related {
				if i == vetRelatedMax {
					s += fmt.Sprintf("\n\t… %s omitted …", plural(len(f.Related)-i, "more related position"))
					break
				}
				s += "\n\t" + clip(fmt.Sprintf("%s: %s", oneLine(r.Posn), oneLine(r.Message)), maxLineChars)
			}
		}
		p.findings = append(p.findings, s)
	}
	return p
}

// oneLine is s normalized like the output around it, its lines joined: a decoded message may hold
// a newline or an escape sequence.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return s
	}
	return strings.Join(normalize([]byte(s)), " ")
}

// splitPosn splits "file:line:col" or "file:line"; a position without numbers sorts by its text.
func splitPosn(p string) (file string, line, col int) {
	file = p
	if i := strings.LastIndexByte(file, ':'); i >= 0 {
		if n, err := strconv.Atoi(file[i+1:]); err == nil {
			file, col = file[:i], n
		}
	}
	if i := strings.LastIndexByte(file, ':'); i >= 0 {
		if n, err := strconv.Atoi(file[i+1:]); err == nil {
			return file[:i], n, col
		}
	}
	return file, col, 0 // "file:line"
}
