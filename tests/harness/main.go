package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Module is the a2aflow module's path.
const Module = "github.com/a2aflow/a2aflow"

// binary is the a2aflow binary Main built.
var binary string

// Main is the TestMain of a package of end-to-end tests: it builds the
// a2aflow binary into a temporary folder, runs the tests and removes it.
func Main(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "a2aflow-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "a2aflow")
	build := exec.Command("go", "build", "-o", binary, Module+"/cmd/a2aflow")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build a2aflow:", err)
		return 1
	}
	return m.Run()
}

// Binary is the path of the a2aflow binary under test, which Main built.
func Binary() string { return binary }

// Command is exec.Command of the a2aflow binary under test with args.
func Command(args ...string) *exec.Cmd { return exec.Command(binary, args...) }

// Repo is the path of elem (slash-separated, relative to the repository's
// root) in this checkout, wherever the test runs: the go.mod of Module is
// looked for from the working directory up.
func Repo(elem string) string {
	dir, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for {
		if raw, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePath(raw) == Module {
			return filepath.Join(dir, filepath.FromSlash(elem))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("harness: no go.mod of " + Module + " above the working directory")
		}
		dir = parent
	}
}

// modulePath reads the module line of a go.mod.
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
