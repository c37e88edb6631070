package tokenjuice

import (
	"bytes"
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Path listings (find, fd, git ls-files, rg --files, tar -v, unzip -l). A short listing shows full
// paths; a longer one is outlined by directory, each directory once with the names of its
// entries, which is where a listing's information is (its paths repeat their prefixes).
const (
	// outlineMinPaths: listings of fewer paths show full paths, sampled within shortListBudget.
	outlineMinPaths = 100
	shortListBudget = 450
	// listBudget: an outline that names every entry is shown whole up to this many characters.
	listBudget = 6000
	// outlineBudget is shared among the directories of a larger outline, in proportion to their
	// entries; outlineLinesBudget bounds the outline lines shown.
	outlineBudget      = 1000
	outlineLinesBudget = 4800
	// holdChars bounds the names held to render a whole outline. A listing with more cannot be shown
	// whole; from then on the outline streams: only recently used directories stay open, each
	// keeping its first and last names, and finished directory lines go through bounded windows.
	holdChars = 64 << 10
	openDirs  = 256
	// fullPathsMax: a directory with this many entries or fewer lists them as full paths, which
	// costs about what its line would and keeps each path whole.
	fullPathsMax = 2
	recHead      = 60 // characters of a streamed directory's first names
	recTail      = 40 // and of its last names
)

var (
	unzipRowRE = regexp.MustCompile(`^\s*\d+\s+\d{2,4}-\d\d-\d{2,4}\s+[\d:]+\s+(.+)$`)
	tarLongRE  = regexp.MustCompile(`^[-dlhcbp][-rwxsStT]{9}\s+\S+\s+\d+\s+\S+\s+\S+\s+(.+)$`)
)

// reducePaths serves path listings. It reads the output line by line and holds a bounded amount.
func reducePaths(d *doc) (string, bool) {
	pl := &pathLister{msgs: newSelector(len(d.raw)/2, salientBudget/2, nil, 0, "messages"), size: len(d.raw)}
	s := newLineScanner(d.raw)
	for {
		l, off, ok := s.next()
		if !ok {
			break
		}
		pl.line(l, off)
	}
	return pl.render()
}

type pathLister struct {
	size  int
	n     int       // paths
	few   []string  // the first paths, until there are outlineMinPaths
	tree  *pathTree // from then on
	msgs  *selector // messages such as "find: 'x': Permission denied"
	nmsgs int
}

func (pl *pathLister) line(l []byte, off int) {
	t := bytes.TrimSpace(l)
	switch {
	case len(t) == 0:
	case t[0] >= '0' && t[0] <= '9' && unzipRowRE.Match(l):
		pl.add(l[unzipRowRE.FindSubmatchIndex(l)[2]:], off)
	case len(t) > 10 && strings.IndexByte("-dlhcbp", t[0]) >= 0 && (t[1] == '-' || t[1] == 'r') && tarLongRE.Match(l):
		pl.add(l[tarLongRE.FindSubmatchIndex(l)[2]:], off)
	case bytes.Contains(t, []byte(": ")) && isSalient(t):
		pl.msgs.line(t, off)
		pl.nmsgs++
	case bytes.HasPrefix(t, []byte("Archive:")) || bytes.HasPrefix(t, []byte("Length ")) || bytes.HasPrefix(t, []byte("---------")):
	default:
		pl.add(t, off)
	}
}

func (pl *pathLister) add(p []byte, off int) {
	pl.n++
	if pl.tree != nil {
		pl.tree.add(p, off)
		return
	}
	pl.few = append(pl.few, string(p))
	if len(pl.few) == outlineMinPaths {
		pl.tree = &pathTree{recs: map[string]*dirRec{}, half: pl.size / 2}
		for _, f := range pl.few {
			pl.tree.add([]byte(f), off)
		}
		pl.few = nil
	}
}

func (pl *pathLister) render() (string, bool) {
	if pl.n == 0 {
		return "", false
	}
	var out []string
	if pl.tree == nil {
		out = append(out, plural(pl.n, "path")+":")
		out = append(out, sample(pl.few, shortListBudget, "paths")...)
	} else {
		out = pl.tree.render(pl.n)
	}
	if pl.nmsgs > 0 {
		pl.msgs.end()
		out = append(out, pl.msgs.out...)
	}
	return strings.Join(out, "\n"), true
}

// pathTree groups paths by directory. While the names it holds stay under holdChars it keeps every
// directory and name (whole mode); past that it streams (see holdChars).
type pathTree struct {
	recs      map[string]*dirRec // every directory (whole mode), or the open ones (streaming)
	order     []*dirRec          // whole mode: in order of first appearance
	held      int
	streaming bool
	seq       int
	clock     int
	half      int

	win   *windows // streaming: the outline lines
	lines int
	fold  *foldRun // streaming: a run of sibling directories holding one entry of the same name
}

// dirRec is one directory of an outline: its entries' names (all of them, or in streaming mode
// the first and the last ones) and their number. A fold record lists sibling directories instead.
type dirRec struct {
	dir       string
	names     []string
	headChars int
	last      []string
	lastChars int
	n         int
	seq, used int
	off       int
}

func (r *dirRec) addBounded(name string) {
	r.n++
	if len(r.last) == 0 && (len(r.names) == 0 || r.headChars+len(name)+1 <= recHead) {
		r.names = append(r.names, name)
		r.headChars += len(name) + 1
		return
	}
	r.last = append(r.last, name)
	r.lastChars += len(name) + 1
	for len(r.last) > 1 && r.lastChars > recTail {
		r.lastChars -= len(r.last[0]) + 1
		r.last = r.last[1:]
	}
}

// shown renders the names of a streamed record, with a gap for those it no longer holds.
func (r *dirRec) shown(unit string) string {
	s := strings.Join(r.names, " ")
	if gap := r.n - len(r.names) - len(r.last); gap > 0 {
		s += " " + gapLine(gap, unit)
	}
	if len(r.last) > 0 {
		s += " " + strings.Join(r.last, " ")
	}
	return s
}

func splitPath(p []byte) (dir, name []byte, trail bool) {
	trail = len(p) > 1 && p[len(p)-1] == '/'
	if trail {
		p = p[:len(p)-1]
	}
	i := bytes.LastIndexByte(p, '/')
	return p[:i+1], p[i+1:], trail
}

func (t *pathTree) add(p []byte, off int) {
	dir, nm, trail := splitPath(p)
	name := string(nm)
	if trail {
		name += "/"
	}
	t.clock++
	r := t.recs[string(dir)]
	if r == nil {
		r = &dirRec{dir: string(dir), seq: t.seq, off: off}
		t.seq++
		t.recs[r.dir] = r
		if t.streaming {
			t.evict(openDirs)
		} else {
			t.order = append(t.order, r)
		}
	}
	r.used = t.clock
	if t.streaming {
		r.addBounded(name)
		return
	}
	r.n++
	r.names = append(r.names, name)
	t.held += len(name) + 1
	if t.held > holdChars {
		t.startStreaming()
	}
}

// startStreaming gives up the whole outline: the directories not among the openDirs most recently
// used are finished, in order of first appearance.
func (t *pathTree) startStreaming() {
	t.streaming = true
	t.win = newWindows(outlineLinesBudget, 0, 0, t.half)
	for _, r := range t.order {
		names := r.names
		r.names, r.last, r.n, r.headChars, r.lastChars = nil, nil, 0, 0, 0
		for _, n := range names {
			r.addBounded(n)
		}
	}
	t.order = nil
	t.evict(openDirs)
}

// evict finishes the least recently used directories until at most keep are open.
func (t *pathTree) evict(keep int) {
	if len(t.recs) <= keep {
		return
	}
	open := make([]*dirRec, 0, len(t.recs))
	for _, r := range t.recs {
		open = append(open, r)
	}
	slices.SortFunc(open, func(a, b *dirRec) int { return b.used - a.used })
	done := open[keep:]
	slices.SortFunc(done, func(a, b *dirRec) int { return a.seq - b.seq })
	for _, r := range done {
		delete(t.recs, r.dir)
		t.finish(r)
	}
}

// foldRun is a run of sibling directories that each hold one entry of the same name
// ("src/hosts/*/index.ts"); dirs holds their names, bounded like a directory's entries.
type foldRun struct {
	parent, entry string
	dirs          dirRec
	off           int
}

// finish renders a streamed directory into the windows, folding runs of sibling directories that
// hold one entry of the same name.
func (t *pathTree) finish(r *dirRec) {
	if r.n == 1 && r.dir != "" && len(r.names) == 1 {
		parent, base := path.Split(strings.TrimSuffix(r.dir, "/"))
		if f := t.fold; f != nil && f.parent == parent && f.entry == r.names[0] {
			f.dirs.addBounded(base)
			return
		}
		t.flushFold()
		t.fold = &foldRun{parent: parent, entry: r.names[0], off: r.off}
		t.fold.dirs.addBounded(base)
		return
	}
	t.flushFold()
	if r.n <= fullPathsMax && r.n == len(r.names)+len(r.last) {
		for _, n := range append(r.names, r.last...) {
			t.offer(r.dir+n, r.off)
		}
		return
	}
	t.offer(fmt.Sprintf("%s (%d): %s", r.dir, r.n, r.shown("names")), r.off)
}

func (t *pathTree) flushFold() {
	f := t.fold
	if f == nil {
		return
	}
	t.fold = nil
	if f.dirs.n >= 3 {
		t.offer(fmt.Sprintf("%s*/%s (%d dirs): %s", f.parent, f.entry, f.dirs.n, f.dirs.shown("dirs")), f.off)
		return
	}
	for _, d := range append(f.dirs.names, f.dirs.last...) {
		t.offer(f.parent+d+"/"+f.entry, f.off)
	}
}

func (t *pathTree) offer(line string, off int) {
	t.win.offer([]byte(line), t.lines, off)
	t.lines++
}

func (t *pathTree) render(paths int) []string {
	if !t.streaming {
		return outlineWhole(t.order, paths)
	}
	t.evict(0)
	t.flushFold()
	out := []string{plural(paths, "path") + ", by directory:"}
	return append(out, renderItems(t.win.pick(nil), t.lines, "lines")...)
}

// outlineWhole renders an outline from every directory: naming every entry if that fits
// listBudget, else sharing outlineBudget among the directories.
func outlineWhole(order []*dirRec, paths int) []string {
	header := fmt.Sprintf("%s in %s:", plural(paths, "path"), plural(len(order), "directory"))
	share := func(n int) int { return max(outlineBudget/10, outlineBudget*n/paths) }
	foldShare := func(int) int { return outlineBudget / 10 }
	if full := outlineItems(order, func(int) int { return math.MaxInt }, foldShare); linesChars(full) <= listBudget {
		return append([]string{header}, full...)
	}
	return append([]string{header}, sample(outlineItems(order, share, share), outlineLinesBudget, "directories")...)
}

// outlineItems renders directories in the order they first appear. A directory with up to
// fullPathsMax entries lists them as full paths; a larger one lists its entries' names after it, sampled within
// share(entries) characters. Sibling directories that hold just one entry of the same name
// ("pkg/*/index.ts") share a line, which names them sampled within foldShare(dirs) characters: like
// repeated lines, they are counted rather than spelled out.
func outlineItems(order []*dirRec, share, foldShare func(n int) int) []string {
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
						strings.Join(sample(f.dirs, foldShare(len(f.dirs)), "dirs"), " ")))
				}
				continue
			}
		}
		if len(g.names) <= fullPathsMax {
			for _, n := range g.names {
				items = append(items, g.dir+n)
			}
			continue
		}
		items = append(items, fmt.Sprintf("%s (%d): %s", g.dir, len(g.names), strings.Join(sample(g.names, share(len(g.names)), "names"), " ")))
	}
	return items
}
