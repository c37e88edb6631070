//go:build linux

package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/sys/unix"
)

// openPTY returns the two ends of a new pseudo-terminal.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pts: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return m, s
}

// TestApprovalPromptShowsArgumentsAsTheyAre: the approval prompt shows a model's arguments
// without letting them drive the terminal: a C1 CSI (U+009B) could erase the line and draw
// harmless-looking arguments in its place, and a bidi override reorder them; both are shown
// escaped, so the person approves what they read.
func TestApprovalPromptShowsArgumentsAsTheyAre(t *testing.T) {
	master, tty := openPTY(t)
	if _, err := master.WriteString("n\n"); err != nil { // the person declines
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".nodmix"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := `{tools: {approval: {require: ["nodmix:core:exec"]}}}`
	if err := os.WriteFile(filepath.Join(home, ".nodmix", "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	args := `{"command": ["rm", "-rf", "/tmp/x` + "\u009b2K\u009b1G" + `", "` + "\u202e" + `txt.exe"]}`
	env := map[string]string{"HOME": home, "NODMIX_HOME": filepath.Join(home, ".nodmix")}
	var out, errb bytes.Buffer
	code := Execute(context.Background(), Env{Args: []string{"tools", "call", "exec", "--args", args}, Stdin: tty, Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }})
	prompt := errb.String()
	if code != ExitFailure || !strings.Contains(prompt, "Approve a call to nodmix:core:exec") || !strings.Contains(out.String(), "declined") {
		t.Fatalf("exit code %d, stdout %q, stderr %q; want the prompt and the refusal", code, out.String(), prompt)
	}
	for _, r := range prompt {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)) {
			t.Errorf("the prompt holds %U: %q", r, prompt)
			break
		}
	}
	if !strings.Contains(prompt, `\u009b2K\u009b1G`) || !strings.Contains(prompt, `\u202etxt.exe`) {
		t.Errorf("the prompt does not show the characters escaped: %q", prompt)
	}
}

// echoOn reports whether terminal f echoes what is typed.
func echoOn(t *testing.T, f *os.File) bool {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag&unix.ECHO != 0
}

// readerFunc is an io.Reader of a function.
type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestPromptSecretTurnsEchoOff: a key typed at a terminal is not echoed while it is read, and
// the terminal echoes again afterwards.
func TestPromptSecretTurnsEchoOff(t *testing.T) {
	_, tty := openPTY(t)
	if !echoOn(t, tty) {
		t.Fatal("a new terminal does not echo")
	}
	var echoedWhileRead bool
	in := bufio.NewReader(readerFunc(func(p []byte) (int, error) {
		echoedWhileRead = echoOn(t, tty)
		return copy(p, "sk-typed\n"), nil
	}))
	var out bytes.Buffer
	got, err := promptSecret(t.Context(), tty, in, &out, "API key: ")
	if err != nil || got != "sk-typed" {
		t.Fatalf("promptSecret = %q, %v; want the typed key", got, err)
	}
	if echoedWhileRead {
		t.Error("the terminal echoed while the key was read")
	}
	if !echoOn(t, tty) {
		t.Error("the terminal does not echo after the key was read")
	}
	if out.String() != "API key: \n" {
		t.Errorf("prompt output = %q, want the question and a line's end", out.String())
	}
}
