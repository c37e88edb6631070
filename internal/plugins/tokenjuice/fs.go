package tokenjuice

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// colsRE separates the names of short-format `ls`, which prints them in columns.
var colsRE = lazyRE(`\s{2,}|\t`)

// lsLongRE is one entry of `ls -l`: mode, links, owner, group, size, date, name.
var lsLongRE = lazyRE(`^([-dlcbpsD])[-rwxsStTl]{9}[.+@]?\s+\d+\s+\S+\s+(?:\S+\s+)?(\d[\d,.]*[KMGTP]?|\d+,\s*\d+)\s+(\w{3}\s+\d+\s+[\d:]+|\d+\s+\w{3}\s+[\d:]+|\d{4}-\d\d-\d\d(?: [\d:.]+)?(?: [+-]\d{4})?)\s(.+)$`)

// inventoryBudget is what ls shares among its directories, in proportion to their entries;
// maxLinksShown bounds the symbolic links named beyond it.
const (
	inventoryBudget = 1600
	maxLinksShown   = 24
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
	var errs []string // what ls says itself: an operand or a directory it could not read
	for _, l := range d.lines {
		switch {
		case l == "":
		case strings.HasPrefix(l, "total "):
		case isOwnMessage(l, d.src.name()):
			errs = append(errs, l)
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
	headers := map[string]bool{}
	for _, g := range dirs {
		total += len(g.names)
		if g.header != "" {
			headers[strings.TrimSuffix(g.header, ":")] = true
		}
	}
	// A subdirectory that ls -R lists below under its own header is not repeated in its parent's
	// names: its header says it is there.
	for _, g := range dirs {
		if g.header == "" {
			continue
		}
		parent := strings.TrimSuffix(g.header, ":")
		kept := g.names[:0:0]
		for _, n := range g.names {
			if !headers[parent+"/"+strings.TrimSuffix(n, "/")] {
				kept = append(kept, n)
			}
		}
		g.names = kept
	}
	shown := 0
	for _, g := range dirs {
		shown += len(g.names)
	}
	var out []string
	for _, g := range dirs {
		if g.header == "" && len(g.names) == 0 {
			continue
		}
		// Each directory's share of the budget follows its share of the entries.
		budget := max(inventoryBudget/8, inventoryBudget*len(g.names)/max(shown, 1))
		// Symbolic links are named with their targets wherever they are: a link is where a path
		// leads somewhere else.
		keep := sampleKeep(g.names, budget)
		links := 0
		for i, n := range g.names {
			if strings.Contains(n, " -> ") && !keep[i] && links < maxLinksShown {
				keep[i] = true
				links++
			}
		}
		names := render(g.names, keep, "entries")
		// Counts are worth their characters only when some names are left out.
		h := ""
		if len(names) != len(g.names) {
			h = fmt.Sprintf(" (%s)", plural(len(g.names), "entry"))
		}
		if g.header != "" {
			out = append(out, g.header+h)
		} else if h != "" && len(dirs) > 1 {
			out = append(out, strings.TrimSpace(h))
		}
		if w := wrapWords(names, 100); w != "" {
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
		head += ", names only" // modes, owners, sizes and dates go
	}
	if len(errs) > 0 {
		// Not names to sample: a listing without them reads as complete.
		out = append(sample(condense(errs), salientBudget, "lines"), out...)
	}
	return head + "\n" + strings.Join(out, "\n"), true
}

// isOwnMessage reports whether l is a message the program prog printed about itself, "ls: cannot
// open directory 'x': Permission denied", also when it was run by a path (/bin/ls).
func isOwnMessage(l, prog string) bool {
	who, _, ok := strings.Cut(l, ": ")
	return ok && prog != "" && !strings.ContainsAny(who, " \t") && (who == prog || strings.HasSuffix(who, "/"+prog))
}

// wrapWords joins words with a space into lines of about width characters; a word that holds a
// space is quoted, as ls quotes it on a terminal.
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
		if strings.ContainsAny(w, " \t") {
			w = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		c := charCount(w)
		if n > 0 && n+1+c > width {
			b.WriteByte('\n')
			n = 0
		}
		if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += c
	}
	return strings.TrimRight(b.String(), "\n")
}

var duRE = lazyRE(`^(\d+(?:[.,]\d+)?)([KMGTPkB]?)\s+(.+)$`)

// duUnits are the multipliers of du's size suffixes.
var duUnits = map[string]float64{"": 1, "B": 1, "K": 1 << 10, "k": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}

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
		es = append(es, entry{l, v * duUnits[m[2]]})
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
	helpEntryRE   = lazyRE(`^\s{1,8}(-{1,2}[\w-]|[\w][\w.:-]*\s{2,}|[\w][\w-]*,)`)
	helpSectionRE = lazyRE(`^[A-Z][\w /-]*:?\s*$|^[A-Z][\w /-]*:$`)
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
