package tests

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/tests/harness"
)

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
				db.database = harness.Postgres(t)
			} else {
				db.database = harness.SQLiteHintsDB(t)
			}
			d := harness.StartSplitDB(t, 1, false, db.database)
			d.APIs[0].WaitOutput(db.banner, time.Second)
			ctx := harness.LongContext(t)
			driver := harness.StreamClient(t, ctx, d.APIURLs[0], 1)
			watcher := harness.StreamClient(t, ctx, d.APIURLs[0], 1)
			task := harness.WaitingTravelTask(t, ctx, driver)
			sub := harness.Subscribe(ctx, "watcher", watcher, task.ID)
			sub.WaitLive(t)
			seen := 1
			var first []time.Duration
			for i := range 20 {
				// A random pause, so that the answers do not lock onto the phase
				// of the api's poll (see streamBenchPause in tests/bench).
				time.Sleep(rand.N(harness.APIPoll))
				t0 := time.Now()
				harness.AnswerNotADate(t, ctx, driver, task.ID, i)
				seen += 2
				sub.WaitEvents(t, seen)
				first = append(first, sub.Arrivals()[seen-2].Sub(t0))
			}
			// The worker killed and started again: the hints of the new
			// one reach the api (a stream has no poll for 5 minutes).
			d.Worker.Kill()
			d.StartWorker()
			harness.AnswerNotADate(t, ctx, driver, task.ID, 20)
			seen += 2
			sub.WaitEvents(t, seen)
			sub.Cancel()
			<-sub.Done
			p50, p95 := harness.Percentile(first, 50), harness.Percentile(first, 95)
			t.Logf("first event after an answer, api+worker on %s: p50 %.1f ms, p95 %.1f ms (n=%d)", db.name, p50, p95, len(first))
			if p50 > 80 {
				t.Errorf("first event p50 %.1f ms, want under 80 ms: the worker's hints do not reach the api", p50)
			}
		})
	}
}
