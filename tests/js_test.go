package tests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// jsSDKVersion is the @a2a-js/sdk version tests/js/package-lock.json pins.
const jsSDKVersion = "1.3.0"

// TestJSClients drives a2aflow with the official A2A JavaScript SDK
// (@a2a-js/sdk, run by node from tests/js/a2a_client.mjs) over the four
// variants: its 1.0 JSON-RPC and HTTP+JSON transports, and its 0.3
// compatibility transports. The scenarios and the expectations are the Go
// clients' (compat_test.go). It skips only when node is not installed;
// missing node_modules are installed with `npm ci`.
func TestJSClients(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; .ci/run installs Node.js to run the JavaScript client tests")
	}
	requireNode20(t, node)
	dir := ensureJSDeps(t)
	s := harness.StartServe(t, t.TempDir())
	for _, v := range matrixVariants {
		t.Run("JS "+v.String(), func(t *testing.T) {
			got := runJSClient(t, node, dir, s.APIURL, v)
			checkClientReport(t, wantFor(t, "JS", v), got)
		})
	}
}

// requireNode20 fails unless node is at least version 20, which @a2a-js/sdk
// needs.
func requireNode20(t *testing.T, node string) {
	t.Helper()
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		t.Fatalf("node --version: %v", err)
	}
	version := strings.TrimSpace(string(out))
	major, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 2)[0])
	if err != nil || major < 20 {
		t.Fatalf("node %s is installed; @a2a-js/sdk %s needs node 20 or later", version, jsSDKVersion)
	}
}

// ensureJSDeps returns the absolute path of tests/js with its node_modules
// installed: when @a2a-js/sdk is missing or not the pinned version, it runs
// `npm ci` (which reaches the npm registry) and fails clearly if it cannot.
func ensureJSDeps(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("js")
	if err != nil {
		t.Fatal(err)
	}
	if installedJSSDK(dir) == jsSDKVersion {
		return dir
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("tests/js/node_modules lacks @a2a-js/sdk %s and npm is not installed: install npm and run `npm ci --prefix tests/js`", jsSDKVersion)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tests/js/node_modules lacks @a2a-js/sdk %s and `npm ci` in tests/js failed (it needs the npm registry): %v\n%s", jsSDKVersion, err, out)
	}
	if got := installedJSSDK(dir); got != jsSDKVersion {
		t.Fatalf("after `npm ci` in tests/js, @a2a-js/sdk is %q, want %s: check tests/js/package-lock.json", got, jsSDKVersion)
	}
	return dir
}

// installedJSSDK returns the version of @a2a-js/sdk under dir/node_modules,
// or "" when it is not installed.
func installedJSSDK(dir string) string {
	raw, err := os.ReadFile(filepath.Join(dir, "node_modules", "@a2a-js", "sdk", "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(raw, &pkg) != nil {
		return ""
	}
	return pkg.Version
}

// runJSClient runs a2a_client.mjs against baseURL over variant v and decodes
// its report.
func runJSClient(t *testing.T, node, dir, baseURL string, v matrixVariant) clientReport {
	t.Helper()
	var got clientReport
	runClientReport(t, 2*time.Minute, "node a2a_client.mjs "+v.String(), dir, &got, node, "a2a_client.mjs", baseURL, string(v.binding), v.version)
	return got
}
