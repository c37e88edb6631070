//go:build unix

package mcphub

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/e2etest"
	"github.com/nodmix/nodmix/internal/leaktest"
)

// TestE2EServerEnvKeepsSecretsOut: a real stdio server's get-env tool does not see what nodmix's
// environment holds beyond the default set, sees its own env, and sees everything with inheritEnv.
func TestE2EServerEnvKeepsSecretsOut(t *testing.T) {
	dir := e2etest.Dir(t)
	leaktest.Check(t)
	const secret = "tvly-e2e-0123456789-must-not-leak"
	t.Setenv("TAVILY_API_KEY", secret)
	t.Setenv("NODMIX_E2E_SECRET", secret)
	t.Setenv("LC_MESSAGES", "C")
	cmd, args := npmServer(dir, "server-everything", "stdio")
	plain := stdioServer("plain", cmd, args)
	plain.Env = map[string]string{"OWN_SETTING": "from-config"}
	inherit := stdioServer("inherit", cmd, args)
	inherit.InheritEnv = true
	h, _ := e2eHub(t, Options{}, plain, inherit)
	waitState(t, h, "plain", StateReady)
	waitState(t, h, "inherit", StateReady)

	env := func(server string) map[string]string {
		t.Helper()
		res, err := callByID(t, h, "mcp:"+server+":get-env", `{}`)
		if err != nil || res.IsError {
			t.Fatalf("get-env of %s: %v %v", server, err, res)
		}
		var m map[string]string
		if err := json.Unmarshal([]byte(res.Text()), &m); err != nil {
			t.Fatalf("get-env of %s: %v\n%s", server, err, res.Text())
		}
		return m
	}
	got := env("plain")
	if strings.Contains(envText(got), secret) {
		t.Errorf("a stdio server sees nodmix's secret: %v", got)
	}
	if got["OWN_SETTING"] != "from-config" || got["PATH"] == "" || got["LC_MESSAGES"] != "C" {
		t.Errorf("the server's own env, PATH and the locale must be there: %v", got)
	}
	// Node adds nothing of its own to process.env, so the keys are exactly the default set.
	allowed := []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "OWN_SETTING"}
	for k := range got {
		if !slices.Contains(allowed, k) && !strings.HasPrefix(k, "LC_") {
			t.Errorf("variable %s passed to a server without inheritEnv", k)
		}
	}
	if all := env("inherit"); all["NODMIX_E2E_SECRET"] != secret {
		t.Error("inheritEnv: true passes the whole environment")
	}
}

func envText(m map[string]string) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// TestE2ECrashedServerStderr: the last lines a server wrote before dying are in its status and
// in the error of a call to one of its (cached) tools.
func TestE2ECrashedServerStderr(t *testing.T) {
	leaktest.Check(t)
	store := newMemManifests()
	cfg := stdioServer("crashy", "sh", []string{"-c", `echo "starting with key $KEY" >&2; echo "Error: Cannot find module '/srv/server.js'" >&2; exit 3`})
	cfg.Env = map[string]string{"KEY": "sk-crashy-secret-value"}
	seedManifest(t, store, cfg, "echo")
	h, _ := e2eHub(t, Options{Manifests: store, Backoff: Backoff{Initial: time.Hour}}, cfg)
	waitState(t, h, "crashy", StateDown)
	st := statusOf(h, "crashy")
	want := []string{"starting with key ***", "Error: Cannot find module '/srv/server.js'"}
	if !slices.Equal(st.Stderr, want) {
		t.Errorf("status stderr = %q, want %q (last error %q)", st.Stderr, want, st.LastError)
	}
	_, err := callByID(t, h, "mcp:crashy:echo", `{}`)
	var ue *UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "its last stderr lines:\n  starting with key ***\n  Error: Cannot find module '/srv/server.js'") {
		t.Errorf("call error = %v, want the server's last stderr lines", err)
	}
	if strings.Contains(err.Error(), "sk-crashy-secret-value") {
		t.Error("the call error holds the server's secret")
	}
}

// A server that prints its command line (as mcp-remote prints the URL it was given) had the
// secrets of its args logged and shown in its stderr lines: they are masked as env values are,
// by the rule `config get` masks args with.
func TestE2EArgSecretsMasked(t *testing.T) {
	leaktest.Check(t)
	log, logged := captureLog(t)
	args := []string{"-c", `for a in "$@"; do echo "arg $a" >&2; done; exit 3`, "sh",
		"--api-key", "sk-flag-value", "--token=tok-eq-value", "GITHUB_TOKEN=ghp-var-value",
		"Authorization: Bearer hdr-token-value", "https://user:url-password@example.com/sse?key=url-query-value",
		"--verbose", "plain-arg"}
	h, _ := e2eHub(t, Options{Log: log, Backoff: Backoff{Initial: time.Hour}}, stdioServer("argy", "sh", args))
	waitState(t, h, "argy", StateDown)
	want := []string{"arg --api-key", "arg ***", "arg --token=***", "arg GITHUB_TOKEN=***",
		"arg Authorization: ***", "arg https://user:***@example.com/sse?***",
		"arg --verbose", "arg plain-arg"}
	if diff := cmp.Diff(want, statusOf(h, "argy").Stderr); diff != "" {
		t.Errorf("stderr lines (-want +got):\n%s", diff)
	}
	for _, secret := range []string{"sk-flag-value", "tok-eq-value", "ghp-var-value", "hdr-token-value", "url-password", "url-query-value"} {
		if strings.Contains(logged.String(), secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
}
