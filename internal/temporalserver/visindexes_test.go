package temporalserver

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// TestLeanIndexesAreTemporals: every index the lean set drops is one of
// Temporal's schema, and the indexes a2aflow and the server query are kept.
func TestLeanIndexesAreTemporals(t *testing.T) {
	stmts, err := schemaIndexes()
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) < 50 {
		t.Fatalf("read %d CREATE INDEX statements from Temporal's visibility schema, want its ~58", len(stmts))
	}
	for _, name := range leanDroppedIndexes {
		if _, ok := stmts[name]; !ok {
			t.Errorf("lean set drops %s, which Temporal's schema does not have", name)
		}
	}
	for _, kept := range []string{
		"by_workflow_id", "by_workflow_type", "by_status", // the Web UI's default filters
		"by_keyword_01", "by_keyword_10", "by_int_01", // custom search attribute slots
		"by_temporal_worker_deployment_version", "by_temporal_namespace_division",
	} {
		if _, ok := stmts[kept]; !ok {
			t.Errorf("Temporal's schema has no index %s", kept)
		}
		if slices.Contains(leanDroppedIndexes, kept) {
			t.Errorf("lean set drops %s", kept)
		}
	}
}

// visibilityIndexes lists the indexes of executions_visibility in the
// SQLite file at path, read beside the running server (WAL lets it).
func visibilityIndexes(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility'`)
	if err != nil {
		t.Fatalf("list indexes of %s: %v", path, err)
	}
	defer func() { _ = rows.Close() }()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

// TestVisibilityIndexes: a new data dir gets the lean set, a restart with
// the full set brings Temporal's dropped indexes back and a lean restart
// drops them again; a list filtering on a column whose index is dropped
// (TaskQueue) finds its workflows either way.
func TestVisibilityIndexes(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i, set := range []string{"", VisibilityIndexesFull, VisibilityIndexesLean} {
		what := fmt.Sprintf("start %d (%q)", i+1, set)
		s := startServer(t, what, Options{DataDir: dir, FrontendAddr: "127.0.0.1:0", DisableUI: true,
			Logger: testLogger(t), VisibilityIndexes: set})
		have := visibilityIndexes(t, s.VisibilityDBPath())
		for _, name := range leanDroppedIndexes {
			if got, want := slices.Contains(have, name), set == VisibilityIndexesFull; got != want {
				t.Errorf("%s: index %s present %v, want %v", what, name, got, want)
			}
		}
		if !slices.Contains(have, "default_idx") || !slices.Contains(have, "by_status") {
			t.Errorf("%s: kept indexes missing: %v", what, have)
		}

		c := dial(t, s)
		queue := fmt.Sprintf("queue-%d", i)
		if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: queue, TaskQueue: queue}, "NoSuchWorkflow"); err != nil {
			t.Fatalf("%s: start: %v", what, err)
		}
		query := fmt.Sprintf("TaskQueue = %q", queue)
		for deadline := time.Now().Add(30 * time.Second); ; {
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: s.Namespace(), Query: query})
			if err != nil {
				t.Fatalf("%s: list %s: %v", what, query, err)
			}
			if n := len(resp.GetExecutions()); n == 1 && resp.GetExecutions()[0].GetExecution().GetWorkflowId() == queue {
				break
			} else if time.Now().After(deadline) {
				t.Fatalf("%s: list %s: %d workflows, want %s alone", what, query, n, queue)
			}
			time.Sleep(100 * time.Millisecond)
		}
		c.Close()
		if err := s.Stop(); err != nil {
			t.Fatalf("%s: stop: %v", what, err)
		}
	}
}

// TestVisibilityIndexesOption: an unknown set is refused before anything
// starts.
func TestVisibilityIndexesOption(t *testing.T) {
	if _, err := (Options{VisibilityIndexes: "some"}).withDefaults(); err == nil {
		t.Error(`withDefaults accepted VisibilityIndexes "some"`)
	}
}
