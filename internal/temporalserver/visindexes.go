package temporalserver

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"

	temporalschema "go.temporal.io/server/schema"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, as the Temporal plugin's
)

// Visibility index sets of Options.VisibilityIndexes.
const (
	// VisibilityIndexesLean keeps the visibility store's indexes that
	// a2aflow, the Web UI's default views and Temporal's own features query
	// and drops the others (leanDroppedIndexes). The default.
	VisibilityIndexesLean = "lean"
	// VisibilityIndexesFull keeps every index of Temporal's SQLite
	// visibility schema, re-creating any a lean start dropped.
	VisibilityIndexesFull = "full"
)

// leanDroppedIndexes are the indexes of Temporal's SQLite visibility schema
// (schema/sqlite/v3/visibility/schema.sql) that the lean set drops.
//
// Why drop any: the schema indexes 58 columns of executions_visibility, and
// every visibility write (a workflow's start, each search attribute or memo
// change, its close) is a REPLACE that updates all of them. That made
// visibility a third of the embedded server's CPU under load (a profile of
// serve's echo agent with 8 clients: 31%, half of it the writes' B-tree
// work). These indexes serve sorts and filters that neither a2aflow nor the
// Web UI's default views use; a query that does filter on one of these
// columns still answers, reading the namespace's rows through default_idx
// instead.
//
// Kept: default_idx (start and close time, every list), the workflow ID,
// type and status, every custom search attribute slot (a2aflow's own, an
// operator's, and unused slots, whose NULL entries cost nothing measurable),
// the Worker Deployment columns (the server counts a version's workflows to
// see it drained) and TemporalNamespaceDivision (which hides system
// workflows from lists).
var leanDroppedIndexes = []string{
	// Run statistics and relationships: sorts and filters of the Web UI's
	// advanced search only.
	"by_execution_time",
	"by_history_length",
	"by_history_size_bytes",
	"by_execution_duration",
	"by_state_transition_count",
	"by_task_queue",
	"by_parent_workflow_id",
	"by_parent_run_id",
	"by_root_workflow_id",
	"by_root_run_id",
	// Batch operations, schedules and activity pause: Temporal features
	// a2aflow does not use.
	"by_batcher_user",
	"by_temporal_scheduled_start_time",
	"by_temporal_scheduled_by_id",
	"by_temporal_schedule_paused",
	"by_temporal_pause_info",
	// Slots reserved for Temporal's own future search attributes.
	"by_temporal_bool_01",
	"by_temporal_bool_02",
	"by_temporal_datetime_01",
	"by_temporal_datetime_02",
	"by_temporal_double_01",
	"by_temporal_double_02",
	"by_temporal_int_01",
	"by_temporal_int_02",
	"by_temporal_keyword_01",
	"by_temporal_keyword_02",
	"by_temporal_keyword_03",
	"by_temporal_keyword_04",
	"by_temporal_low_cardinality_keyword_01",
}

// visibilitySchemaPath is Temporal's SQLite visibility schema in
// go.temporal.io/server/schema's embedded files.
const visibilitySchemaPath = "sqlite/v3/visibility/schema.sql"

// createIndexRE matches one CREATE INDEX statement of the schema file, which
// puts each on one line.
var createIndexRE = regexp.MustCompile(`^CREATE INDEX (\w+)\s+ON executions_visibility .*;$`)

// schemaIndexes returns the CREATE INDEX statements of Temporal's SQLite
// visibility schema by index name.
func schemaIndexes() (map[string]string, error) {
	f, err := temporalschema.Assets().Open(visibilitySchemaPath)
	if err != nil {
		return nil, fmt.Errorf("read Temporal's visibility schema: %w", err)
	}
	defer func() { _ = f.Close() }()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if m := createIndexRE.FindStringSubmatch(strings.TrimSpace(sc.Text())); m != nil {
			out[m[1]] = strings.TrimSpace(sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read Temporal's visibility schema: %w", err)
	}
	return out, nil
}

// applyVisibilityIndexes makes the visibility store in the SQLite file at
// path have the index set named by set: lean drops leanDroppedIndexes, full
// creates those of them that are missing, with Temporal's own statements.
// It reports how many indexes it dropped or created. It runs before the
// server opens the file (the data dir lock keeps other processes out).
func applyVisibilityIndexes(ctx context.Context, path, set string) (int, error) {
	if set == "" {
		set = VisibilityIndexesLean
	}
	stmts, err := schemaIndexes()
	if err != nil {
		return 0, err
	}
	// The statements of the dropped indexes, checked before anything
	// changes: an upgrade of Temporal that renames one must not silently
	// leave a set half applied.
	var create []string
	for _, name := range leanDroppedIndexes {
		s, ok := stmts[name]
		if !ok {
			return 0, fmt.Errorf("Temporal's visibility schema has no index %s", name)
		}
		create = append(create, strings.Replace(s, "CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ", 1))
	}

	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout%3d5000")
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer func() { _ = db.Close() }()
	have := map[string]bool{}
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility'`)
	if err != nil {
		return 0, fmt.Errorf("list the visibility indexes of %s: %w", path, err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			_ = rows.Close()
			return 0, fmt.Errorf("list the visibility indexes of %s: %w", path, err)
		}
		have[name] = true
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("list the visibility indexes of %s: %w", path, err)
	}
	if len(have) == 0 {
		return 0, fmt.Errorf("%s has no visibility table", path)
	}

	changed := 0
	for i, name := range leanDroppedIndexes {
		var stmt string
		switch {
		case set == VisibilityIndexesLean && have[name]:
			stmt = "DROP INDEX IF EXISTS " + name
		case set == VisibilityIndexesFull && !have[name]:
			stmt = create[i]
		default:
			continue
		}
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return changed, fmt.Errorf("%s: %s: %w", path, stmt, err)
		}
		changed++
	}
	return changed, nil
}
