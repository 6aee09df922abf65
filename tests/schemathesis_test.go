package tests

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// Budget of TestSchemathesis: examples per operation and phase, and the
// seed, fixed so that a run is repeatable (the server's task IDs aside).
const (
	schemathesisExamples = 3
	schemathesisSeed     = 1
)

// TestSchemathesis runs schemathesis (tests/python/requirements.txt pins
// it) against /openapi.json of a `serve` with authentication on: every
// operation, with all of schemathesis's checks, in three of its phases
// (examples, fuzzing with positive and negative data, stateful sequences
// following the description's links). Its coverage phase is left out: on
// this 2-core machine it did not finish within 8 minutes. The checks turned off for
// some operations are in tests/schemathesis/schemathesis.toml, each with its
// reason. It skips only when the venv is missing outside CI.
func TestSchemathesis(t *testing.T) {
	pythonFromVenv(t) // the venv, or a skip
	st, err := filepath.Abs(filepath.Join(pythonVenv, "bin", "schemathesis"))
	if err != nil {
		t.Fatal(err)
	}
	config, err := filepath.Abs(filepath.Join("schemathesis", "schemathesis.toml"))
	if err != nil {
		t.Fatal(err)
	}
	const key = "st-key-0123456789"
	s := harness.StartServe(t, t.TempDir(), "--api-keys", "alice="+key)

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, st, "--config-file", config, "--no-color", "run", s.APIURL+"/openapi.json",
		"--phases", "examples,fuzzing,stateful",
		"--mode", "all",
		"--max-examples", strconv.Itoa(schemathesisExamples),
		"--seed", strconv.Itoa(schemathesisSeed),
		"--no-shrink",
		"--workers", "2",
		"--request-timeout", "15",
		"--header", "X-API-Key: "+key,
		"--report", "junit", "--report-dir", t.TempDir(),
	)
	cmd.Dir = t.TempDir() // schemathesis writes its cache where it runs
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	t.Logf("schemathesis ran for %s", time.Since(start).Round(time.Second))
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("schemathesis did not finish within 8 minutes:\n%s", &out)
	}
	if err != nil {
		t.Fatalf("schemathesis found failures (%v); each is fixed in a2aflow, corrected in internal/api/openapi.json, "+
			"or turned off for its operations in tests/schemathesis/schemathesis.toml with the reason:\n%s", err, &out)
	}
	t.Logf("schemathesis:\n%s", lastLines(out.String(), 30))
}

// lastLines is s's last n lines.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
