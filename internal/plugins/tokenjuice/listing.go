package tokenjuice

import (
	"bytes"
	"fmt"
	"strings"
)

// Listings of system tools: package databases (apt-cache, dpkg -l), processes (ps), a package's
// files (pip show -f) and unified diffs of files (diff -u, diff -r). Each keeps what identifies
// an entry (a name, a version, a command, a changed line) and drops what repeats (alignment,
// descriptions, version tables, context lines), naming every entry up to a budget and sampling
// beyond it with a count of what was left out.

// listItemsBudget bounds the characters of the entries a listing names; past it they are sampled
// (first, middle and last entries) and the gap says how many were left out.
const listItemsBudget = 3000

func aptCacheIs(sub string) func(*command, *simple) bool {
	return func(_ *command, s *simple) bool { return s.name() == "apt-cache" && firstOperand(s) == sub }
}

// reduceAptPolicy keeps, for each package, its installed and candidate versions on one line; the
// version tables (every version and the archive it comes from) go.
func reduceAptPolicy(d *doc) (string, bool) {
	var out []string
	cur := ""
	tables := 0
	for _, l := range d.lines {
		t := strings.TrimSpace(l)
		switch {
		case l == "":
		case !strings.HasPrefix(l, " ") && strings.HasSuffix(l, ":"):
			out = append(out, l)
			cur = l
		case strings.HasPrefix(t, "Installed:") || strings.HasPrefix(t, "Candidate:"):
			if cur != "" && len(out) > 0 {
				out[len(out)-1] += " " + t
			} else {
				out = append(out, l)
			}
		case t == "Version table:":
			tables++
		case strings.HasPrefix(l, "     ") || strings.HasPrefix(l, " *** "):
		case strings.HasPrefix(l, "Package files:"):
			out = append(out, l)
			cur = ""
		default:
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return "", false
	}
	if tables > 0 {
		out = append(out, fmt.Sprintf("(%s omitted)", plural(tables, "version table")))
	}
	return strings.Join(out, "\n"), true
}

var nameDescRE = lazyRE(`^(\S+) - `)

// reduceNameList serves "name - description" listings (apt-cache search): every name, without
// the descriptions, sampled past listItemsBudget.
func reduceNameList(d *doc) (string, bool) {
	var names, other []string
	for _, l := range d.lines {
		if m := nameDescRE.FindStringSubmatch(l); m != nil {
			names = append(names, m[1])
		} else if l != "" {
			other = append(other, l)
		}
	}
	if len(names) == 0 {
		return "", false
	}
	out := []string{plural(len(names), "package") + " (descriptions omitted):"}
	out = append(out, wrapWords(sample(names, listItemsBudget, "names"), 100))
	return strings.Join(append(out, other...), "\n"), true
}

var dpkgRowRE = lazyRE(`^([a-zA-Z][a-zA-Z ]?[a-zA-Z ]?)\s+(\S+)\s+(\S+)\s+(\S+)(?:\s+(.*))?$`)

// reduceDpkgList serves dpkg -l: the legend goes; installed packages are listed as "name
// version", the others by name under their status, without architectures and descriptions.
func reduceDpkgList(d *doc) (string, bool) {
	byStatus := map[string][]string{}
	var order []string
	rows := 0
	for _, l := range d.lines {
		if strings.HasPrefix(l, "Desired=") || strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "|/") ||
			strings.HasPrefix(l, "||/") || strings.HasPrefix(l, "+++") || l == "" {
			continue
		}
		m := dpkgRowRE.FindStringSubmatch(l)
		if m == nil {
			return "", false
		}
		st := strings.TrimSpace(m[1])
		item := m[2]
		if m[3] != "<none>" {
			item += " " + m[3]
		}
		if byStatus[st] == nil {
			order = append(order, st)
		}
		byStatus[st] = append(byStatus[st], item)
		rows++
	}
	if rows == 0 {
		return "", false
	}
	out := []string{fmt.Sprintf("%s (status: name version; architectures and descriptions omitted):", plural(rows, "package"))}
	for _, st := range order {
		items := byStatus[st]
		share := max(listItemsBudget/8, listItemsBudget*len(items)/rows)
		out = append(out, fmt.Sprintf("%s (%d): %s", st, len(items), strings.Join(sample(items, share, "packages"), ", ")))
	}
	return strings.Join(out, "\n"), true
}

// reducePs serves ps listings: the header stays as printed, each row loses its alignment, and rows
// that run the same command are shown once with their count and process ids.
func reducePs(d *doc) (string, bool) {
	if len(d.lines) < 2 {
		return "", false
	}
	header := d.lines[0]
	cols := strings.Fields(header)
	if len(cols) < 2 || !strings.Contains(header, "PID") {
		return "", false
	}
	pidCol := -1
	for i, c := range cols {
		if c == "PID" {
			pidCol = i
		}
	}
	type group struct {
		row  string
		pids []string
	}
	var order []*group
	byCmd := map[string]*group{}
	for _, l := range d.lines[1:] {
		f := strings.Fields(l)
		if len(f) < len(cols) {
			if l != "" {
				order = append(order, &group{row: l})
			}
			continue
		}
		cmd := strings.Join(f[len(cols)-1:], " ")
		g := byCmd[cmd]
		if g == nil {
			g = &group{row: strings.Join(f, " ")}
			byCmd[cmd] = g
			order = append(order, g)
		}
		if pidCol >= 0 {
			g.pids = append(g.pids, f[pidCol])
		}
	}
	procs := 0
	for _, g := range order {
		procs += max(len(g.pids), 1)
	}
	out := []string{header}
	for _, g := range order {
		row := clip(g.row, maxLineChars)
		if len(g.pids) > 1 {
			row += fmt.Sprintf("  (×%d, pids %s)", len(g.pids), strings.Join(sample(g.pids, 60, "pids"), " "))
		}
		out = append(out, row)
	}
	rows := sample(out[1:], listItemsBudget*2, "rows")
	return strings.Join(append(append(out[:1], rows...), plural(procs, "process")), "\n"), true
}

// reducePipShow keeps a package's fields as printed and outlines its files like a path listing.
func reducePipShow(d *doc) (string, bool) {
	var out []string
	for i, l := range d.lines {
		if l == "Files:" {
			var files []byte
			for _, f := range d.lines[i+1:] {
				files = append(append(files, strings.TrimSpace(f)...), '\n')
			}
			body, ok := reducePaths(&doc{raw: files})
			if ok {
				out = append(out, "Files: "+body)
			}
			return strings.Join(out, "\n"), true
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n"), true
}

// reduceUnifiedDiff serves diff -u and diff -r: headers lose their timestamps, context lines go,
// and every changed line stays up to a budget, past which the changed lines are sampled and the
// hunk headers kept ahead of them.
func reduceUnifiedDiff(d *doc) (string, bool) {
	var out []string
	changed, context := 0, 0
	for _, l := range d.lines {
		switch {
		case strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ "):
			if i := strings.IndexByte(l, '\t'); i > 0 {
				l = l[:i] // the file's time stamp
			}
			out = append(out, l)
		case strings.HasPrefix(l, "@@"), strings.HasPrefix(l, "Only in "), strings.HasPrefix(l, "diff "),
			strings.HasPrefix(l, "Binary files "), strings.HasPrefix(l, `\`):
			out = append(out, l)
		case strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-"):
			out = append(out, l)
			changed++
		case strings.HasPrefix(l, " ") || l == "":
			context++
		default:
			out = append(out, l)
		}
	}
	if changed == 0 && len(out) == 0 {
		return "", false
	}
	if context > 0 {
		out = append(out, fmt.Sprintf("(%s of context omitted)", plural(context, "line")))
	}
	return strings.Join(selectFailure(out, listItemsBudget, isDiffHeader, listItemsBudget), "\n"), true
}

// isDiffHeader: the lines that say where changes are (hunk headers, "Only in", "diff -r" lines),
// kept ahead of the changed lines when there are too many of those.
func isDiffHeader(l []byte) bool {
	return bytes.HasPrefix(l, []byte("@@")) || bytes.HasPrefix(l, []byte("Only in ")) || bytes.HasPrefix(l, []byte("diff "))
}

func isUnifiedDiff(_ *command, s *simple) bool {
	return (s.name() == "diff" || s.name() == "colordiff") && (s.hasShort('u') || s.hasPrefix("-U", "--unified"))
}

// recordDropRE are the fields of a package record that identify a file rather than say anything
// about the package (checksums, the archive path).
var recordDropRE = lazyRE(`^(MD5sum|SHA1|SHA256|SHA512|Description-md5|Filename|Size|Installed-Size|Multi-Arch|Priority|Maintainer|Original-Maintainer|Tag): `)

// reduceRecords serves package records in "Field: value" stanzas (apt-cache show, apt show,
// dpkg -s): each field on one line, long values cut in the middle, continuation lines (tags, the
// long description) and checksums counted rather than shown.
func reduceRecords(d *doc) (string, bool) {
	var out []string
	records, cont, dropped := 0, 0, 0
	inRecord := false
	for _, l := range d.lines {
		switch {
		case l == "":
			inRecord = false
		case strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t"):
			cont++
		case strings.Contains(l, ": ") || strings.HasSuffix(l, ":"):
			if !inRecord {
				records++
				inRecord = true
				if records > 1 {
					out = append(out, "")
				}
			}
			if recordDropRE.MatchString(l) {
				dropped++
				continue
			}
			out = append(out, clip(l, 200))
		default:
			out = append(out, l)
		}
	}
	if records == 0 {
		return "", false
	}
	if cont+dropped > 0 {
		out = append(out, fmt.Sprintf("(%s of %s: %d continuation lines and %d checksum, size and file fields omitted)", plural(records, "record"), plural(len(d.lines), "line"), cont, dropped))
	}
	return strings.Join(selectLines(out, listItemsBudget, nil, 0), "\n"), true
}
