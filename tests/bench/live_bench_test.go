package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// BenchmarkLiveFirstToken measures how soon an A2A client sees an LLM
// answer's first token, against the provider's own time to first token.
// One operation: a SendStreamingMessage to the assistant, whose model (a
// streaming fake OpenAI endpoint) thinks 50 ms before its first word, then
// writes a word every 5 ms; the stream is read to its end.
//
//   - client: from the client's send to its first live chunk;
//   - provider: the provider's own, from its request to its first token;
//   - over: client - provider for each send: what a2aflow adds (the task's
//     workflow and the activity starting, and the token's way to the
//     client); goal p50 <= 30 ms;
//   - before: from the client's send to the provider's request (the
//     task's workflow starting, the LLM agent reading its context's
//     earlier tasks, the CompleteChat activity starting);
//   - relay: from the provider writing its first token to the client
//     having it (the live path alone: activity, hint carrier, API, stream).
//
// With `serve` (the in-process broker) and with `api` + `worker` (Unix
// datagrams beside their SQLite database, or PostgreSQL NOTIFY).
func BenchmarkLiveFirstToken(b *testing.B) {
	fake := fakes.NewLiveModel(b, 50*time.Millisecond, 5*time.Millisecond)
	fakes.UseLiveModel(b, fake)
	var summary []string
	for _, d := range []struct {
		name   string
		deploy func(b *testing.B) string
	}{
		{"serve", func(b *testing.B) string { return harness.StartServe(b, b.TempDir()).APIURL }},
		{"api+worker", func(b *testing.B) string {
			return harness.StartSplitDB(b, 1, false, harness.SQLiteHintsDB(b)).APIURLs[0]
		}},
		{"api+worker+postgres", func(b *testing.B) string { return harness.StartSplitDB(b, 1, false, harness.Postgres(b)).APIURLs[0] }},
	} {
		b.Run(d.name, func(b *testing.B) {
			url := d.deploy(b) + "/agents/assistant"
			ctx := harness.LongContext(b)
			c := newBenchBinding(b, ctx, url, 1, a2a.TransportProtocolJSONRPC).clients[0]
			harness.StreamLive(b, ctx, c, d.name+" warm-up", 0)
			b.Run("first-token", func(b *testing.B) {
				var client, provider, over, before, relay []time.Duration
				for i := range b.N {
					text := fmt.Sprintf("%s %d: first token please", d.name, i)
					r := harness.StreamLive(b, ctx, c, text, 0)
					if r.Chunks == 0 || r.Final != fakes.LiveAnswerText {
						b.Fatalf("send %d: %d live chunks, final %q", i, r.Chunks, r.Final)
					}
					received, first := fake.Times(text)
					client = append(client, r.FirstLive.Sub(r.Start))
					provider = append(provider, first.Sub(received))
					over = append(over, r.FirstLive.Sub(r.Start)-first.Sub(received))
					before = append(before, received.Sub(r.Start))
					relay = append(relay, r.FirstLive.Sub(first))
				}
				b.ReportMetric(harness.Percentile(client, 50), "client-p50-ms")
				b.ReportMetric(harness.Percentile(provider, 50), "provider-p50-ms")
				b.ReportMetric(harness.Percentile(over, 50), "over-p50-ms")
				b.ReportMetric(harness.Percentile(over, 95), "over-p95-ms")
				b.ReportMetric(harness.Percentile(before, 50), "before-p50-ms")
				b.ReportMetric(harness.Percentile(relay, 50), "relay-p50-ms")
				b.ReportMetric(harness.Percentile(relay, 95), "relay-p95-ms")
				b.ReportMetric(0, "ns/op")
				if b.N > 1 {
					summary = append(summary, fmt.Sprintf("%-19s n=%-4d client TTFT p50 %7.2f | provider TTFT p50 %6.2f | over p50 %6.2f p95 %6.2f (goal p50 <= 30) | before p50 %6.2f | relay p50 %5.2f p95 %5.2f",
						d.name, len(client), harness.Percentile(client, 50), harness.Percentile(provider, 50), harness.Percentile(over, 50), harness.Percentile(over, 95),
						harness.Percentile(before, 50), harness.Percentile(relay, 50), harness.Percentile(relay, 95)))
				}
			})
		})
	}
	fmt.Printf("--- %s summary (ms)\n  %s\n", b.Name(), strings.Join(summary, "\n  "))
}
