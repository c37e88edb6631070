package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/config/json5"
	"github.com/nodmix/nodmix/internal/regular"
)

// FileName is the config file's name inside the nodmix home.
const FileName = "nodmix.json5"

// Sentinel errors that callers test for.
var (
	// ErrNotFound: Get or Unset of a path that the file does not set.
	ErrNotFound = errors.New("not set in the config file")
	// ErrModified: Save found that someone else changed the file since it was loaded.
	ErrModified = errors.New("config file changed on disk since it was loaded")
	// ErrNotRegular: the config file's path names a directory, a device, a named pipe or a
	// socket. A symbolic link to a regular file is fine.
	ErrNotRegular = regular.ErrNotRegular
	// ErrNoHome: neither NODMIX_CONFIG, NODMIX_HOME nor HOME is set.
	ErrNoHome = errors.New("cannot locate the nodmix home: set NODMIX_HOME or HOME")
)

// Home returns $NODMIX_HOME, else ~/.nodmix ($HOME/.nodmix).
func Home(getenv func(string) string) (string, error) {
	if h := getenv("NODMIX_HOME"); h != "" {
		return expandHome(h, getenv)
	}
	home := getenv("HOME")
	if home == "" {
		return "", ErrNoHome
	}
	return filepath.Join(home, ".nodmix"), nil
}

// Path returns the config file's path: $NODMIX_CONFIG, else $NODMIX_HOME/nodmix.json5, else
// ~/.nodmix/nodmix.json5. A leading ~/ in the variables means $HOME.
func Path(getenv func(string) string) (string, error) {
	if p := getenv("NODMIX_CONFIG"); p != "" {
		return expandHome(p, getenv)
	}
	home, err := Home(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, FileName), nil
}

func expandHome(p string, getenv func(string) string) (string, error) {
	rest, ok := strings.CutPrefix(p, "~/")
	if !ok && p != "~" {
		return p, nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", ErrNoHome
	}
	return filepath.Join(home, rest), nil
}

// File is the config file with its text. Edits change the text in memory, keeping every byte
// they do not touch, and are validated before they are accepted; Save writes the text
// atomically. A File is not safe for concurrent use.
type File struct {
	path   string
	src    []byte      // current text; nil for a missing file that has not been edited
	disk   []byte      // the text as loaded or last saved, to detect concurrent edits
	exists bool        // the file existed when loaded or has been saved since
	mode   fs.FileMode // permission bits to keep
	dirty  bool
	root   *json5.Node // nil when the text is blank
	cfg    *Config
	errs   []*Error // validation errors of src
}

// Load reads and validates the file at path. A missing file is the empty configuration. A
// syntax error returns a nil File and an error naming path:line:column. Validation errors
// return the File together with every *Error joined, so that a caller can still repair the file
// with Set and Unset; Config then holds what could be decoded, defaults elsewhere.
func Load(path string) (*File, error) {
	f := &File{path: path, mode: 0o600}
	data, mode, err := readBounded(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.cfg = Default()
		return f, nil
	case errors.Is(err, ErrNotRegular):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("read config: %w", err)
	}
	f.mode = mode
	f.exists = true
	f.disk = data
	root, cfg, err := decodeText(data, filepath.Dir(path))
	if cfg == nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	f.src, f.root, f.cfg, f.errs = data, root, cfg, Errors(err)
	return f, err
}

// MaxFileBytes bounds a config file that grows while it is read, so that it cannot take all of
// the memory.
const MaxFileBytes = 16 << 20

// readBounded reads the regular file at path whole, refusing more than MaxFileBytes, and returns
// its permission bits. A path naming anything else (a directory, a device such as /dev/zero, a
// named pipe, a socket) is ErrNotRegular, refused at once by regular.Open, which does not wait
// for a named pipe's writer.
func readBounded(path string) ([]byte, fs.FileMode, error) {
	fh, fi, err := regular.Open(path)
	if nr := (*regular.Error)(nil); errors.As(err, &nr) {
		return nil, 0, fmt.Errorf("config file %q: %w (it is %s)", path, ErrNotRegular, nr.Kind())
	}
	if err != nil {
		return nil, 0, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return nil, 0, err
	}
	if len(data) > MaxFileBytes {
		return nil, 0, fmt.Errorf("%s: larger than %d MiB", path, MaxFileBytes>>20)
	}
	return data, fi.Mode().Perm(), nil
}

// Path returns the file's path.
func (f *File) Path() string { return f.path }

// Config returns the decoded configuration. Do not modify it; it is shared until the next edit.
func (f *File) Config() *Config { return f.cfg }

// Err returns the validation errors of the current text, joined, or nil.
func (f *File) Err() error { return joinErrors(append([]*Error(nil), f.errs...)) }

// Bytes returns a copy of the current text (which includes literal secrets).
func (f *File) Bytes() []byte { return bytes.Clone(f.src) }

// Get returns the value at path (the whole document for "") as indented JSON (compact when
// that would be far larger than the file), with every secret value replaced by "********";
// SecretRefs are shown as they are. A path the file does not set gives ErrNotFound, even where
// a default applies.
func (f *File) Get(path string) ([]byte, error) {
	var segs []string
	if path != "" {
		var err error
		if segs, err = json5.ParsePath(path); err != nil {
			return nil, &Error{Path: path, Rule: "is not a valid path: " + err.Error()}
		}
	}
	if f.root == nil {
		if len(segs) == 0 {
			return []byte("{}"), nil
		}
		return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	n, err := json5.Lookup(f.root, segs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	show, nonFinite := finiteJSON(masker(f.root, nil, segs))
	out, ok := json5.AppendJSONUpTo(nil, f.src, n, "  ", show, min(maxIndentedGet, 1<<20+8*len(f.src)))
	if !ok {
		out = json5.AppendJSON(nil, f.src, n, "", show)
	}
	if at, found := nonFinite(); found {
		return nil, &Error{Path: json5.FormatPath(append(slices.Clip(segs), at...)), Rule: nonFiniteRule}
	}
	return out, nil
}

// nonFiniteRule is what Get says of a number it cannot show: JSON5 spells Infinity and NaN,
// JSON does not, and Get's output is JSON. The validation rule of such a number is the same, so
// the file was already reported as not validating.
const nonFiniteRule = "must be a finite number to be shown as JSON (JSON has no Infinity or NaN)"

// finiteJSON wraps the ReplaceFunc of a rendering so that it notes the first number left to
// render as Infinity or NaN; nonFinite gives its path under the rendered value. A number that
// replace substitutes (a masked secret) is shown as replace says and is not noted.
func finiteJSON(replace json5.ReplaceFunc) (wrapped json5.ReplaceFunc, nonFinite func() ([]string, bool)) {
	var at []string
	found := false
	wrapped = func(path []string, parents []*json5.Node, n *json5.Node) ([]byte, bool) {
		if text, ok := replace(path, parents, n); ok {
			return text, true
		}
		if !found && n.Kind == json5.Number && (math.IsInf(n.Num, 0) || math.IsNaN(n.Num)) {
			at, found = slices.Clone(path), true // the renderer reuses path's array
		}
		return nil, false
	}
	return wrapped, func() ([]string, bool) { return at, found }
}

// maxIndentedGet bounds the indented text of Get, twice the largest file; a smaller file's text
// is bounded at 1 MiB and 8 times its size, far more than indenting a file of normal depth
// takes. Past the bound the value is given as compact JSON: every line's indentation grows with
// its depth, so deep nesting indents a file of a few megabytes to tens of gigabytes.
const maxIndentedGet = 2 * MaxFileBytes

// Set makes the value at path equal to value, JSON5 text; text that does not parse as JSON5 is
// taken as a plain string, so tavily means "tavily". An existing value is replaced in place; a
// missing one is added to the deepest existing object (with the objects in between) in the
// style of its siblings. The edit is refused, leaving the File unchanged, when it introduces a
// validation error; the error returned then joins those *Errors. Validation errors the file
// already had do not block an edit, so that a broken file can be repaired step by step.
func (f *File) Set(path string, value []byte) error {
	segs, err := json5.ParsePath(path)
	if err != nil {
		return &Error{Path: path, Rule: "is not a valid path: " + err.Error()}
	}
	if _, err := json5.Parse(value); err != nil {
		value = json5.AppendQuote(nil, string(value), '"')
	}
	base := f.src
	if json5.IsBlank(base) {
		base = bytes.Clone(base)
		if len(base) > 0 && base[len(base)-1] != '\n' {
			base = append(base, '\n')
		}
		base = append(base, "{}\n"...)
	}
	out, err := json5.Set(base, segs, value)
	if err != nil {
		var se *json5.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		return &Error{Path: path, Rule: "cannot be set: " + err.Error()}
	}
	return f.accept(out)
}

// SetPluginEnabled turns a plugin on or off: plugins.entries.<id>.enabled.
func (f *File) SetPluginEnabled(id string, on bool) error {
	if !catalog.ValidName(id) {
		return &Error{Path: "plugins.entries." + id, Rule: pluginIDRule}
	}
	value := "false"
	if on {
		value = "true"
	}
	return f.Set("plugins.entries."+id+".enabled", []byte(value))
}

// Unset removes the member or array element at path, with its comma and, when it has lines of
// its own, those lines. Like Set, it is refused if the result breaks a rule the file did not
// already break. A path the file does not set gives ErrNotFound.
func (f *File) Unset(path string) error {
	segs, err := json5.ParsePath(path)
	if err != nil {
		return &Error{Path: path, Rule: "is not a valid path: " + err.Error()}
	}
	if f.root == nil {
		return fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	out, err := json5.Unset(f.src, segs)
	switch {
	case errors.Is(err, json5.ErrNotFound):
		return fmt.Errorf("%s: %w", path, ErrNotFound)
	case err != nil:
		return fmt.Errorf("unset %s: %w", path, err)
	}
	return f.accept(out)
}

// accept validates edited text and adopts it unless it adds validation errors.
func (f *File) accept(out []byte) error {
	root, cfg, err := decodeText(out, filepath.Dir(f.path))
	if cfg == nil {
		// The editor produced text that does not parse: a bug, but never one to save.
		return fmt.Errorf("edit produced invalid JSON5: %w", err)
	}
	errs := Errors(err)
	had := make(map[string]bool, len(f.errs))
	for _, e := range f.errs {
		had[e.Error()] = true
	}
	var added []*Error
	for _, e := range errs {
		if !had[e.Error()] {
			added = append(added, e)
		}
	}
	if len(added) > 0 {
		return joinErrors(added)
	}
	f.src, f.root, f.cfg, f.errs, f.dirty = out, root, cfg, errs, true
	return nil
}

// Save writes the text if it changed: to a temporary file in the same directory, synced, then
// renamed over the original, so the file is never seen half-written. The original's mode is
// kept; a new file is created 0600 in a directory created 0700. If the file changed on disk
// since Load, Save writes nothing and returns ErrModified; concurrent savers are serialised, so
// one of them always sees the other's change.
func (f *File) Save() error {
	if !f.dirty {
		return nil
	}
	target := f.path
	if real, err := filepath.EvalSymlinks(f.path); err == nil {
		target = real // replace the link's target, not the link
	} else if end, ok := linkEnd(f.path); ok {
		target = end // a link to a file not made yet: make it there, and keep the link
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("save config: %w", err)
	}
	defer lockDir(dir)()
	// Read as Load does: a path that has become a named pipe, a device or a directory since
	// Load is refused here, never read into (a pipe would block) nor renamed over (a device
	// such as /dev/null would be replaced by a regular file).
	current, _, err := readBounded(target)
	switch {
	case err == nil && (!f.exists || !bytes.Equal(current, f.disk)):
		return fmt.Errorf("save %s: %w", f.path, ErrModified)
	case errors.Is(err, fs.ErrNotExist) && f.exists:
		return fmt.Errorf("save %s: %w", f.path, ErrModified)
	case errors.Is(err, ErrNotRegular):
		return err
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("save config: %w", err)
	}
	if err := writeAtomic(target, f.src, f.mode); err != nil {
		return fmt.Errorf("save config: %w", err)
	}
	f.disk = bytes.Clone(f.src)
	f.exists, f.dirty = true, false
	return nil
}

// linkEnd follows the symbolic links from path, the last of which names a file that does not
// exist, and returns that file's path; false if path is no link or the chain does not end so.
func linkEnd(path string) (string, bool) {
	p := path
	for range 40 { // as many links as Linux follows
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, p != path
		}
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return "", false
		}
		to, err := os.Readlink(p)
		if err != nil {
			return "", false
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(p), to)
		}
		p = to
	}
	return "", false
}

// staleTemp is the age past which a temporary file of writeAtomic is taken to be left over
// from a writer that was killed between creating and renaming it; a live writer holds its
// file for milliseconds.
const staleTemp = time.Minute

func writeAtomic(target string, data []byte, mode fs.FileMode) (err error) {
	dir := filepath.Dir(target)
	prefix := "." + filepath.Base(target) + ".tmp-"
	removeStaleTemps(dir, prefix, time.Now().Add(-staleTemp))
	tmp, err := os.CreateTemp(dir, prefix+"*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), target); err != nil {
		return err
	}
	// Make the rename itself durable; not every platform can sync a directory.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// removeStaleTemps removes the temporary files of earlier writes (name starting with prefix)
// last modified before cutoff. It is best effort: a file it cannot remove stays for the next
// write to try again, and the write itself goes ahead.
func removeStaleTemps(dir, prefix string, cutoff time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
