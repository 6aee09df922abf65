package main

import (
	"path/filepath"
	"testing"

	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// The histories in testdata are real tasks, saved with
// `go run . replay --task ID --save testdata` and `--running --save testdata`:
// one ordered after a kill -9 while it waited for the manager, one parked
// waiting for finance. Replaying them against the code as it is now says
// whether tasks parked on the old code resume on the new one. Run it before
// every deploy; a change that fails it needs workflow.GetVersion (README.md,
// "Changing the agent safely").

func replayer(t *testing.T, cfg Config) *workflowstest.Replayer {
	t.Helper()
	r, err := workflowstest.NewReplayer(PurchaseOrder(cfg), Quotes())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRecordedTasksReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/*.history.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata (%v)", err)
	}
	r := replayer(t, Config{})
	for _, f := range files {
		if err := r.ReplayFile(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}

// TestReplayCatchesABreakingChange: raising the finance threshold to 2,000
// changes the steps of the recorded 1,560 EUR order (no finance approval any
// more): its history no longer replays.
func TestReplayCatchesABreakingChange(t *testing.T) {
	err := replayer(t, Config{FinanceThreshold: 2000}).ReplayFile("testdata/ordered-after-kill.history.json")
	if !workflowstest.IsNondeterminism(err) {
		t.Fatalf("replay with another threshold: %v, want a non-determinism error", err)
	}
}
