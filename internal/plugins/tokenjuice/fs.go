package tokenjuice

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// lsLongRE is one entry of `ls -l`: mode, links, owner, group, size, date, name.
var colsRE = regexp.MustCompile(`\s{2,}|\t`)

var lsLongRE = regexp.MustCompile(`^([-dlcbpsD])[-rwxsStTl]{9}[.+@]?\s+\d+\s+\S+\s+(?:\S+\s+)?(\d[\d,.]*[KMGTP]?|\d+,\s*\d+)\s+(\w{3}\s+\d+\s+[\d:]+|\d+\s+\w{3}\s+[\d:]+|\d{4}-\d\d-\d\d(?: [\d:.]+)?(?: [+-]\d{4})?)\s(.+)$`)

// Budgets of inventories: ls names every entry of a directory that fits its share; an outline of
// a long path listing names every directory and samples the entries of each.
const (
	inventoryBudget = 1600
	outlineBudget   = 1000
)

// reduceLs reduces `ls` listings to names (a / marks directories, -> a link's target), several
// to a line, under each directory header of `ls -R`; modes, owners, sizes and dates go.
func reduceLs(d *doc) (string, bool) {
	type dir struct {
		header string
		names  []string
		dirs   int
	}
	var dirs []*dir
	cur := &dir{}
	dirs = append(dirs, cur)
	long := 0
	for _, l := range d.lines {
		switch {
		case l == "":
		case strings.HasPrefix(l, "total "):
		case strings.HasSuffix(l, ":") && !strings.Contains(l, "  "):
			cur = &dir{header: l}
			dirs = append(dirs, cur)
		case lsLongRE.MatchString(l):
			long++
			m := lsLongRE.FindStringSubmatch(l)
			name := m[4]
			if name == "." || name == ".." {
				continue
			}
			if m[1] == "d" {
				name += "/"
				cur.dirs++
			}
			cur.names = append(cur.names, name)
		default:
			// Short format: names in columns.
			for _, f := range colsRE.Split(strings.TrimSpace(l), -1) {
				if f != "" {
					cur.names = append(cur.names, f)
				}
			}
		}
	}
	total := 0
	for _, g := range dirs {
		total += len(g.names)
	}
	var out []string
	for _, g := range dirs {
		if g.header == "" && len(g.names) == 0 {
			continue
		}
		h := fmt.Sprintf("(%s", plural(len(g.names), "entry"))
		if g.dirs > 0 {
			h += fmt.Sprintf(", %d dirs", g.dirs)
		}
		h += ")"
		if g.header != "" {
			out = append(out, g.header+" "+h)
		} else if len(dirs) > 2 || g.dirs > 0 && len(dirs) > 1 {
			out = append(out, h)
		}
		// Each directory's share of the budget follows its share of the entries.
		budget := max(inventoryBudget/8, inventoryBudget*len(g.names)/max(total, 1))
		if w := wrapWords(sample(g.names, budget, "entries"), 100); w != "" {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return "", false
	}
	head := plural(total, "entry")
	if len(dirs) == 1 && dirs[0].dirs > 0 {
		head += " (" + plural(dirs[0].dirs, "dir") + ")"
	}
	if long > 0 {
		head += "; modes, owners, sizes and dates omitted"
	}
	return head + "\n" + strings.Join(out, "\n"), true
}

// wrapWords joins words with two spaces into lines of about width characters.
func wrapWords(words []string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range words {
		if strings.HasPrefix(w, "… ") { // a gap line stands alone
			if n > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(w + "\n")
			n = 0
			continue
		}
		c := charCount(w)
		if n > 0 && n+2+c > width {
			b.WriteByte('\n')
			n = 0
		}
		if n > 0 {
			b.WriteString("  ")
			n += 2
		}
		b.WriteString(w)
		n += c
	}
	return strings.TrimRight(b.String(), "\n")
}

var (
	unzipRowRE = regexp.MustCompile(`^\s*\d+\s+\d{2,4}-\d\d-\d{2,4}\s+[\d:]+\s+(.+)$`)
	tarLongRE  = regexp.MustCompile(`^[-dlhcbp][-rwxsStT]{9}\s+\S+\s+\d+\s+\S+\s+\S+\s+(.+)$`)
)

// Listings of at most this many paths are sampled as full paths; longer ones are outlined by
// directory, which names every directory and as many files per directory as the budget allows.
const outlineMinPaths = 100

// reducePaths serves find, fd, git ls-files, rg --files and archive listings.
func reducePaths(d *doc) (string, bool) {
	var paths, other []string
	for _, l := range d.lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
		case unzipRowRE.MatchString(l):
			paths = append(paths, unzipRowRE.FindStringSubmatch(l)[1])
		case tarLongRE.MatchString(l):
			paths = append(paths, tarLongRE.FindStringSubmatch(l)[1])
		case strings.Contains(t, ": ") && isSalientString(t): // find: 'x': Permission denied
			other = append(other, t)
		case strings.HasPrefix(t, "Archive:") || strings.HasPrefix(t, "Length ") || strings.HasPrefix(t, "---------"):
		default:
			paths = append(paths, t)
		}
	}
	if len(paths) == 0 {
		return "", false
	}
	var out []string
	if len(paths) < outlineMinPaths {
		out = append(out, plural(len(paths), "path")+":")
		out = append(out, sample(paths, sampleBudget, "paths")...)
	} else {
		out = outlinePaths(paths)
	}
	if len(other) > 0 {
		out = append(out, sample(other, salientBudget/2, "messages")...)
	}
	return strings.Join(out, "\n"), true
}

// outlinePaths groups paths by directory, in the order directories first appear. A directory with
// up to three entries lists them as full paths; a larger one lists its entries' names after it.
// Sibling directories that hold just one entry of the same name ("pkg/*/index.ts") share a line.
func outlinePaths(paths []string) []string {
	type group struct {
		dir   string
		names []string
	}
	var order []*group
	byDir := map[string]*group{}
	for _, p := range paths {
		trail := strings.HasSuffix(p, "/")
		dir, name := path.Split(strings.TrimSuffix(p, "/"))
		if trail {
			name += "/"
		}
		g := byDir[dir]
		if g == nil {
			g = &group{dir: dir}
			byDir[dir] = g
			order = append(order, g)
		}
		g.names = append(g.names, name)
	}
	// Fold single-entry directories with a shared entry name under one parent.
	type fold struct {
		parent, name string
		dirs         []string
	}
	folds := map[string]*fold{}
	for _, g := range order {
		if len(g.names) == 1 && g.dir != "" {
			parent, base := path.Split(strings.TrimSuffix(g.dir, "/"))
			key := parent + "\x00" + g.names[0]
			f := folds[key]
			if f == nil {
				f = &fold{parent: parent, name: g.names[0]}
				folds[key] = f
			}
			f.dirs = append(f.dirs, base)
		}
	}
	// Every directory is named; its entries share the budget in proportion to their number.
	share := func(n int) int { return max(outlineBudget/10, outlineBudget*n/len(paths)) }
	var items []string
	done := map[string]bool{}
	for _, g := range order {
		if len(g.names) == 1 && g.dir != "" {
			parent, _ := path.Split(strings.TrimSuffix(g.dir, "/"))
			key := parent + "\x00" + g.names[0]
			if f := folds[key]; len(f.dirs) >= 3 {
				if !done[key] {
					done[key] = true
					items = append(items, fmt.Sprintf("%s*/%s (%d dirs): %s", f.parent, f.name, len(f.dirs),
						strings.Join(sample(f.dirs, share(len(f.dirs)), "dirs"), " ")))
				}
				continue
			}
		}
		if len(g.names) <= 3 {
			for _, n := range g.names {
				items = append(items, g.dir+n)
			}
			continue
		}
		items = append(items, fmt.Sprintf("%s (%d): %s", g.dir, len(g.names), strings.Join(sample(g.names, share(len(g.names)), "names"), " ")))
	}
	header := fmt.Sprintf("%s in %s:", plural(len(paths), "path"), plural(len(order), "directory"))
	return append([]string{header}, sample(items, inventoryBudget*3, "directories")...)
}

var duRE = regexp.MustCompile(`^(\d+(?:[.,]\d+)?)([KMGTPkB]?)\s+(.+)$`)

// reduceDu shows the largest entries first, then a sample of the listing in its order.
func reduceDu(d *doc) (string, bool) {
	type entry struct {
		line string
		size float64
	}
	var es []entry
	for _, l := range d.lines {
		m := duRE.FindStringSubmatch(l)
		if m == nil {
			return "", false
		}
		v, _ := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", "."), 64)
		mult := map[string]float64{"": 1, "B": 1, "K": 1 << 10, "k": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}[m[2]]
		es = append(es, entry{l, v * mult})
	}
	if len(es) <= 12 {
		return passthrough, true
	}
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.line
	}
	sort.SliceStable(es, func(i, j int) bool { return es[i].size > es[j].size })
	out := []string{fmt.Sprintf("%s; largest:", plural(len(es), "entry"))}
	for _, e := range es[:5] {
		out = append(out, e.line)
	}
	out = append(out, "in order:")
	out = append(out, sample(lines, sampleBudget/3, "entries")...)
	return strings.Join(out, "\n"), true
}

var (
	grepLineRE = regexp.MustCompile(`^(.+?)([:-])(\d+)([:-])(.*)$`)
	grepFileRE = regexp.MustCompile(`^([^:\s][^:]*?):(.*)$`)
)

// reduceGrep summarises matches per file (the files with most matches, each with its first match)
// and samples the matches, each cut around what the pattern matched.
func reduceGrep(d *doc) (string, bool) {
	pattern := grepPattern(d.src)
	type file struct {
		name string
		n    int
	}
	var order []*file
	byName := map[string]*file{}
	items := make([]string, 0, len(d.lines))
	for _, l := range d.lines {
		name, loc, text := "", "", l
		if m := grepLineRE.FindStringSubmatch(l); m != nil && m[2] == m[4] {
			name, loc, text = m[1], m[1]+m[2]+m[3]+m[4], m[5]
		} else if m := grepFileRE.FindStringSubmatch(l); m != nil && !strings.Contains(m[1], " ") {
			name, loc, text = m[1], m[1]+":", m[2]
		}
		item := loc + clipAround(text, pattern, 100)
		items = append(items, item)
		if name == "" {
			continue
		}
		f := byName[name]
		if f == nil {
			f = &file{name: name}
			byName[name] = f
			order = append(order, f)
		}
		f.n++
	}
	var out []string
	if len(order) > 1 {
		out = append(out, fmt.Sprintf("%s in %s", plural(len(items), "match"), plural(len(order), "file")))
		top := append([]*file(nil), order...)
		sort.SliceStable(top, func(i, j int) bool { return top[i].n > top[j].n })
		if len(top) > 5 {
			top = top[:5]
		}
		if top[0].n > 1 && linesChars(items) > sampleBudget {
			var most []string
			for _, f := range top {
				if f.n > 1 {
					most = append(most, fmt.Sprintf("%s (%d)", f.name, f.n))
				}
			}
			out = append(out, "most matches: "+strings.Join(most, ", "))
		}
	}
	out = append(out, sample(items, sampleBudget, "matches")...)
	return strings.Join(out, "\n"), true
}

// grepPattern returns the literal pattern of a grep or rg command, or "".
func grepPattern(s *simple) string {
	for i := 1; i < len(s.argv); i++ {
		a := s.argv[i]
		if a == "-e" || a == "--regexp" {
			if i+1 < len(s.argv) {
				return s.argv[i+1]
			}
		}
		if !strings.HasPrefix(a, "-") {
			if s.name() == "git" { // git grep PATTERN
				continue
			}
			return a
		}
	}
	return ""
}

// clipAround cuts text to about max runes around the first case-insensitive occurrence of pattern
// (taken literally), or keeps its start.
func clipAround(text, pattern string, limit int) string {
	text = strings.TrimSpace(text)
	r := []rune(text)
	if len(r) <= limit {
		return text
	}
	at := -1
	if pattern != "" {
		if i := strings.Index(strings.ToLower(text), strings.ToLower(pattern)); i >= 0 {
			at = len([]rune(text[:i]))
		}
	}
	if at < 0 {
		return string(r[:limit-1]) + "…"
	}
	start := max(0, at-limit/3)
	end := min(len(r), start+limit)
	s := string(r[start:end])
	if start > 0 {
		s = "…" + s
	}
	if end < len(r) {
		s += "…"
	}
	return s
}

var (
	helpEntryRE   = regexp.MustCompile(`^\s{1,8}(-{1,2}[\w-]|[\w][\w.:-]*\s{2,}|[\w][\w-]*,)`)
	helpSectionRE = regexp.MustCompile(`^[A-Z][\w /-]*:?\s*$|^[A-Z][\w /-]*:$`)
)

// Entries kept from the start and the end of each section of a help text.
const (
	helpBudget = 1400
	helpHead   = 4
	helpTail   = 1
)

// reduceHelp keeps usage lines, section headers and closing hints; each section keeps its first
// and last entries (one line each; wrapped description lines go) and counts the others.
func reduceHelp(d *doc) (string, bool) {
	var out []string
	var entries []string
	flush := func() {
		if len(entries) > helpHead+helpTail+1 {
			out = append(out, entries[:helpHead]...)
			out = append(out, fmt.Sprintf("  … %d more entries …", len(entries)-helpHead-helpTail))
			out = append(out, entries[len(entries)-helpTail:]...)
		} else {
			out = append(out, entries...)
		}
		entries = nil
	}
	inEntries := false
	for _, l := range d.lines {
		switch {
		case l == "":
			flush()
			inEntries = false
		case helpSectionRE.MatchString(l):
			flush()
			out = append(out, l)
			inEntries = true
		case helpEntryRE.MatchString(l):
			entries = append(entries, l)
			inEntries = true
		case inEntries && strings.HasPrefix(l, " "):
			// A wrapped description line of the entry above.
		default:
			flush()
			out = append(out, l)
		}
	}
	flush()
	if len(out) == 0 {
		return "", false
	}
	return strings.Join(selectLines(out, helpBudget, nil, 0), "\n"), true
}
