package tests

// Streaming benchmarks, run by `make bench` with the others:
//
//	go test ./tests/ -run '^$' -bench 'Stream' -benchtime=200x -count=1
//
// Both run against `a2aflow serve`, where the worker hints the API of each new
// event in process (notify.Broker), and against the split deployment
// (`a2aflow temporal`, `a2aflow worker`, `a2aflow api`), where the API has no
// hints and each subscriber polls its task every 250 ms (api.Config's
// default), and the split deployment on PostgreSQL (api+worker+postgres),
// whose worker hints the api through LISTEN/NOTIFY. Events come from the travel agent: the task waits for a date and
// each operation answers it with something that is not one, so the task goes
// working and then asks again (two status events per answer), with
// blocking SendMessage on a client of its own, after a random pause (see
// streamBenchPause). Latencies are p50/p95 in
// milliseconds; nothing asserts on timing.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/a2aflow/a2aflow/workflows"
)

const (
	// streamBenchRound is how many answers one task takes before the next
	// round starts a fresh task, so that no task's history grows large.
	streamBenchRound = 50
	// streamBenchSubscribers is the fan-out of BenchmarkStreamFanout.
	streamBenchSubscribers = 100
	// streamBenchAsk is the status message of a task waiting for the date.
	streamBenchAsk = "On which date? (YYYY-MM-DD)"
	// streamBenchPoll is the poll interval of `a2aflow api` (api.Config's
	// default without a notifier).
	streamBenchPoll = 250 * time.Millisecond
)

// streamBenchDeployments are the two ways to run a2aflow; each returns the
// API URL.
var streamBenchDeployments = []struct {
	name   string
	deploy func(b *testing.B) string
}{
	{"serve", func(b *testing.B) string { return startServe(b, b.TempDir()).APIURL }},
	{"api+worker", func(b *testing.B) string { return startSplit(b, 1).APIURLs[0] }},
	// The split deployment on PostgreSQL: the worker's hints reach the api
	// through LISTEN/NOTIFY (package pgnotify), which polls every 2 s.
	{"api+worker+postgres", func(b *testing.B) string { return startSplitDB(b, 1, false, testPostgres(b)).APIURLs[0] }},
}

// BenchmarkStreamFirstEvent measures how soon a subscriber hears of a state
// change. One operation: a blocking SendMessage answers the waiting task;
// "first" is the time from the call to the subscriber receiving the working
// status event the answer causes, "status" to it receiving the next
// input-required one, "send" the blocking call itself, and "lag" how long
// after the call returned the subscriber had that input-required event.
// Goal: first p50 <= 20 ms.
func BenchmarkStreamFirstEvent(b *testing.B) {
	var summary []string
	for _, d := range streamBenchDeployments {
		b.Run(d.name, func(b *testing.B) {
			url := d.deploy(b)
			ctx := streamBenchContext(b)
			driver := streamBenchClient(b, ctx, url, 1)
			watcher := streamBenchClient(b, ctx, url, 1)
			b.Run("answer", func(b *testing.B) {
				var first, status, send, lag []time.Duration
				for done := 0; done < b.N; {
					b.StopTimer()
					task := streamBenchWaitingTask(b, ctx, driver)
					sub := subscribe(ctx, "watcher", watcher, task.ID)
					sub.waitLive(b)
					seen := 1
					b.StartTimer()
					for k := 0; k < streamBenchRound && done < b.N; k, done = k+1, done+1 {
						streamBenchPause(b)
						t0 := time.Now()
						streamBenchAnswer(b, ctx, driver, task.ID, done)
						t1 := time.Now()
						seen += 2
						sub.waitEvents(b, seen)
						times := sub.arrivals()
						working, asked := times[seen-2], times[seen-1]
						first = append(first, working.Sub(t0))
						status = append(status, asked.Sub(t0))
						send = append(send, t1.Sub(t0))
						lag = append(lag, asked.Sub(t1))
					}
					b.StopTimer()
					sub.cancel()
					<-sub.done
					b.StartTimer()
				}
				b.ReportMetric(streamPct(first, 50), "first-p50-ms")
				b.ReportMetric(streamPct(first, 95), "first-p95-ms")
				b.ReportMetric(streamPct(status, 50), "status-p50-ms")
				b.ReportMetric(streamPct(status, 95), "status-p95-ms")
				b.ReportMetric(streamPct(send, 50), "send-p50-ms")
				b.ReportMetric(streamPct(lag, 50), "lag-p50-ms")
				b.ReportMetric(0, "ns/op")
				if b.N > 1 {
					summary = append(summary, fmt.Sprintf("%-19s n=%-4d first p50 %7.2f p95 %7.2f | status p50 %7.2f p95 %7.2f | send p50 %7.2f | lag p50 %7.2f p95 %7.2f",
						d.name, len(first), streamPct(first, 50), streamPct(first, 95), streamPct(status, 50), streamPct(status, 95),
						streamPct(send, 50), streamPct(lag, 50), streamPct(lag, 95)))
				}
			})
		})
	}
	fmt.Printf("--- %s summary (ms)\n  %s\n", b.Name(), strings.Join(summary, "\n  "))
}

// BenchmarkStreamFanout measures delivery to 100 concurrent subscribers of
// one task. One operation is one answer (two status events for each of the
// subscribers). It reports the events delivered per second over all
// subscribers (from the first answer to the last delivery) and the delivery
// latency of each input-required event from the start of the answer that
// caused it, p50/p95 over all subscribers.
func BenchmarkStreamFanout(b *testing.B) {
	var summary []string
	for _, d := range streamBenchDeployments {
		b.Run(d.name, func(b *testing.B) {
			url := d.deploy(b)
			ctx := streamBenchContext(b)
			driver := streamBenchClient(b, ctx, url, 1)
			watcher := streamBenchClient(b, ctx, url, streamBenchSubscribers)
			b.Run(fmt.Sprintf("subscribers=%d", streamBenchSubscribers), func(b *testing.B) {
				var lat []time.Duration
				var delivered, broken int
				var firstBreak string
				var wall time.Duration
				for done := 0; done < b.N; {
					b.StopTimer()
					task := streamBenchWaitingTask(b, ctx, driver)
					subs := make([]*subscription, streamBenchSubscribers)
					for i := range subs {
						subs[i] = subscribe(ctx, fmt.Sprintf("subscriber %d", i), watcher, task.ID)
					}
					for _, s := range subs {
						s.waitLive(b)
					}
					b.StartTimer()
					start := time.Now()
					var sent []time.Time
					for k := 0; k < streamBenchRound && done < b.N; k, done = k+1, done+1 {
						sent = append(sent, time.Now())
						streamBenchAnswer(b, ctx, driver, task.ID, done)
					}
					var last time.Time
					for _, s := range subs {
						if err := s.awaitEvents(1+2*len(sent), time.Minute); err != nil {
							// Reported, not fatal: how many streams break under
							// this load is one of the results.
							broken++
							if firstBreak == "" {
								firstBreak = err.Error()
							}
							continue
						}
						times := s.arrivals()
						for i, t0 := range sent {
							lat = append(lat, times[2+2*i].Sub(t0))
						}
						delivered += 2 * len(sent)
						if at := times[2*len(sent)]; at.After(last) {
							last = at
						}
					}
					wall += last.Sub(start)
					b.StopTimer()
					for _, s := range subs {
						s.cancel()
						<-s.done
					}
					b.StartTimer()
				}
				rate := float64(delivered) / wall.Seconds()
				b.ReportMetric(rate, "events/s")
				b.ReportMetric(streamPct(lat, 50), "delivery-p50-ms")
				b.ReportMetric(streamPct(lat, 95), "delivery-p95-ms")
				b.ReportMetric(float64(broken), "broken-streams")
				b.ReportMetric(0, "ns/op")
				if b.N > 1 {
					line := fmt.Sprintf("%-10s %d subscribers, %d answers: %8.0f events/s delivered | delivery p50 %7.2f p95 %7.2f ms | %d streams broke",
						d.name, streamBenchSubscribers, b.N, rate, streamPct(lat, 50), streamPct(lat, 95), broken)
					if broken > 0 {
						line += " (first: " + firstBreak + ")"
					}
					summary = append(summary, line)
				}
			})
		})
	}
	fmt.Printf("--- %s summary\n  %s\n", b.Name(), strings.Join(summary, "\n  "))
}

// streamBenchPause waits, untimed, a random time shorter than the API's
// poll interval before an answer. Without it the answers of
// BenchmarkStreamFirstEvent would lock onto the phase of a polling
// subscriber (each answer right after its last poll, so always a full
// interval before the next) and report the worst case as the median.
func streamBenchPause(b *testing.B) {
	b.StopTimer()
	time.Sleep(time.Duration(rand.Int64N(int64(streamBenchPoll))))
	b.StartTimer()
}

// streamBenchClient returns an a2a-go client (JSON-RPC) of the agent at
// baseURL whose HTTP transport keeps a connection for each of conns
// concurrent streams.
func streamBenchClient(b testing.TB, ctx context.Context, baseURL string, conns int) *a2aclient.Client {
	b.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, baseURL)
	if err != nil {
		b.Fatalf("resolve card at %s: %v", baseURL, err)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConns = 2 * conns
	transport.MaxIdleConnsPerHost = 2 * conns
	b.Cleanup(transport.CloseIdleConnections)
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(&http.Client{Transport: transport}))
	if err != nil {
		b.Fatalf("client for %s: %v", baseURL, err)
	}
	b.Cleanup(func() { _ = c.Destroy() })
	return c
}

// streamBenchWaitingTask starts a travel task and answers its first
// question, so that it waits for a date.
func streamBenchWaitingTask(b testing.TB, ctx context.Context, c *a2aclient.Client) *a2a.Task {
	b.Helper()
	task, err := matrixSend(ctx, c, "", "Book a flight")
	if err != nil {
		b.Fatal(err)
	}
	if task, err = matrixSend(ctx, c, task.ID, "Lisbon"); err != nil {
		b.Fatal(err)
	}
	if asked := workflows.MessageText(task.Status.Message); task.Status.State != a2a.TaskStateInputRequired || asked != streamBenchAsk {
		b.Fatalf("task %s is %s asking %q, want it to ask %q", task.ID, task.Status.State, asked, streamBenchAsk)
	}
	return task
}

// streamBenchAnswer answers the waiting task with something that is not a
// date: it works, then asks again.
func streamBenchAnswer(b testing.TB, ctx context.Context, c *a2aclient.Client, taskID a2a.TaskID, i int) {
	b.Helper()
	task, err := matrixSend(ctx, c, taskID, fmt.Sprintf("not a date %d", i))
	if err != nil {
		b.Fatal(err)
	}
	if asked := workflows.MessageText(task.Status.Message); task.Status.State != a2a.TaskStateInputRequired || !strings.HasSuffix(asked, streamBenchAsk) {
		b.Fatalf("task %s is %s asking %q, want it to ask again for the date", task.ID, task.Status.State, asked)
	}
}

func streamBenchContext(b testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	b.Cleanup(cancel)
	return ctx
}

// awaitEvents waits until the subscription has n events; it fails when the
// stream ends first or timeout passes.
func (s *subscription) awaitEvents(n int, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		got, grew, err := len(s.events), s.grew, s.err
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-grew:
		case <-s.done:
			s.mu.Lock()
			got, err = len(s.events), s.err
			s.mu.Unlock()
			if got >= n {
				return nil
			}
			return fmt.Errorf("%s ended after %d of %d events: %v", s.name, got, n, err)
		case <-deadline:
			return fmt.Errorf("%s has %d of %d events after %s (%v)", s.name, got, n, timeout, err)
		}
	}
}

// arrivals returns when each event so far arrived.
func (s *subscription) arrivals() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.times)
}

// streamPct is the p-th percentile (nearest rank) of lat in milliseconds.
func streamPct(lat []time.Duration, p float64) float64 {
	if len(lat) == 0 {
		return math.NaN()
	}
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i]) / float64(time.Millisecond)
}
