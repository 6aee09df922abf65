package tests

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/internal/pgtest"
)

// testPostgres starts a private PostgreSQL server for t (package pgtest,
// from Debian's binaries), stopped at t's end, and returns the URL of a new
// database on it. Without PostgreSQL binaries t is skipped, unless CI=true.
func testPostgres(t testing.TB) string {
	t.Helper()
	srv, err := pgtest.Start()
	var missing *pgtest.MissingError
	switch {
	case errors.As(err, &missing) && os.Getenv("CI") != "true":
		t.Skipf("PostgreSQL tests skipped: %v", err)
	case err != nil:
		t.Fatalf("PostgreSQL server for the test: %v", err)
	}
	t.Cleanup(srv.Stop)
	dsn, err := srv.NewDatabase("a2aflow")
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// sqliteHintsDB returns the path of a new a2aflow SQLite database in a
// folder of its own, short enough for the Unix sockets of its hints
// (package unixhints) whatever the test's name, removed at t's end.
func sqliteHintsDB(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "a2af")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return filepath.Join(dir, "a2aflow.db")
}

// TestStreamHintsAcrossProcesses: in the split deployment, the worker's
// hints reach the api process, through PostgreSQL (pg_notify, LISTEN) or
// through Unix sockets beside the SQLite database both are given, so a
// subscriber on the api hears of each new event at once, not at its next
// poll (every 5 minutes with hints on, 250 ms without, whose p50 here would
// be about 130 ms): the time from an answer to the subscriber's working
// event, p50 over 20 answers, is under 80 ms. Then the worker is killed
// and started again, and the next answer's events reach the subscriber too.
func TestStreamHintsAcrossProcesses(t *testing.T) {
	for _, db := range []struct {
		name, database, banner string
	}{
		{"postgres", "", "Hints        PostgreSQL LISTEN a2aflow_task_events"},
		{"sqlite", "", "Hints        Unix sockets in "},
	} {
		t.Run(db.name, func(t *testing.T) {
			if db.name == "postgres" {
				db.database = testPostgres(t)
			} else {
				db.database = sqliteHintsDB(t)
			}
			d := startSplitDB(t, 1, false, db.database)
			d.apis[0].waitOutput(db.banner, time.Second)
			ctx := streamBenchContext(t)
			driver := streamBenchClient(t, ctx, d.APIURLs[0], 1)
			watcher := streamBenchClient(t, ctx, d.APIURLs[0], 1)
			task := streamBenchWaitingTask(t, ctx, driver)
			sub := subscribe(ctx, "watcher", watcher, task.ID)
			sub.waitLive(t)
			seen := 1
			var first []time.Duration
			for i := range 20 {
				// A random pause, so that the answers do not lock onto the phase
				// of the api's poll (see streamBenchPause).
				time.Sleep(rand.N(streamBenchPoll))
				t0 := time.Now()
				streamBenchAnswer(t, ctx, driver, task.ID, i)
				seen += 2
				sub.waitEvents(t, seen)
				first = append(first, sub.arrivals()[seen-2].Sub(t0))
			}
			// The worker killed and started again: the hints of the new
			// one reach the api (a stream has no poll for 5 minutes).
			d.worker.kill()
			d.startWorker()
			streamBenchAnswer(t, ctx, driver, task.ID, 20)
			seen += 2
			sub.waitEvents(t, seen)
			sub.cancel()
			<-sub.done
			p50, p95 := streamPct(first, 50), streamPct(first, 95)
			t.Logf("first event after an answer, api+worker on %s: p50 %.1f ms, p95 %.1f ms (n=%d)", db.name, p50, p95, len(first))
			if p50 > 80 {
				t.Errorf("first event p50 %.1f ms, want under 80 ms: the worker's hints do not reach the api", p50)
			}
		})
	}
}
