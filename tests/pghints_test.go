package tests

import (
	"errors"
	"math/rand/v2"
	"os"
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

// TestStreamHintsAcrossProcesses: in the split deployment with a PostgreSQL
// database, the worker's hints reach the api process (pg_notify, LISTEN),
// so a subscriber on the api hears of each new event at once, not at its
// next poll (every 5 minutes with hints on, 250 ms without, whose p50 here would
// be about 130 ms): the time from an answer to the subscriber's working
// event, p50 over 20 answers, is under 80 ms.
func TestStreamHintsAcrossProcesses(t *testing.T) {
	d := startSplitDB(t, 1, false, testPostgres(t))
	d.apis[0].waitOutput("Hints        PostgreSQL LISTEN a2aflow_task_events", time.Second)
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
	sub.cancel()
	<-sub.done
	p50, p95 := streamPct(first, 50), streamPct(first, 95)
	t.Logf("first event after an answer, api+worker+postgres: p50 %.1f ms, p95 %.1f ms (n=%d)", p50, p95, len(first))
	if p50 > 80 {
		t.Errorf("first event p50 %.1f ms, want under 80 ms: the worker's hints do not reach the api", p50)
	}
}
