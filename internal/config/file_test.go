package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPathAndHome(t *testing.T) {
	tests := []struct {
		env          map[string]string
		path, home   string
		pathErr, hom error
	}{
		{env: map[string]string{"HOME": "/h"}, path: "/h/.nodmix/nodmix.json5", home: "/h/.nodmix"},
		{env: map[string]string{"HOME": "/h", "NODMIX_HOME": "/n"}, path: "/n/nodmix.json5", home: "/n"},
		{env: map[string]string{"HOME": "/h", "NODMIX_HOME": "/n", "NODMIX_CONFIG": "/c/x.json5"}, path: "/c/x.json5", home: "/n"},
		{env: map[string]string{"HOME": "/h", "NODMIX_CONFIG": "~/cfg.json5"}, path: "/h/cfg.json5", home: "/h/.nodmix"},
		{env: map[string]string{"NODMIX_CONFIG": "/c/x.json5"}, path: "/c/x.json5", hom: ErrNoHome},
		{env: map[string]string{}, pathErr: ErrNoHome, hom: ErrNoHome},
	}
	for _, tt := range tests {
		getenv := func(k string) string { return tt.env[k] }
		path, err := Path(getenv)
		if !errors.Is(err, tt.pathErr) || path != filepath.FromSlash(tt.path) {
			t.Errorf("Path(%v) = %q, %v; want %q, %v", tt.env, path, err, tt.path, tt.pathErr)
		}
		home, err := Home(getenv)
		if !errors.Is(err, tt.hom) || home != filepath.FromSlash(tt.home) {
			t.Errorf("Home(%v) = %q, %v; want %q, %v", tt.env, home, err, tt.home, tt.hom)
		}
	}
}

func TestMissingFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", ".nodmix")
	path := filepath.Join(dir, "nodmix.json5")
	f, err := Load(path)
	if err != nil {
		t.Fatalf("Load of a missing file: %v", err)
	}
	if diff := cmp.Diff(Default(), f.Config(), secretCmp); diff != "" {
		t.Errorf("missing file is not the empty config:\n%s", diff)
	}
	if got, err := f.Get(""); err != nil || string(got) != "{}" {
		t.Errorf("Get(\"\") = %q, %v", got, err)
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("Save without edits created the file: %v", err)
	}
	if err := f.Set("plugins.entries.tokenjuice.enabled", []byte("true")); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  plugins: {\n    entries: {\n      tokenjuice: {\n        enabled: true,\n      },\n    },\n  },\n}\n"
	if string(data) != want {
		t.Errorf("created file:\n%s\nwant:\n%s", data, want)
	}
	if runtime.GOOS != "windows" {
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
			t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
		}
		if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
			t.Errorf("dir mode %v, want 0700", fi.Mode().Perm())
		}
	}
	if e := f.Config().Plugins.Entries["tokenjuice"].Enabled; e == nil || !*e {
		t.Errorf("Config() does not reflect the edit")
	}
}

const commented = `// my config
{
  tools: {
    toolSearch: true, // code mode
  },
}
`

func TestSetKeepsTextAndSaves(t *testing.T) {
	path := writeFile(t, commented, 0o640)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct{ path, value string }{
		{"tools.web.search.provider", "tavily"}, // not JSON5: a plain string
		{"tools.toolSearch", `{mode: "tools"}`},
		{"plugins.entries.tavily.enabled", "true"},
	}
	for _, s := range steps {
		if err := f.Set(s.path, []byte(s.value)); err != nil {
			t.Fatalf("Set(%s, %s): %v", s.path, s.value, err)
		}
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	want := `// my config
{
  tools: {
    toolSearch: {mode: "tools"}, // code mode
    web: {
      search: {
        provider: "tavily",
      },
    },
  },
  plugins: {
    entries: {
      tavily: {
        enabled: true,
      },
    },
  },
}
`
	data, _ := os.ReadFile(path)
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("saved text (-want +got):\n%s", diff)
	}
	if !bytes.Equal(f.Bytes(), data) {
		t.Errorf("Bytes() differs from the saved file")
	}
	if runtime.GOOS != "windows" {
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
			t.Errorf("mode after Save %v, want the original 0640", fi.Mode().Perm())
		}
	}
	if ts := f.Config().ToolSearch(); !ts.Enabled || ts.Mode != "tools" {
		t.Errorf("ToolSearch after edits = %+v", ts)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("Save left %d files in the directory, want 1", len(entries))
	}
}

func TestRefusedSetLeavesEverythingUnchanged(t *testing.T) {
	path := writeFile(t, commented, 0o600)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	before, cfgBefore := f.Bytes(), f.Config()
	tests := []struct {
		path, value string
		want        []string
	}{
		{"tools.toolSearch.mode", `"tools"`, []string{"tools.toolSearch.mode: cannot be set: tools.toolSearch is a boolean, not an object"}},
		{"tools.toolSearch", `{mode: "directory"}`, []string{"tools.toolSearch.mode: must be one of code, tools"}},
		{"tools.discoveryMode", "sometimes", []string{"tools.discoveryMode: must be one of off, auto, all, mcp-only"}},
		{"tools.allow", `["a", 1]`, []string{"tools.allow: must be an array of strings"}},
		{"tools.nope", "1", []string{"tools.nope: unknown key (known keys: discoveryMode, essentialOverride, toolSearch, allow, deny, approval, hooks, web, exec)"}},
		{"mcp.servers.x.args", `["a"]`, []string{"mcp.servers.x: needs either command or url"}},
		{"tools.exec.timeoutSeconds", "1.5", []string{"tools.exec.timeoutSeconds: must be an integer from 1 to 86400"}},
		{"a..b", "1", []string{`a..b: is not a valid path: path "a..b": empty segment`}},
	}
	for _, tt := range tests {
		err := f.Set(tt.path, []byte(tt.value))
		if diff := cmp.Diff(tt.want, messages(err)); diff != "" {
			t.Errorf("Set(%s, %s) errors (-want +got):\n%s", tt.path, tt.value, diff)
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Set(%s) error %v is not an *Error", tt.path, err)
		}
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != commented || !bytes.Equal(f.Bytes(), before) || f.Config() != cfgBefore {
		t.Errorf("a refused Set changed the file:\n%s", data)
	}
}

func TestUnsetAndPluginToggle(t *testing.T) {
	path := writeFile(t, commented, 0o600)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetPluginEnabled("tokenjuice", true); err != nil {
		t.Fatal(err)
	}
	if err := f.SetPluginEnabled("tokenjuice", false); err != nil {
		t.Fatal(err)
	}
	if err := f.SetPluginEnabled("../x", true); err == nil || err.Error() != "plugins.entries.../x: plugin id must match ^[A-Za-z0-9_-]{1,64}$" {
		t.Errorf("bad plugin id error = %v", err)
	}
	if err := f.Unset("tools.toolSearch"); err != nil {
		t.Fatal(err)
	}
	if err := f.Unset("tools.toolSearch"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Unset error = %v, want ErrNotFound", err)
	}
	want := `// my config
{
  tools: {},
  plugins: {
    entries: {
      tokenjuice: {
        enabled: false,
      },
    },
  },
}
`
	if diff := cmp.Diff(want, string(f.Bytes())); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	if e := f.Config().Plugins.Entries["tokenjuice"].Enabled; e == nil || *e {
		t.Errorf("tokenjuice enabled = %v, want false", e)
	}
}

func TestRefusedUnset(t *testing.T) {
	path := writeFile(t, `{mcp: {servers: {fs: {command: "npx"}}}}`, 0o600)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Unset("mcp.servers.fs.command")
	if diff := cmp.Diff([]string{"mcp.servers.fs: needs either command or url"}, messages(err)); diff != "" {
		t.Errorf("Unset errors (-want +got):\n%s", diff)
	}
	if string(f.Bytes()) != `{mcp: {servers: {fs: {command: "npx"}}}}` {
		t.Errorf("refused Unset changed the text: %s", f.Bytes())
	}
}

func TestLoadInvalidFileCanBeRepaired(t *testing.T) {
	path := writeFile(t, "{\n  tools: {\n    discoveryMode: 'sometimes',\n    toolSearch: 'yes',\n  },\n}\n", 0o600)
	f, err := Load(path)
	if diff := cmp.Diff([]string{
		"tools.discoveryMode: must be one of off, auto, all, mcp-only",
		"tools.toolSearch: must be a boolean or an object",
	}, messages(err)); diff != "" {
		t.Fatalf("Load errors (-want +got):\n%s", diff)
	}
	if f == nil {
		t.Fatal("Load returned no File for an invalid file")
	}
	// Fixing one error is accepted although the other remains; a new error is not.
	if err := f.Set("tools.discoveryMode", []byte("all")); err != nil {
		t.Fatalf("repairing Set refused: %v", err)
	}
	if err := f.Set("tools.allow", []byte("1")); err == nil {
		t.Error("Set adding a new error was accepted")
	}
	if got := messages(f.Err()); !cmp.Equal(got, []string{"tools.toolSearch: must be a boolean or an object"}) {
		t.Errorf("Err() = %v", got)
	}
	if err := f.Set("tools.toolSearch", []byte("true")); err != nil {
		t.Fatal(err)
	}
	if f.Err() != nil || f.Config().Tools.DiscoveryMode != "all" {
		t.Errorf("after repair: Err %v, mode %q", f.Err(), f.Config().Tools.DiscoveryMode)
	}
}

func TestLoadSyntaxError(t *testing.T) {
	path := writeFile(t, "{\n  tools: {\n    allow: [1 2],\n  },\n}\n", 0o600)
	f, err := Load(path)
	if f != nil {
		t.Error("Load returned a File for a file that does not parse")
	}
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 3 || se.Column != 15 {
		t.Fatalf("error = %v, want a *SyntaxError at 3:15", err)
	}
	if want := path + ":3:15: unexpected '2', expected ',' or ']' after array element"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestSaveDetectsConcurrentChange(t *testing.T) {
	path := writeFile(t, commented, 0o600)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Set("tools.allow", []byte(`["*"]`)); err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(commented, "true", "false", 1)
	if err := os.WriteFile(path, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(); !errors.Is(err, ErrModified) {
		t.Fatalf("Save error = %v, want ErrModified", err)
	}
	if data, _ := os.ReadFile(path); string(data) != other {
		t.Errorf("Save overwrote a concurrent change")
	}
}

// TestConcurrentSavesLoseNoEdit: savers racing on one file (scripts running `config set` side
// by side) each either keep their edit or get ErrModified, never success with the edit lost to
// another saver's rename.
func TestConcurrentSavesLoseNoEdit(t *testing.T) {
	path := writeFile(t, "{}\n", 0o600)
	const n = 16
	saved := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := Load(path)
			if err != nil {
				t.Error(err)
				return
			}
			if err := f.Set(fmt.Sprintf("mcp.servers.s%d", i), []byte(`{command: "x"}`)); err != nil {
				t.Error(err)
				return
			}
			switch err := f.Save(); {
			case err == nil:
				saved[i] = true
			case !errors.Is(err, ErrModified):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(saved, true) {
		t.Fatal("no saver succeeded")
	}
	for i, ok := range saved {
		if _, kept := f.Config().MCP.Servers[fmt.Sprintf("s%d", i)]; ok && !kept {
			t.Errorf("saver %d succeeded, but its edit is not in the file", i)
		}
	}
}

func TestSaveThroughSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on windows")
	}
	real := writeFile(t, "{}\n", 0o600)
	link := filepath.Join(t.TempDir(), "nodmix.json5")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	setListen(t, link)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if data, _ := os.ReadFile(real); !strings.Contains(string(data), `listen: "0.0.0.0:9000"`) {
		t.Errorf("target not updated:\n%s", data)
	}
}

// TestSaveThroughDanglingSymlink: a config path that is a link (a dotfiles checkout, say) to a
// file not made yet gets that file, through a relative link too; the links stay.
func TestSaveThroughDanglingSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on windows")
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "nodmix.json5")
	mid := filepath.Join(dir, "mid.json5")
	link := filepath.Join(dir, "home", "nodmix.json5")
	for _, d := range []string{filepath.Dir(real), filepath.Dir(link)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("dotfiles/nodmix.json5", mid); err != nil { // relative to its own directory
		t.Fatal(err)
	}
	if err := os.Symlink(mid, link); err != nil {
		t.Fatal(err)
	}
	setListen(t, link)
	for _, l := range []string{link, mid} {
		if fi, err := os.Lstat(l); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s was replaced: %v", l, err)
		}
	}
	if data, err := os.ReadFile(real); err != nil || !strings.Contains(string(data), `"0.0.0.0:9000"`) {
		t.Errorf("the link's target: %q, %v", data, err)
	}
}

// setListen sets gateway.listen in the config at path and saves it.
func setListen(t *testing.T, path string) {
	t.Helper()
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Set("gateway.listen", []byte(`"0.0.0.0:9000"`)); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
}

func TestBlankFileWithComment(t *testing.T) {
	path := writeFile(t, "// nothing configured yet", 0o600)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Set("tools.deny", []byte(`["nodmix:core:bash"]`)); err != nil {
		t.Fatal(err)
	}
	want := "// nothing configured yet\n{\n  tools: {\n    deny: [\"nodmix:core:bash\"],\n  },\n}\n"
	if diff := cmp.Diff(want, string(f.Bytes())); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}
