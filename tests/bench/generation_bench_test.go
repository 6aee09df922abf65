package bench

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// BenchmarkGetTaskLongPoll measures A2A 1.1's GetTask long-poll
// (currentGeneration, docs/guides/protocol-versions.md) against plain
// polling every 100 ms, on the same changes in the same run: for each
// sample, a travel task waits for input at generation G; a long-poll past
// G and a poller (GetTask every 100 ms until the generation passes G) are
// both waiting when a message is sent; each one's latency is from the send
// to its seeing a generation past G. Reported: p50 and p95 of each, in ms.
func BenchmarkGetTaskLongPoll(b *testing.B) {
	s := harness.StartServe(b, b.TempDir())
	ctx := benchContext(b)
	c := &harness.V11{URL: s.APIURL}
	var res map[string]any
	if err := c.Call(ctx, "SendMessage", map[string]any{"message": harness.UserMessage("lp-start", "", "Book a flight")}, &res); err != nil {
		b.Fatal(err)
	}
	task, _ := res["task"].(map[string]any)
	taskID, _ := task["id"].(string)
	generation := func(params map[string]any) int64 {
		var got map[string]any
		if err := c.Call(ctx, "GetTask", params, &got); err != nil {
			b.Fatal(err)
		}
		g, _ := harness.Generation(got)
		return g
	}
	var longPoll, polling []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		gen := generation(map[string]any{"id": taskID})
		var wg sync.WaitGroup
		var sent time.Time
		var sentMu sync.Mutex
		sentAt := func() time.Time { sentMu.Lock(); defer sentMu.Unlock(); return sent }
		var lp, pl time.Duration
		wg.Go(func() {
			if g := generation(map[string]any{"id": taskID, "currentGeneration": fmt.Sprint(gen)}); g <= gen {
				b.Errorf("the long-poll answered generation %d, not past %d", g, gen)
			}
			lp = time.Since(sentAt())
		})
		wg.Go(func() {
			for generation(map[string]any{"id": taskID, "historyLength": 0}) <= gen {
				time.Sleep(100 * time.Millisecond)
			}
			pl = time.Since(sentAt())
		})
		time.Sleep(300 * time.Millisecond) // both waiting
		sentMu.Lock()
		sent = time.Now()
		sentMu.Unlock()
		if err := c.Call(ctx, "SendMessage", map[string]any{"message": harness.UserMessage(fmt.Sprintf("lp-%d", i), taskID, "not a date")}, &res); err != nil {
			b.Fatal(err)
		}
		wg.Wait()
		longPoll, polling = append(longPoll, lp), append(polling, pl)
	}
	b.StopTimer()
	b.ReportMetric(harness.Percentile(longPoll, 50), "longpoll-p50-ms")
	b.ReportMetric(harness.Percentile(longPoll, 95), "longpoll-p95-ms")
	b.ReportMetric(harness.Percentile(polling, 50), "poll100ms-p50-ms")
	b.ReportMetric(harness.Percentile(polling, 95), "poll100ms-p95-ms")
	b.ReportMetric(0, "ns/op")
}
