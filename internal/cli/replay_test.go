package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/agents"
	"github.com/a2aflow/a2aflow/workflows"
)

func runCLI(t *testing.T, app *App, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := NewRoot(app)
	root.SetArgs(args)
	root.SetOut(&out)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestReplayFiles(t *testing.T) {
	fixtures, err := filepath.Glob(filepath.Join(mustAbs(t, "../../agents/testdata"), "*.history.json"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("fixtures: %v %v", fixtures, err)
	}
	t.Chdir(t.TempDir()) // no ./data: the files replay without a payload store
	out, err := runCLI(t, testApp(), append([]string{"replay"}, fixtures...)...)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("replayed %d, 0 did not replay", len(fixtures)); !strings.Contains(out, want) || strings.Count(out, "ok    ") != len(fixtures) {
		t.Errorf("replay printed:\n%s\nwant every fixture ok and %q", out, want)
	}

	// The travel agent changed without workflow.GetVersion: the recorded
	// travel task would break on it, and replay says so with status 5.
	changed := agents.Travel()
	changed.Handle = func(ctx workflow.Context, task *workflows.Task) error {
		if err := workflow.Sleep(ctx, time.Minute); err != nil { // a new first step
			return err
		}
		return agents.Travel().Handle(ctx, task)
	}
	travel := fixtures[slices.IndexFunc(fixtures, func(p string) bool { return filepath.Base(p) == "travel.history.json" })]
	out, err = runCLI(t, &App{Agents: []*workflows.Agent{changed}}, "replay", travel)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitReplayFailed {
		t.Fatalf("replay of a changed agent: %v, want exit status %d\n%s", err, exitReplayFailed, out)
	}
	if !strings.Contains(out, "FAIL  "+travel+": this code does not replay it (non-determinism)") {
		t.Errorf("replay printed:\n%s\nwant the travel history named as not replaying", out)
	}

	// Bad input: no history, not a history, --save without fetching.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay"}, "give history files, --task ID or --running"},
		{[]string{"replay", "--save", "x", travel}, "--save writes fetched histories"},
	} {
		if _, err := runCLI(t, testApp(), tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	bogus := filepath.Join(t.TempDir(), "bogus.json")
	if err := os.WriteFile(bogus, []byte(`{"events": "no"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = runCLI(t, testApp(), "replay", bogus)
	if !errors.As(err, &ee) || ee.code != exitReplayFailed || !strings.Contains(out, "not a workflow history") {
		t.Errorf("replay of a bogus file: %v\n%s", err, out)
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
