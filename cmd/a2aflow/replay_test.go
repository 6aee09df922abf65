package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/cmd/a2aflow/internal/demo"
	"github.com/a2aflow/a2aflow/internal/cli"
	"github.com/a2aflow/a2aflow/workflows"
)

func runCLI(t *testing.T, app *cli.App, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := cli.NewRoot(app)
	root.SetArgs(args)
	root.SetOut(&out)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// TestReplayFixtures: `a2aflow replay` replays every recorded history of the
// command's agents (internal/demo/testdata), and names one that a changed
// agent would break, with exit status 5.
func TestReplayFixtures(t *testing.T) {
	fixtures, err := filepath.Glob(filepath.Join(mustAbs(t, "internal/demo/testdata"), "*.history.json"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("fixtures: %v %v", fixtures, err)
	}
	t.Chdir(t.TempDir()) // no ./data: the files replay without a payload store
	out, err := runCLI(t, &cli.App{Agents: demo.All()}, append([]string{"replay"}, fixtures...)...)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("replayed %d, 0 did not replay", len(fixtures)); !strings.Contains(out, want) || strings.Count(out, "ok    ") != len(fixtures) {
		t.Errorf("replay printed:\n%s\nwant every fixture ok and %q", out, want)
	}

	// The travel agent changed without workflow.GetVersion: the recorded
	// travel task would break on it, and replay says so with status 5.
	changed := demo.Travel()
	changed.Handle = func(ctx workflow.Context, task *workflows.Task) error {
		if err := workflow.Sleep(ctx, time.Minute); err != nil { // a new first step
			return err
		}
		return demo.Travel().Handle(ctx, task)
	}
	travel := fixtures[slices.IndexFunc(fixtures, func(p string) bool { return filepath.Base(p) == "travel.history.json" })]
	out, err = runCLI(t, &cli.App{Agents: []*workflows.Agent{changed}}, "replay", travel)
	if code := cli.ExitCode(err); code != 5 {
		t.Fatalf("replay of a changed agent: %v (status %d), want exit status 5\n%s", err, code, out)
	}
	if !strings.Contains(out, "FAIL  "+travel+": this code does not replay it (non-determinism)") {
		t.Errorf("replay printed:\n%s\nwant the travel history named as not replaying", out)
	}
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
