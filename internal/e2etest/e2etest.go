// Package e2etest finds the real MCP servers and the TypeScript SDK client that end-to-end tests
// run against; `make test` installs them into testdata/e2e with npm.
package e2etest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir returns the absolute path of testdata/e2e. Without its node_modules (or without node) the
// test is skipped, unless NODMIX_E2E=1 says the dependencies must be there, and then it fails.
func Dir(tb testing.TB) string {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "e2e")
	_, statErr := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk"))
	_, nodeErr := exec.LookPath("node")
	if statErr != nil || nodeErr != nil {
		if os.Getenv("NODMIX_E2E") == "1" {
			tb.Fatalf("NODMIX_E2E=1 but the e2e dependencies are missing (make e2e-deps): %v %v", statErr, nodeErr)
		}
		tb.Skip("testdata/e2e/node_modules or node missing; set NODMIX_E2E=1 to require them")
	}
	return dir
}

// Server returns the argv that starts an npm MCP server package (server-everything,
// server-filesystem, server-memory) installed in dir.
func Server(dir, pkg string, args ...string) []string {
	return append([]string{"node", filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")}, args...)
}
