package main_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBashEnvironmentWithheld: a model's bash command sees the user's environment, but none of
// the variables nodmix reads secrets from, unless tools.exec.env passes one on purpose.
func TestBashEnvironmentWithheld(t *testing.T) {
	work := t.TempDir()
	home := filepath.Join(work, ".nodmix")
	writeFile(t, filepath.Join(home, "nodmix.json5"), `{
  tools: { exec: { env: { GIVEN_KEY: { $env: "ANTHROPIC_API_KEY" } } } },
  mcp: { servers: { off: { command: "true", enabled: false, env: { T: { $env: "MY_SERVER_TOKEN" } } } } },
}`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "tools", "call", "bash", "--args", `{"command":"env"}`)
	cmd.Dir = work
	cmd.Env = []string{
		"HOME=" + work, "NODMIX_HOME=" + home, "PATH=" + os.Getenv("PATH"), "KEEP_ME=kept",
		"TAVILY_API_KEY=tvly-secret-1", "OPENAI_API_KEY=sk-secret-2", "MY_SERVER_TOKEN=tok-secret-3",
		"ANTHROPIC_API_KEY=sk-ant-given",
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tools call bash: %v\n%s", err, stderr.String())
	}
	env := string(out)
	for _, secret := range []string{"tvly-secret-1", "sk-secret-2", "tok-secret-3", "ANTHROPIC_API_KEY="} {
		if strings.Contains(env, secret) {
			t.Errorf("bash saw %s:\n%s", secret, env)
		}
	}
	for _, want := range []string{"KEEP_ME=kept", "GIVEN_KEY=sk-ant-given", "HOME=" + work} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("bash did not get %s:\n%s", want, env)
		}
	}
}

func writeFile(t *testing.T, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
