package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIReference keeps docs/cli.md, the reference of every command, in
// step with the commands: it fails when the file differs from what the code
// renders; `go generate ./internal/cli` rewrites it.
func TestCLIReference(t *testing.T) {
	clearA2AflowEnv(t)
	prog := os.Args[0]
	os.Args[0] = "a2aflow" // the name the commands' texts use (cmdutil.ProgName)
	t.Cleanup(func() { os.Args[0] = prog })
	got, err := cliReference(testApp())
	if err != nil {
		t.Fatal(err)
	}
	if checkReference(t, "cli.md", got, "TestCLIReference") {
		return
	}
	for _, heading := range []string{"## a2aflow serve\n", "## a2aflow send\n", "## a2aflow approve\n", "## a2aflow waitpoint complete\n", "## a2aflow replay\n"} {
		if !strings.Contains(got, heading) {
			t.Errorf("reference has no section %q", strings.TrimSpace(heading))
		}
	}
	for _, deprecated := range []string{"`--push-key`", "`--credentials`"} {
		if strings.Contains(got, deprecated) {
			t.Errorf("reference lists the deprecated %s (config.md's Deprecated names has it)", deprecated)
		}
	}
}

// checkReference compares docs/NAME with the reference the code renders,
// or with -update writes it and reports true (nothing more to check).
func checkReference(t *testing.T, name, got, test string) (updated bool) {
	t.Helper()
	path := filepath.Join("..", "..", "docs", name)
	if *updateReference {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return true
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("docs/%s is stale: run `go generate ./internal/cli` (go test ./internal/cli -run %s -update)", name, test)
	}
	return false
}
