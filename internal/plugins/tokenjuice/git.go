package tokenjuice

import (
	"fmt"
	"strings"
	"time"
)

// ---- git status ----

var (
	statusEntryRE = lazyRE(`^\s+(modified|new file|deleted|renamed|copied|typechange|both modified|both added|both deleted|added by us|added by them|deleted by us|deleted by them):\s+(.+)$`)
	statusHintRE  = lazyRE(`^\s*\((use|fix|all conflicts|see) .*\)\s*$`)
	porcelainRE   = lazyRE(`^([ MADRCUT?!]{2}) (.+)$`)
	aheadRE       = lazyRE(`^Your branch is (ahead of|behind) '([^']+)' by (\d+) commits?`)
	divergedRE    = lazyRE(`^and have (\d+) and (\d+) different commits each`)
)

var statusCodes = map[string]string{
	"modified": "M", "new file": "A", "deleted": "D", "renamed": "R", "copied": "C", "typechange": "T",
	"both modified": "UU", "both added": "AA", "both deleted": "DD", "added by us": "AU",
	"added by them": "UA", "deleted by us": "DU", "deleted by them": "UD",
}

var statusSections = map[string]string{
	"Changes to be committed:":       "staged:",
	"Changes not staged for commit:": "unstaged:",
	"Untracked files:":               "untracked:",
	"Unmerged paths:":                "unmerged:",
	"Ignored files:":                 "ignored:",
}

// reduceGitStatus rewrites long-format status into one line per path under short section names,
// without git's hints. Entries are matched whether git indents them with a tab or spaces, and a
// hint is never taken for a path (both were bugs of the reference).
func reduceGitStatus(d *doc) (string, bool) {
	if allPorcelain(d.lines) {
		if linesChars(d.lines) <= sampleBudget {
			return passthrough, true // already terse
		}
		return strings.Join(keepPaths(d.lines), "\n"), true
	}
	var out []string
	section := ""
	for _, l := range d.lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			continue
		case strings.HasPrefix(l, "On branch "):
			out = append(out, "branch "+strings.TrimPrefix(l, "On branch "))
		case strings.HasPrefix(l, "HEAD detached "):
			out = append(out, l)
		case aheadRE.MatchString(l):
			// "Your branch is ahead of 'origin/main' by 2 commits." loses only its first words.
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(l, "Your branch is "), "."))
		case divergedRE.MatchString(l):
			m := divergedRE.FindStringSubmatch(l)
			out = append(out, fmt.Sprintf("diverged: %s and %s different commits", m[1], m[2]))
		case strings.HasPrefix(l, "Your branch is up to date"), strings.HasPrefix(l, "Your branch and "),
			strings.HasPrefix(l, "  (use "), strings.HasPrefix(l, "no changes added to commit"),
			strings.HasPrefix(l, "nothing added to commit"):
		case statusSections[t] != "":
			section = statusSections[t]
			out = append(out, section)
		case statusHintRE.MatchString(l):
		case strings.HasPrefix(t, "nothing to commit"):
			out = append(out, "working tree clean")
		case statusEntryRE.MatchString(l):
			m := statusEntryRE.FindStringSubmatch(l)
			out = append(out, statusCodes[m[1]]+" "+m[2])
		case section != "" && (strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "  ")):
			out = append(out, t)
		default:
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return "", false
	}
	return strings.Join(keepPaths(factorCodes(out)), "\n"), true
}

// statusPathsBudget bounds the characters of a status shown whole. A status is a list of paths,
// each of which the caller may act on, so none is dropped below it; a larger one (a build tree
// left untracked) keeps its headers and a sample of each section, says how many paths it left
// out, and points to the full output.
const statusPathsBudget = 12000

// keepPaths returns a status's lines whole when they fit statusPathsBudget; otherwise each
// section keeps its header and a head and tail of its paths within its share of the budget.
func keepPaths(out []string) []string {
	if linesChars(out) <= statusPathsBudget {
		return out
	}
	var res, sec []string
	flush := func() {
		if len(sec) > 0 {
			res = append(res, sample(sec, statusPathsBudget*linesChars(sec)/linesChars(out), "paths")...)
			sec = nil
		}
	}
	for _, l := range out {
		if strings.HasSuffix(l, ":") && !strings.Contains(l, "/") {
			flush()
			res = append(res, l)
			continue
		}
		sec = append(sec, l)
	}
	flush()
	return res
}

// factorCodes moves a status code shared by every entry of a section into the section's header:
// "unstaged:", "M a.go", "M b.go" become "unstaged (all M):", "a.go", "b.go".
func factorCodes(out []string) []string {
	codes := map[string]bool{}
	for _, c := range statusCodes {
		codes[c] = true
	}
	for i := 0; i < len(out); i++ {
		if !strings.HasSuffix(out[i], ":") || strings.Contains(out[i], " ") {
			continue
		}
		j, code := i+1, ""
		for ; j < len(out); j++ {
			c, _, ok := strings.Cut(out[j], " ")
			if !ok || !codes[c] || code != "" && c != code {
				break
			}
			code = c
		}
		if j-i < 3 || j < len(out) && !strings.HasSuffix(out[j], ":") && out[j] != "working tree clean" {
			continue // fewer than two entries, or a mixed section
		}
		out[i] = strings.TrimSuffix(out[i], ":") + " (all " + code + "):"
		for k := i + 1; k < j; k++ {
			out[k] = out[k][len(code)+1:]
		}
		i = j - 1
	}
	return out
}

func allPorcelain(lines []string) bool {
	for _, l := range lines {
		if !porcelainRE.MatchString(l) && !strings.HasPrefix(l, "## ") {
			return false
		}
	}
	return len(lines) > 0
}

// ---- git diff, show, log -p ----

type diffFile struct {
	name           string
	meta           []string // rename from/to, new/deleted file mode, Binary files differ
	isNew          bool
	added, removed int
	hunks          []*hunk
}

type hunk struct {
	header         string
	changed        []string // + and - lines
	added, removed int
}

var hunkRE = lazyRE(`^@@+ [-+\d, ]+ @@+`)

// parseDiff reads unified diffs. Lines before the first "diff --git" are returned as preamble.
func parseDiff(lines []string) (pre []string, files []*diffFile) {
	var f *diffFile
	var h *hunk
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "diff --cc ") || strings.HasPrefix(l, "diff --combined "):
			f = &diffFile{name: diffName(l)}
			files = append(files, f)
			h = nil
		case f == nil:
			pre = append(pre, l)
		case h == nil && (strings.HasPrefix(l, "rename from ") || strings.HasPrefix(l, "rename to ") ||
			strings.HasPrefix(l, "copy from ") || strings.HasPrefix(l, "copy to ") || strings.HasPrefix(l, "Binary files ")):
			f.meta = append(f.meta, l)
		case h == nil && strings.HasPrefix(l, "new file mode"):
			f.isNew = true
		case h == nil && strings.HasPrefix(l, "deleted file mode"):
			f.meta = append(f.meta, "deleted")
		case h == nil && (strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "index ") ||
			strings.HasPrefix(l, "similarity index") || strings.HasPrefix(l, "dissimilarity index") ||
			strings.HasPrefix(l, "old mode") || strings.HasPrefix(l, "new mode")):
		case hunkRE.MatchString(l):
			h = &hunk{header: l}
			f.hunks = append(f.hunks, h)
		case h != nil && strings.HasPrefix(l, "+"):
			if strings.TrimSpace(l[1:]) != "" {
				h.changed = append(h.changed, l)
			}
			h.added++
			f.added++
		case h != nil && strings.HasPrefix(l, "-"):
			if strings.TrimSpace(l[1:]) != "" {
				h.changed = append(h.changed, l)
			}
			h.removed++
			f.removed++
		case h != nil && (strings.HasPrefix(l, " ") || l == "" || strings.HasPrefix(l, `\`)):
		default:
			// Not diff text: a commit header of git log -p, or the end of the diff.
			f, h = nil, nil
			pre = append(pre, l)
		}
	}
	return pre, files
}

func diffName(l string) string {
	rest := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(l, "diff --git "), "diff --cc "), "diff --combined ")
	if i := strings.Index(rest, " b/"); i >= 0 && strings.HasPrefix(rest, "a/") {
		return rest[i+3:]
	}
	return rest
}

// declRE finds declarations in added code: what an outline of a new file shows.
var declRE = lazyRE(`^\+ {0,4}((pub(\([\w:]+\))? |export (default )?|async |static |public |private |protected |internal |abstract |final |override |unsafe |extern "C" )*)(fn|func|def|class|struct|enum|trait|impl|interface|type|mod|module|function|const [A-Z_]|record|object|namespace|package)\b`)

const (
	diffLineChars  = 110
	firstPassLines = 4
	hunkLines      = 8
)

// shown returns the lines worth showing of a hunk: for a hunk that mostly adds code, its outline
// (declarations); otherwise its changed lines.
func (h *hunk) shown() []string {
	if h.added >= 20 && h.removed <= h.added/10 {
		var decls []string
		for _, l := range h.changed {
			if declRE.MatchString(l) {
				decls = append(decls, l)
			}
		}
		if len(decls) > 0 {
			return decls
		}
	}
	return h.changed
}

// renderDiff shows every file with its counts, then spends the budget breadth-first: each file's
// first change before any file's second hunk, so that no file is hidden behind a large one.
func renderDiff(files []*diffFile, budget int) []string {
	var out []string
	totalA, totalR := 0, 0
	headers := make([][]string, len(files))
	for i, f := range files {
		totalA += f.added
		totalR += f.removed
		headers[i] = fileHeader(f)
	}
	if len(files) > 1 {
		out = append(out, fmt.Sprintf("%s changed, +%d -%d", plural(len(files), "file"), totalA, totalR))
	}
	room := budget - linesChars(out)
	for _, h := range headers {
		room -= linesChars(h)
	}
	// shown[i][j] is how many lines of hunk j of file i are shown; -1 means not even its start.
	shown := make([][]int, len(files))
	for i, f := range files {
		shown[i] = make([]int, len(f.hunks))
		for j := range shown[i] {
			shown[i][j] = -1
		}
	}
	grow := func(i, j, upto int) {
		h := files[i].hunks[j]
		lines := h.shown()
		from := max(shown[i][j], 0)
		upto = min(upto, len(lines))
		cost := 0
		if shown[i][j] < 0 {
			cost = charCount(hunkStart(h.header)) + 1
		}
		for k := from; k < upto; k++ {
			cost += charCount(clip(lines[k], diffLineChars)) + 1
		}
		if cost > room || upto <= from && shown[i][j] >= 0 {
			return
		}
		room -= cost
		shown[i][j] = max(upto, from)
	}
	for i, f := range files { // every file's first change
		if len(f.hunks) > 0 && !f.deleted() {
			grow(i, 0, 1)
		}
	}
	for i, f := range files { // a few more lines of every first hunk (an outline for new code)
		if len(f.hunks) > 0 && shown[i][0] >= 0 {
			grow(i, 0, firstPassLines)
		}
	}
	for i, f := range files { // the other hunks' first change
		if f.deleted() {
			continue
		}
		for j := 1; j < len(f.hunks); j++ {
			grow(i, j, 1)
		}
	}
	for i, f := range files { // more lines of every hunk shown
		for j := range f.hunks {
			if shown[i][j] >= 0 {
				grow(i, j, hunkLines)
			}
		}
	}
	hidden := 0
	for i, f := range files {
		out = append(out, headers[i]...)
		for j, h := range f.hunks {
			lines := h.shown()
			n := shown[i][j]
			if n >= 0 {
				for k := 0; k < n; k++ {
					l := clip(lines[k], diffLineChars)
					if k == 0 {
						l = hunkStart(h.header) + " " + l
					}
					out = append(out, l)
				}
				if n == 0 {
					out = append(out, hunkStart(h.header))
				}
			}
			hidden += h.added + h.removed - max(n, 0)
		}
	}
	if hidden > 0 {
		out = append(out, fmt.Sprintf("(%s not shown)", plural(hidden, "changed line")))
	}
	return out
}

func fileHeader(f *diffFile) []string {
	counts := fmt.Sprintf("+%d -%d", f.added, f.removed)
	if f.isNew {
		counts = "new, " + counts
	}
	for _, m := range f.meta {
		if strings.HasPrefix(m, "rename ") || strings.HasPrefix(m, "copy ") {
			hdr := append([]string(nil), f.meta...)
			hdr[len(hdr)-1] += " (" + counts + ")"
			return hdr
		}
	}
	hdr := []string{f.name + " (" + counts + ")"}
	for _, m := range f.meta {
		if m == "deleted" {
			hdr[0] = f.name + " (deleted, " + counts + ")"
		} else {
			hdr = append(hdr, "  "+m)
		}
	}
	return hdr
}

// deleted reports whether the diff deletes the file: its old content is not worth showing.
func (f *diffFile) deleted() bool {
	for _, m := range f.meta {
		if m == "deleted" {
			return true
		}
	}
	return false
}

// diffBudgetFor gives every file room for its header and first change, within bounds.
func diffBudgetFor(files []*diffFile) int {
	return max(900, min(2400, 500+70*len(files)))
}

var hunkStartRE = lazyRE(`\+(\d+)`)

// hunkStart renders a hunk header as "@<first new line>".
func hunkStart(header string) string {
	if m := hunkStartRE.FindStringSubmatch(header); m != nil {
		return "@" + m[1]
	}
	return "@"
}

func reduceGitDiff(d *doc) (string, bool) {
	if d.src.has("--stat", "--numstat", "--shortstat", "--name-only", "--name-status", "--compact-summary") {
		return reduceStatList(d)
	}
	pre, files := parseDiff(d.lines)
	if len(files) == 0 {
		return "", false
	}
	out := append(condense(pre), renderDiff(files, diffBudgetFor(files))...)
	return strings.Join(out, "\n"), true
}

// reduceStatList handles --stat and --name-only lists: alignment padding is removed and long lists
// are sampled; the summary line is always kept.
func reduceStatList(d *doc) (string, bool) {
	var out []string
	for _, l := range d.lines {
		t := strings.TrimSpace(l)
		if i := strings.Index(t, " | "); i > 0 {
			// "3 ++-": the bar draws the count it follows.
			t = strings.TrimSpace(t[:i]) + " | " + strings.TrimRight(strings.TrimSpace(t[i+3:]), "+- ")
		}
		out = append(out, t)
	}
	return strings.Join(sample(out, sampleBudget*2, "lines"), "\n"), true
}

// ---- git log ----

var (
	commitRE = lazyRE(`^commit ([0-9a-f]{7,64})(?: \(.+\))?$`) // the refs are not shown
	statRE   = lazyRE(`^ (\d+) files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?`)
	graphRE  = lazyRE(`^[*|\\/ _.-]+$`)
)

type commit struct {
	hash, date, subject, stat string
	files                     []*diffFile
}

func parseLog(lines []string) *logDoc {
	lg := &logDoc{}
	var cs []*commit
	var c *commit
	var body []string
	flush := func() {
		if c == nil {
			return
		}
		_, c.files = parseDiff(body)
		for _, l := range body {
			if m := statRE.FindStringSubmatch(l); m != nil {
				c.stat = fmt.Sprintf("%s files, +%s -%s", m[1], orZero(m[2]), orZero(m[3]))
			}
		}
	}
	for _, l := range lines {
		if m := commitRE.FindStringSubmatch(l); m != nil {
			flush()
			c = &commit{hash: m[1]}
			cs = append(cs, c)
			body = nil
			continue
		}
		if c == nil {
			if isGitMessage(l) {
				lg.lead = append(lg.lead, l)
			}
			continue
		}
		switch {
		case isGitMessage(l):
			// At column 0 it is not diff text or a message (indented): git says it, and may have
			// stopped walking the history there.
			lg.trail = append(lg.trail, l)
		case strings.HasPrefix(l, "Merge: "), strings.HasPrefix(l, "Author: "):
			// The one-line entry has no room for them.
		case strings.HasPrefix(l, "Date: "):
			c.date = shortDate(strings.TrimSpace(strings.TrimPrefix(l, "Date:")))
		case strings.HasPrefix(l, "    ") && c.subject == "" && strings.TrimSpace(l) != "":
			c.subject = strings.TrimSpace(l)
		case strings.HasPrefix(l, "    "):
		default:
			body = append(body, l)
		}
	}
	flush()
	lg.commits = cs
	return lg
}

// logDoc is a parsed git log: its commits, and what git itself said before the first one and
// after it (a refname warning, a missing object that ended the walk).
type logDoc struct {
	commits     []*commit
	lead, trail []string
}

// isGitMessage reports whether l is a message of git's own (its die, error and warning
// prefixes), which a sample of the log must not drop.
func isGitMessage(l string) bool {
	return strings.HasPrefix(l, "fatal: ") || strings.HasPrefix(l, "error: ") || strings.HasPrefix(l, "warning: ")
}

// withMessages puts git's messages around the rendered log, sampled should git repeat itself.
func (lg *logDoc) withMessages(body []string) string {
	out := make([]string, 0, len(body)+len(lg.lead)+len(lg.trail))
	if len(lg.lead) > 0 {
		out = append(out, sample(condense(lg.lead), salientBudget/2, "lines")...)
	}
	out = append(out, body...)
	if len(lg.trail) > 0 {
		out = append(out, sample(condense(lg.trail), salientBudget/2, "lines")...)
	}
	return strings.Join(out, "\n")
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

func shortDate(s string) string {
	for _, layout := range []string{"Mon Jan 2 15:04:05 2006 -0700", time.RFC3339, "2006-01-02 15:04:05 -0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format("2006-01-02")
		}
	}
	return s
}

func (c *commit) line() string {
	var b strings.Builder
	b.WriteString(c.hash)
	if c.date != "" {
		b.WriteString(" " + c.date)
	}
	b.WriteString(" " + c.subject)
	if c.stat != "" {
		b.WriteString(" [" + c.stat + "]")
	}
	for _, f := range c.files {
		b.WriteString(fmt.Sprintf("\n  %s (+%d -%d)", f.name, f.added, f.removed))
	}
	return b.String()
}

// Budgets of logs: one entry per commit, or one line per commit (--oneline, --graph).
const (
	logBudget     = 750
	onelineBudget = 500
)

func reduceGitLog(d *doc) (string, bool) {
	lg := parseLog(d.lines)
	return reduceLog(d, lg)
}

func reduceLog(d *doc, lg *logDoc) (string, bool) {
	cs := lg.commits
	if len(cs) == 0 {
		return reduceOneline(d.lines)
	}
	items := make([]string, len(cs))
	for i, c := range cs {
		items[i] = c.line()
	}
	body := append([]string{plural(len(cs), "commit") + ":"}, sample(items, logBudget, "commits")...)
	return lg.withMessages(body), true
}

// reduceOneline handles --oneline and --graph logs: graph-only lines go, the rest is sampled.
func reduceOneline(lines []string) (string, bool) {
	var items []string
	for _, l := range lines {
		if graphRE.MatchString(l) {
			continue
		}
		items = append(items, clip(l, diffLineChars))
	}
	return strings.Join(sample(items, onelineBudget, "lines"), "\n"), true
}

// reduceGitShow renders a commit's header in one line and its diff like git diff does.
func reduceGitShow(d *doc) (string, bool) {
	lg := parseLog(d.lines)
	if len(lg.commits) != 1 {
		return reduceLog(d, lg)
	}
	c := lg.commits[0]
	files := c.files
	c.files = nil
	out := []string{c.line()}
	out = append(out, renderDiff(files, diffBudgetFor(files))...)
	return lg.withMessages(out), true
}

// ---- git blame ----

var blameRE = lazyRE(`^\^?([0-9a-f]{4,40}) (?:\S+ +)?\((.+?) +(\d{4}-\d\d-\d\d) [\d:]+ [-+]\d{4} +(\d+)\) ?(.*)$`)

// Budgets of blame's code sample: its head, middle and tail, and the lines that handle errors.
const blameBudget, blameSalientBudget = 100, 450

// reduceGitBlame lists the commits with their authors and line counts once, then shows a sample of
// the code with line numbers instead of repeating the attribution on every line.
func reduceGitBlame(d *doc) (string, bool) {
	type who struct {
		key   string
		lines int
	}
	var order []*who
	byHash := map[string]*who{}
	var code []string
	for _, l := range d.lines {
		m := blameRE.FindStringSubmatch(l)
		if m == nil {
			return "", false
		}
		w := byHash[m[1]]
		if w == nil {
			w = &who{key: fmt.Sprintf("%s (%s %s)", m[1], m[2], m[3])}
			byHash[m[1]] = w
			order = append(order, w)
		}
		w.lines++
		code = append(code, m[4]+" "+clip(strings.TrimSpace(m[5]), diffLineChars))
	}
	out := []string{fmt.Sprintf("%s by %s:", plural(len(code), "line"), plural(len(order), "commit"))}
	commits := make([]string, len(order))
	for i, w := range order {
		commits[i] = fmt.Sprintf("%s: %s", w.key, plural(w.lines, "line"))
	}
	for _, c := range sample(commits, sampleBudget, "commits") {
		out = append(out, "  "+c)
	}
	out = append(out, selectLines(code, blameBudget, isSalient, blameSalientBudget)...)
	return strings.Join(out, "\n"), true
}

// ---- git commit ----

// commitPathsBudget is what each kind of change (create, delete, rename) of a commit's summary
// spends on naming its paths.
const commitPathsBudget = 150

var modeLineRE = lazyRE(`^ (create|delete) mode \d+ (.+)$|^ (rename|copy) (.+) \(\d+%\)$|^ mode change \d+ => \d+ (.+)$`)

// reduceGitCommit keeps the commit line and the summary and lists created, deleted and renamed
// paths compactly.
func reduceGitCommit(d *doc) (string, bool) {
	var out []string
	kinds := map[string][]string{}
	var kindOrder []string
	for _, l := range d.lines {
		m := modeLineRE.FindStringSubmatch(l)
		if m == nil {
			out = append(out, l)
			continue
		}
		kind, p := m[1], m[2]
		switch {
		case m[3] != "":
			kind, p = m[3], m[4]
		case m[5] != "":
			kind, p = "mode change", m[5]
		}
		if kinds[kind] == nil {
			kindOrder = append(kindOrder, kind)
		}
		kinds[kind] = append(kinds[kind], p)
	}
	for _, k := range kindOrder {
		ps := kinds[k]
		out = append(out, fmt.Sprintf(" %s (%d): %s", k, len(ps), strings.Join(sample(ps, commitPathsBudget, "paths"), ", ")))
	}
	return strings.Join(condense(out), "\n"), true
}
