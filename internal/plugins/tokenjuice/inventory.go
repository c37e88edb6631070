package tokenjuice

import (
	"bytes"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
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
	listBudget = 4200
	// outlineBudget is shared among the directories of a larger outline, in proportion to their
	// entries; outlineLinesBudget bounds the outline lines shown.
	outlineBudget      = 700
	outlineLinesBudget = 2400
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
	unzipRowRE = lazyRE(`^\s*\d+\s+\d{2,4}-\d\d-\d{2,4}\s+[\d:]+\s+(.+)$`)
	tarLongRE  = lazyRE(`^[-dlhcbp][-rwxsStT]{9}\s+\S+\s+\d+\s+\S+\s+\S+\s+(.+)$`)
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

	first, last []byte // paths: an outline names them whole
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
	switch {
	case pl.first == nil:
		pl.first = bytes.Clone(p)
	case pl.n == 2 && len(p) > len(pl.first) && bytes.HasPrefix(p, pl.first) && p[len(pl.first)] == '/':
		// find prints its starting point first: the listing's first entry is the next path.
		pl.first = bytes.Clone(p)
	}
	pl.last = append(pl.last[:0], p...)
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
		// When the outline leaves names out, the first and the last path are named whole: where
		// the listing starts and ends.
		if slices.ContainsFunc(out, func(l string) bool { return strings.Contains(l, " omitted …") }) {
			out[0] = fmt.Sprintf("%s, first %s, last %s:", strings.TrimSuffix(out[0], ":"), pl.first, pl.last)
		}
	}
	if pl.nmsgs > 0 {
		pl.msgs.end()
		out = append(out, pl.msgs.out...)
	}
	return strings.Join(out, "\n"), true
}

// pathTree groups paths by directory. While the names it holds stay under holdChars it keeps every
// directory and name (whole mode); past that it streams (see holdChars): the open directories form
// a least-recently-used list, and the one pushed out is finished into bounded windows.
type pathTree struct {
	recs      map[string]*dirRec // every directory (whole mode), or the open ones (streaming)
	order     []*dirRec          // whole mode: in order of first appearance
	held      int
	streaming bool
	seq       int
	clock     int
	half      int

	lru   dirList  // streaming: open directories, most recently used first
	win   *windows // streaming: the outline lines
	lines int
	fold  *foldRun // streaming: a run of sibling directories holding one entry of the same name
	free  *dirRec  // streaming: a finished record, for reuse
	buf   []byte
}

// dirRec is one directory of an outline: its entries' names and their number. In whole mode
// names holds every name; in streaming mode headBuf holds the first names (up to recHead bytes)
// and lastBuf the last ones (about recTail bytes), newline-separated, in buffers that a finished
// record hands on to the next one.
type dirRec struct {
	dir        string
	names      []string
	headBuf    []byte
	headN      int
	lastBuf    []byte
	lastN      int
	n          int
	seq, used  int
	off        int
	prev, next *dirRec // in the LRU list
}

// addBounded counts a name and keeps it if it is among the first recHead or the last recTail
// bytes of names.
func (r *dirRec) addBounded(name []byte) {
	r.n++
	if r.lastN == 0 && (r.headN == 0 || len(r.headBuf)+len(name)+1 <= recHead) {
		if r.headN > 0 {
			r.headBuf = append(r.headBuf, '\n')
		}
		r.headBuf = append(r.headBuf, name...)
		r.headN++
		return
	}
	if r.lastN > 0 {
		r.lastBuf = append(r.lastBuf, '\n')
	}
	r.lastBuf = append(r.lastBuf, name...)
	r.lastN++
	for r.lastN > 1 && len(r.lastBuf) > recTail {
		i := bytes.IndexByte(r.lastBuf, '\n')
		r.lastBuf = append(r.lastBuf[:0], r.lastBuf[i+1:]...)
		r.lastN--
	}
}

// held returns every name a streamed record still holds, in order.
func (r *dirRec) held() []string {
	out := strings.Split(string(r.headBuf), "\n")
	if r.lastN > 0 {
		out = append(out, strings.Split(string(r.lastBuf), "\n")...)
	}
	return out
}

// appendShown appends the names of a streamed record, with a gap for those it no longer holds.
func (r *dirRec) appendShown(dst []byte, unit string) []byte {
	start := len(dst)
	dst = append(dst, r.headBuf...)
	if gap := r.n - r.headN - r.lastN; gap > 0 {
		dst = appendGap(append(dst, ' '), gap, unit)
	}
	if r.lastN > 0 {
		dst = append(append(dst, ' '), r.lastBuf...)
	}
	for i := start; i < len(dst); i++ {
		if dst[i] == '\n' {
			dst[i] = ' '
		}
	}
	return dst
}

// reset readies a finished record for reuse, keeping its buffers.
func (r *dirRec) reset(dir string, seq, off int) {
	*r = dirRec{dir: dir, seq: seq, off: off, headBuf: r.headBuf[:0], lastBuf: r.lastBuf[:0]}
}

// dirList is an intrusive doubly linked list of directories.
type dirList struct {
	front, back *dirRec
	n           int
}

func (l *dirList) pushFront(r *dirRec) {
	r.prev, r.next = nil, l.front
	if l.front != nil {
		l.front.prev = r
	}
	l.front = r
	if l.back == nil {
		l.back = r
	}
	l.n++
}

func (l *dirList) remove(r *dirRec) {
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		l.front = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		l.back = r.prev
	}
	r.prev, r.next = nil, nil
	l.n--
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
	dir, name, trail := splitPath(p)
	if trail {
		t.buf = append(append(t.buf[:0], name...), '/')
		name = t.buf
	}
	t.clock++
	r := t.recs[string(dir)]
	switch {
	case r == nil:
		if r = t.free; r != nil {
			t.free = nil
			r.reset(string(dir), t.seq, off)
		} else {
			r = &dirRec{dir: string(dir), seq: t.seq, off: off}
		}
		t.seq++
		t.recs[r.dir] = r
		if t.streaming {
			t.lru.pushFront(r)
		} else {
			t.order = append(t.order, r)
		}
	case t.streaming && t.lru.front != r:
		t.lru.remove(r)
		t.lru.pushFront(r)
	}
	r.used = t.clock
	if t.streaming {
		r.addBounded(name)
		for t.lru.n > openDirs {
			t.evict(t.lru.back)
		}
		return
	}
	r.n++
	r.names = append(r.names, string(name))
	t.held += len(name) + 1
	if t.held > holdChars {
		t.startStreaming()
	}
}

// startStreaming gives up the whole outline: the directories not among the openDirs most recently
// used are finished, least recently used first.
func (t *pathTree) startStreaming() {
	t.streaming = true
	t.win = newWindows(outlineLinesBudget, 0, 0, t.half)
	slices.SortFunc(t.order, func(a, b *dirRec) int { return a.used - b.used })
	for _, r := range t.order {
		names := r.names
		r.names, r.n = nil, 0
		for _, n := range names {
			r.addBounded([]byte(n))
		}
		t.lru.pushFront(r)
	}
	t.order = nil
	for t.lru.n > openDirs {
		t.evict(t.lru.back)
	}
}

func (t *pathTree) evict(r *dirRec) {
	t.lru.remove(r)
	delete(t.recs, r.dir)
	t.finish(r)
	t.free = r
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
	if r.n == 1 && r.dir != "" {
		parent, base := path.Split(strings.TrimSuffix(r.dir, "/"))
		if f := t.fold; f != nil && f.parent == parent && f.entry == string(r.headBuf) {
			f.dirs.addBounded([]byte(base))
			return
		}
		t.flushFold()
		t.fold = &foldRun{parent: parent, entry: string(r.headBuf), off: r.off}
		t.fold.dirs.addBounded([]byte(base))
		return
	}
	t.flushFold()
	if r.n <= fullPathsMax && r.n == r.headN+r.lastN {
		for _, n := range r.held() {
			t.offer(r.dir+n, r.off)
		}
		return
	}
	t.buf = append(append(t.buf[:0], r.dir...), " ("...)
	t.buf = append(strconv.AppendInt(t.buf, int64(r.n), 10), "): "...)
	t.buf = r.appendShown(t.buf, "names")
	t.offerBytes(t.buf, r.off)
}

func (t *pathTree) flushFold() {
	f := t.fold
	if f == nil {
		return
	}
	t.fold = nil
	if f.dirs.n >= 3 {
		t.buf = fmt.Appendf(t.buf[:0], "%s*/%s (%d dirs): ", f.parent, f.entry, f.dirs.n)
		t.buf = f.dirs.appendShown(t.buf, "dirs")
		t.offerBytes(t.buf, f.off)
		return
	}
	for _, d := range f.dirs.held() {
		t.offer(f.parent+d+"/"+f.entry, f.off)
	}
}

func (t *pathTree) offer(line string, off int) { t.offerBytes([]byte(line), off) }

func (t *pathTree) offerBytes(line []byte, off int) {
	t.win.offer(line, t.lines, off)
	t.lines++
}

func (t *pathTree) render(paths int) []string {
	if !t.streaming {
		return outlineWhole(t.order, paths)
	}
	var open []*dirRec
	for r := t.lru.front; r != nil; r = r.next {
		open = append(open, r)
	}
	slices.SortFunc(open, func(a, b *dirRec) int { return a.seq - b.seq })
	for _, r := range open {
		t.evict(r)
	}
	t.flushFold()
	out := []string{plural(paths, "path") + ", by directory:"}
	return append(out, renderItems(t.win.pick(nil), t.lines, "lines")...)
}

// outlineWhole renders an outline from every directory: naming every entry if that fits
// listBudget, else sharing outlineBudget among the directories. Every directory keeps its line
// (the shares shrink until they fit outlineLinesBudget) unless there are too many for that.
func outlineWhole(order []*dirRec, paths int) []string {
	header := fmt.Sprintf("%s in %s:", plural(paths, "path"), plural(len(order), "directory"))
	foldShare := func(int) int { return outlineBudget / 16 }
	if full := outlineItems(order, func(int) int { return math.MaxInt }, foldShare); linesChars(full) <= listBudget {
		return append([]string{header}, full...)
	}
	var items []string
	for budget := outlineBudget; ; budget = budget * 2 / 3 {
		share := func(n int) int { return max(budget/20, budget*n/paths) }
		items = outlineItems(order, share, share)
		if linesChars(items) <= outlineLinesBudget || budget < 100 {
			break
		}
	}
	return append([]string{header}, sample(items, outlineLinesBudget, "directories")...)
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
