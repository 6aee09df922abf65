package operator

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/cli/server"
	"github.com/a2aflow/a2aflow/workflows"
)

// testApp is a program's app with an agent of its own.
func testApp() *server.App {
	handle := func(ctx workflow.Context, t *workflows.Task) error { t.Reply(t.Text()); return nil }
	return &server.App{Agents: []*workflows.Agent{{Name: "travel", Handle: handle}}}
}

// runCLI runs the operator's command args[0] with the rest of args.
func runCLI(t *testing.T, app *server.App, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := &cobra.Command{Use: "a2aflow", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(Commands(app)...)
	root.SetArgs(args)
	root.SetOut(&out)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// TestReplayBadInput: replay refuses to run without histories, --save
// without fetching, and names a file that is no history. The a2aflow
// command's own test (cmd/a2aflow) replays its agents' recorded histories.
func TestReplayBadInput(t *testing.T) {
	t.Chdir(t.TempDir()) // no ./data: the files replay without a payload store
	var ee *cmdutil.ExitError
	travel := filepath.Join(t.TempDir(), "travel.history.json")
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
	out, err := runCLI(t, testApp(), "replay", bogus)
	if !errors.As(err, &ee) || ee.Code != exitReplayFailed || !strings.Contains(out, "not a workflow history") {
		t.Errorf("replay of a bogus file: %v\n%s", err, out)
	}
}
