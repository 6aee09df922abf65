package bench

// BenchmarkTimelineFirstPage: the console's first page of a long task's
// timeline (GET /tasks/{id}/timeline, 100 entries) against GetTask over
// A2A, in the same run, on the same task. One travel task answers "On
// which date?" wrongly 10,000 times (A2AFLOW_BENCH_TIMELINE_TURNS; the
// issue's 10,000-turn task, built through the API in some minutes, the
// time logged), which continues it as new many times; then each read is
// timed 30 times, interleaved: the first page, GetTask with the server's
// default history (1,000 messages), with 100 (about what a first page
// shows) and with 10. The ratios are the first page's p50 over GetTask's. A timeline page reads its run's events from where the page
// starts, so its cost follows the page, not the task's age; the whole
// timeline, page after page, is timed once for the record. Run by `make
// bench`; alone:
//
//	go test ./tests/bench -run '^$' -bench TimelineFirstPage -benchtime=1x
//
// It measures once whatever b.N is: the first call of its leaf (b.N=1)
// builds and measures, a later one (make bench's b.N=200) reports the same
// figures again (benchMeasured, tasklist_bench_test.go). Nothing asserts
// on timing.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/harness"
)

func BenchmarkTimelineFirstPage(b *testing.B) {
	turns := 10000
	if v, err := strconv.Atoi(os.Getenv("A2AFLOW_BENCH_TIMELINE_TURNS")); err == nil && v > 0 {
		turns = v
	}
	benchMeasureOnce(b, fmt.Sprintf("turns=%d", turns), func(b *testing.B) *benchMeasured { return runTimelineBench(b, turns) })
}

// runTimelineBench builds a task of turns turns and measures its timeline.
func runTimelineBench(b *testing.B, turns int) *benchMeasured {
	s := harness.StartServe(b, b.TempDir())
	ctx := benchContext(b) // 30 minutes: harness.Context's 2 do not build 10,000 turns
	c, _ := harness.NewClient(b, ctx, s.APIURL)
	task := harness.Send(b, ctx, c, "", "Book a flight")
	task = harness.Send(b, ctx, c, task.ID, "Lisbon")
	built := time.Now()
	for i := range turns {
		task = harness.Send(b, ctx, c, task.ID, "not a date "+strconv.Itoa(i))
	}
	b.Logf("%d turns in %s", turns, time.Since(built).Round(time.Millisecond))
	timeline := func(query string) (time.Duration, timelineBenchPage) {
		began := time.Now()
		resp, err := http.Get(s.APIURL + "/tasks/" + string(task.ID) + "/timeline" + query)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(began)
		var page timelineBenchPage
		if err := json.Unmarshal(raw, &page); resp.StatusCode != http.StatusOK || err != nil {
			b.Fatalf("timeline: HTTP %d %v %.300s", resp.StatusCode, err, raw)
		}
		return took, page
	}
	getTask := func(historyLength *int) (time.Duration, int) {
		began := time.Now()
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: historyLength})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(began), len(got.History)
	}
	// Warm up: the task's workflow in the cache, the connections.
	timeline("")
	getTask(nil)

	const samples = 30
	var first, get, get100, get10 benchSample
	var firstEntries, getMessages int
	ten, hundred := 10, 100
	b.ResetTimer()
	for range samples {
		took, page := timeline("")
		first.lat, firstEntries = append(first.lat, took), len(page.Entries)
		took, n := getTask(nil)
		get.lat, getMessages = append(get.lat, took), n
		took, _ = getTask(&hundred)
		get100.lat = append(get100.lat, took)
		took, _ = getTask(&ten)
		get10.lat = append(get10.lat, took)
	}
	// The whole timeline, page after page, once.
	began := time.Now()
	pages, entries, runs := 0, 0, map[string]bool{}
	var last benchSample
	for token := ""; ; pages++ {
		q := ""
		if token != "" {
			q = "?pageToken=" + token
		}
		took, page := timeline(q)
		last.lat = append(last.lat, took)
		entries += len(page.Entries)
		for _, e := range page.Entries {
			runs[e.RunID] = true
		}
		if token = page.NextPageToken; token == "" {
			pages++
			break
		}
	}
	whole := time.Since(began)
	b.StopTimer()
	m := &benchMeasured{}
	m.metric("timeline-p50-ms", first.pct(50))
	m.metric("timeline-p95-ms", first.pct(95))
	m.metric("gettask-p50-ms", get.pct(50))
	m.metric("gettask100-p50-ms", get100.pct(50))
	m.metric("gettask10-p50-ms", get10.pct(50))
	m.metric("timeline/gettask-p50", first.pct(50)/get.pct(50))
	m.metric("timeline/gettask100-p50", first.pct(50)/get100.pct(50))
	m.metric("whole-timeline-ms", float64(whole.Milliseconds()))
	m.printf("timeline of a %d-turn task (%d runs, %d entries in %d pages):\n", turns, len(runs), entries, pages)
	m.printf("  first page (%d entries)        p50 %.1f ms  p95 %.1f ms\n", firstEntries, first.pct(50), first.pct(95))
	m.printf("  GetTask (default, %d msgs)   p50 %.1f ms  p95 %.1f ms\n", getMessages, get.pct(50), get.pct(95))
	m.printf("  GetTask historyLength 100     p50 %.1f ms  p95 %.1f ms\n", get100.pct(50), get100.pct(95))
	m.printf("  GetTask historyLength 10      p50 %.1f ms  p95 %.1f ms\n", get10.pct(50), get10.pct(95))
	m.printf("  first page / GetTask p50: %.2f× (default history), %.2f× (100 messages)\n",
		first.pct(50)/get.pct(50), first.pct(50)/get100.pct(50))
	m.printf("  every page, one after another p50 %.1f ms  p95 %.1f ms  max %.1f ms; %s in all\n",
		last.pct(50), last.pct(95), last.pct(100), whole.Round(time.Millisecond))
	return m
}

// timelineBenchPage is what the benchmark reads of a timeline page.
type timelineBenchPage struct {
	Entries []struct {
		RunID string `json:"runId"`
	} `json:"entries"`
	NextPageToken string `json:"nextPageToken"`
}
