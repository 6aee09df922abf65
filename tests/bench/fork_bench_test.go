package bench

// BenchmarkForkLongTask: forking a task at turn 100 against starting it
// afresh and sending the same 100 answers again (issue #32). One travel
// task answers "On which date?" wrongly 100 times (A2AFLOW_BENCH_FORK_TURNS),
// then books; the fork at its end replays every answer and the booking
// from the original's records, in the fork's own workflow, without a round
// trip per answer and without running BookTrip again (the bookings table
// is counted). Run by `make bench`; alone:
//
//	go test ./tests/bench -run '^$' -bench ForkLongTask -benchtime=1x
//
// It measures once whatever b.N is, and reports the two durations and
// their ratio (the goal: the fork at least 10 times faster).

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/harness"
)

func BenchmarkForkLongTask(b *testing.B) {
	turns := 100
	if v, err := strconv.Atoi(os.Getenv("A2AFLOW_BENCH_FORK_TURNS")); err == nil && v > 0 {
		turns = v
	}
	dataDir := b.TempDir()
	s := harness.StartServe(b, dataDir)
	ctx := harness.Context(b)
	c, _ := harness.NewClient(b, ctx, s.APIURL)
	// Warm up the server (the first task's workflow cache, connections).
	warm := harness.Send(b, ctx, c, "", "Book a flight")
	harness.Send(b, ctx, c, warm.ID, "Faro")

	b.ResetTimer()
	began := time.Now()
	task := harness.Send(b, ctx, c, "", "Book a flight")
	task = harness.Send(b, ctx, c, task.ID, "Lisbon")
	for i := 0; i < turns; i++ {
		task = harness.Send(b, ctx, c, task.ID, "not a date "+strconv.Itoa(i))
	}
	task = harness.Send(b, ctx, c, task.ID, "2026-12-24")
	task = harness.Send(b, ctx, c, task.ID, "2")
	afresh := time.Since(began)
	if task.Status.State != a2a.TaskStateCompleted {
		b.Fatalf("the long task is %s: %q", task.Status.State, harness.StatusText(task))
	}
	full, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		b.Fatal(err)
	}
	booked := len(harness.Bookings(b, dataDir))

	began = time.Now()
	fork := harness.ForkREST(b, s.APIURL, task.ID, len(full.History))
	forked := time.Since(began)
	b.StopTimer()
	if fork.Status.State != a2a.TaskStateCompleted || harness.ForkBooking(b, fork) != harness.ForkBooking(b, task) {
		b.Fatalf("the fork is %s with %+v, want completed with the original's booking", fork.Status.State, fork.Artifacts)
	}
	if n := len(harness.Bookings(b, dataDir)); n != booked {
		b.Fatalf("the fork booked again: %d bookings, then %d", booked, n)
	}
	ratio := float64(afresh) / float64(forked)
	b.ReportMetric(float64(afresh.Milliseconds()), "afresh-ms")
	b.ReportMetric(float64(forked.Milliseconds()), "fork-ms")
	b.ReportMetric(ratio, "x-faster")
	b.Logf("%d answers: afresh %s (%d round trips), fork at message %d %s: %.1fx faster, BookTrip not run again",
		turns, afresh.Round(time.Millisecond), turns+4, len(full.History), forked.Round(time.Millisecond), ratio)
}
