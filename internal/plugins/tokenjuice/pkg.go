package tokenjuice

import (
	"fmt"
	"slices"
	"strings"
)

var (
	npmUpToDateRE   = lazyRE(`^up to date(, audited (\d+) packages?)? in `)
	npmNoiseRE      = lazyRE(`^(\d+ packages? (is|are) looking for funding|\s*run ` + "`npm fund`" + ` for details|npm notice|Progress: resolved|Packages: [+-]\d+|[+-]+$|\[\d/\d\] |Lockfile is up to date|Already up to date|bun install v|Resolving: |Saved lockfile|info (No lockfile|fsevents|There appears)|\s*$)`)
	npmDeprecatedRE = lazyRE(`^npm (warn|WARN) deprecated (\S+)`)
)

// reduceNodeInstall serves npm, pnpm, yarn and bun installs: funding and progress chatter goes,
// deprecation warnings are listed on one line, and what was added, audited and found vulnerable
// stays, with the errors (within a budget of their own).
func reduceNodeInstall(d *doc) (string, bool) {
	var out, deprecated []string
	for _, l := range d.lines {
		switch {
		case npmDeprecatedRE.MatchString(l):
			deprecated = append(deprecated, npmDeprecatedRE.FindStringSubmatch(l)[2])
		case npmUpToDateRE.MatchString(l):
			out = append(out, d.src.name()+" install: "+l)
		case npmNoiseRE.MatchString(l):
		default:
			out = append(out, l)
		}
	}
	if len(deprecated) > 0 {
		out = append(out, fmt.Sprintf("deprecated (%d): %s", len(deprecated), strings.Join(sample(deprecated, sampleBudget/3, "packages"), ", ")))
	}
	if len(out) == 0 {
		out = append(out, d.src.name()+" install: ok")
	}
	return strings.Join(selectFailure(out, sampleBudget, isSalient, salientBudget), "\n"), true
}

var (
	pipNoiseRE     = lazyRE(`^\s*(Collecting |Downloading |Using cached |Obtaining |Preparing metadata|Building wheel|Created wheel|Stored in directory|Installing build dependencies|Getting requirements|Installing collected packages|Attempting uninstall|Found existing installation|Uninstalling |Successfully uninstalled|Building wheels for collected|  (━|\S+ [\d.]+/[\d.]+ [kMG]B))`)
	pipSatisfiedRE = lazyRE(`^Requirement already satisfied: (\S+)`)
)

func reducePipInstall(d *doc) (string, bool) {
	var out, satisfied []string
	for _, l := range d.lines {
		switch {
		case pipSatisfiedRE.MatchString(l):
			satisfied = append(satisfied, pipSatisfiedRE.FindStringSubmatch(l)[1])
		case pipNoiseRE.MatchString(l):
		default:
			out = append(out, l)
		}
	}
	if len(satisfied) > 0 {
		out = append([]string{fmt.Sprintf("already satisfied (%d): %s", len(satisfied), strings.Join(sample(satisfied, sampleBudget/3, "packages"), ", "))}, out...)
	}
	return strings.Join(selectCondensed(out, sampleBudget, isSalient, salientBudget), "\n"), true
}

var pipRowRE = lazyRE(`^(\S+)\s+(\S+)(\s+\S.*)?$`)

// reducePipList renders the package table as "name version" items on few lines.
func reducePipList(d *doc) (string, bool) {
	var items []string
	for _, l := range d.lines {
		if strings.HasPrefix(l, "Package ") || strings.HasPrefix(l, "----") || strings.HasPrefix(l, "[notice]") {
			continue
		}
		if strings.Contains(l, "==") && !strings.Contains(l, " ") {
			items = append(items, strings.Replace(l, "==", " ", 1))
			continue
		}
		m := pipRowRE.FindStringSubmatch(l)
		if m == nil {
			return "", false
		}
		items = append(items, strings.TrimSpace(m[1]+" "+m[2]+m[3]))
	}
	return plural(len(items), "package") + ":\n" + strings.Join(sample(items, sampleBudget*2, "packages"), ", "), true
}

var (
	aptNoiseRE = lazyRE(`^(Reading package lists|Building dependency tree|Reading state information|Hit:\d+|Ign:\d+|Selecting previously unselected|\(Reading database|Preparing to unpack|Unpacking |Processing triggers|update-alternatives:|debconf: )`)
	aptListRE  = lazyRE(`^(The following (.+):|Suggested packages:|Recommended packages:)$`)
	aptActRE   = lazyRE(`^(Inst|Conf|Remv|Purg) (\S+)(?: \[[^\]]*\])? \((\S+)`)
	aptGetRE   = lazyRE(`^Get:\d+ \S+ \S+ \S+ (\S+)`)
	aptSetupRE = lazyRE(`^Setting up (\S+) \(([^)]*)\)`)
)

// reduceApt keeps apt's summary, the NEW, REMOVED and upgraded lists, errors and warnings; the
// lists of suggested and extra packages are counted, and per-package steps (Get, Unpacking,
// Setting up, simulated Inst and Conf) become one line per step listing the packages.
func reduceApt(d *doc) (string, bool) {
	var out []string
	steps := map[string][]string{}
	var stepOrder []string
	addStep := func(k, v string) {
		if steps[k] == nil {
			stepOrder = append(stepOrder, k)
		}
		steps[k] = append(steps[k], v)
	}
	list, listKeep := "", false
	insts := 0
	var listItems []string
	flushList := func() {
		if list == "" {
			return
		}
		if listKeep {
			out = append(out, list, "  "+strings.Join(listItems, " "))
		} else {
			// "The following additional packages will be installed:" → "additional packages:"
			short := strings.TrimPrefix(strings.Replace(list, " will be installed:", ":", 1), "The following ")
			out = append(out, fmt.Sprintf("%s %d (omitted)", short, len(listItems)))
		}
		list, listItems = "", nil
	}
	for _, l := range d.lines {
		if list != "" && strings.HasPrefix(l, "  ") {
			listItems = append(listItems, strings.Fields(l)...)
			continue
		}
		flushList()
		switch {
		case aptListRE.MatchString(l):
			list = l
			listKeep = strings.Contains(l, "NEW") || strings.Contains(l, "REMOVED") || strings.Contains(l, "upgraded") || strings.Contains(l, "held back")
		case aptActRE.MatchString(l):
			m := aptActRE.FindStringSubmatch(l)
			if m[1] == "Conf" {
				addStep("Conf", m[2])
			} else {
				insts++
				out = append(out, m[1]+" "+m[2]+" ("+m[3]+")")
			}
		case aptGetRE.MatchString(l):
			addStep("Get", aptGetRE.FindStringSubmatch(l)[1])
		case aptSetupRE.MatchString(l):
			m := aptSetupRE.FindStringSubmatch(l)
			addStep("Setting up", m[1]+" "+m[2])
		case aptNoiseRE.MatchString(l):
		default:
			out = append(out, l)
		}
	}
	flushList()
	if insts > 0 { // a simulation: the Inst lines repeat the NEW list
		for i, l := range out {
			if strings.HasPrefix(l, "The following NEW packages") && i+1 < len(out) {
				out = append(out[:i], out[i+2:]...)
				break
			}
		}
	}
	for _, k := range stepOrder {
		if k == "Conf" && len(steps[k]) == insts {
			out = append(out, fmt.Sprintf("Conf: the %d packages above", insts))
			continue
		}
		out = append(out, fmt.Sprintf("%s (%d): %s", k, len(steps[k]), strings.Join(sample(steps[k], sampleBudget/3, "packages"), ", ")))
	}
	return strings.Join(selectCondensed(out, sampleBudget, isSalient, salientBudget), "\n"), true
}

var (
	goGetRE      = lazyRE(`^# get (\S+?)(\.mod|\.info|\.zip|/@v/list|/@latest)?(: (.+))?$`)
	goDurRE      = lazyRE(`\s*\([\d.]+m?s\)$`)
	goDownloadRE = lazyRE(`^go: (downloading|added|upgraded|finding) (.+)$`)
)

// reduceGoMod groups `go mod download -x` fetches by module version and go's "downloading" lines
// into one line each.
func reduceGoMod(d *doc) (string, bool) {
	type fetch struct {
		kinds  []string
		status string
	}
	var order []string
	fetches := map[string]*fetch{}
	verbs := map[string][]string{}
	var verbOrder []string
	var out []string
	for _, l := range d.lines {
		if m := goGetRE.FindStringSubmatch(l); m != nil {
			f := fetches[m[1]]
			if f == nil {
				f = &fetch{}
				fetches[m[1]] = f
				order = append(order, m[1])
			}
			if m[4] != "" {
				f.status = strings.TrimSpace(goDurRE.ReplaceAllString(m[4], ""))
				if m[2] != "" && !slices.Contains(f.kinds, m[2]) {
					f.kinds = append(f.kinds, m[2])
				}
			}
			continue
		}
		if m := goDownloadRE.FindStringSubmatch(l); m != nil {
			if verbs[m[1]] == nil {
				verbOrder = append(verbOrder, m[1])
			}
			verbs[m[1]] = append(verbs[m[1]], m[2])
			continue
		}
		out = append(out, l)
	}
	if len(order) > 0 {
		host := ""
		paths := make([]string, len(order))
		results := make([]string, len(order))
		tally := map[string]int{}
		common := ""
		for i, u := range order {
			f := fetches[u]
			paths[i] = u
			if j := strings.Index(u, "://"); j >= 0 {
				if k := strings.IndexByte(u[j+3:], '/'); k >= 0 {
					host = u[:j+3+k+1]
					paths[i] = u[j+3+k+1:]
				}
			}
			results[i] = strings.Join(f.kinds, " ") + ": " + f.status
			if tally[results[i]]++; tally[results[i]] > tally[common] {
				common = results[i]
			}
		}
		// The result most fetches share is said once; the others are noted on their line.
		items := make([]string, len(order))
		for i := range order {
			items[i] = paths[i]
			if results[i] != common || tally[common] < 2 {
				items[i] += " (" + results[i] + ")"
			}
		}
		head := fmt.Sprintf("fetched %s from %s", plural(len(order), "module version"), host)
		if tally[common] >= 2 {
			head += " (" + common + " unless noted)"
		}
		out = append([]string{head + ":"}, append(sample(items, sampleBudget, "modules"), out...)...)
	}
	for _, v := range verbOrder {
		out = append(out, fmt.Sprintf("go: %s (%d): %s", v, len(verbs[v]), strings.Join(sample(verbs[v], sampleBudget/2, "modules"), ", ")))
	}
	return strings.Join(selectCondensed(out, sampleBudget, isSalient, salientBudget), "\n"), true
}

var npmTreeRE = lazyRE(`^([│ ]*)([├└]─[┬─] |[|` + "`" + `]-[-+] )(.*)$`)

// reduceNpmLs keeps the root and the direct dependencies of `npm ls --all` and counts what each
// brings in below it.
func reduceNpmLs(d *doc) (string, bool) {
	var out []string
	sub := -1 // index in out of the current direct dependency
	counts := map[int]int{}
	for _, l := range d.lines {
		m := npmTreeRE.FindStringSubmatch(l)
		if m == nil {
			out = append(out, l)
			sub = -1
			continue
		}
		if depth := len([]rune(m[1])) / 2; depth == 0 {
			out = append(out, m[2]+m[3])
			sub = len(out) - 1
		} else if sub >= 0 {
			counts[sub]++
		}
	}
	for k, n := range counts {
		out[k] += fmt.Sprintf(" (+%d below)", n)
	}
	return strings.Join(selectLines(out, sampleBudget, isSalient, salientBudget), "\n"), true
}
