package bench

// Streaming benchmarks, run by `make bench` with the others:
//
//	go test ./tests/bench -run '^$' -bench 'Stream' -benchtime=200x -count=1
//
// Both run against `a2aflow serve`, where the worker hints the API of each new
// event in process (hints.Broker), and against the split deployment
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
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/prometheus/common/expfmt"

	"github.com/a2aflow/a2aflow/tests/harness"
)

const (
	// streamBenchRound is how many answers one task takes before the next
	// round starts a fresh task, so that no task's history grows large.
	streamBenchRound = 50
	// streamBenchSubscribers is the fan-out of BenchmarkStreamFanout.
	streamBenchSubscribers = 100
)

// streamBenchDeployments are the two ways to run a2aflow; each returns the
// API URL.
var streamBenchDeployments = []struct {
	name   string
	deploy func(b *testing.B) string
}{
	{"serve", func(b *testing.B) string { return harness.StartServe(b, b.TempDir()).APIURL }},
	{"api+worker", func(b *testing.B) string { return harness.StartSplit(b, 1).APIURLs[0] }},
	// The split deployment on PostgreSQL: the worker's hints reach the api
	// through LISTEN/NOTIFY (package pghints); its polls are a safety net
	// 5 minutes apart.
	{"api+worker+postgres", func(b *testing.B) string { return harness.StartSplitDB(b, 1, false, harness.Postgres(b)).APIURLs[0] }},
	// The split deployment on one host sharing a SQLite database: the
	// worker's hints reach the api over Unix sockets beside it (package
	// unixhints); polls 5 minutes apart.
	{"api+worker+sqlite", func(b *testing.B) string {
		return harness.StartSplitDB(b, 1, false, harness.SQLiteHintsDB(b)).APIURLs[0]
	}},
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
			ctx := harness.LongContext(b)
			driver := harness.StreamClient(b, ctx, url, 1)
			watcher := harness.StreamClient(b, ctx, url, 1)
			b.Run("answer", func(b *testing.B) {
				var first, status, send, lag []time.Duration
				for done := 0; done < b.N; {
					b.StopTimer()
					task := harness.WaitingTravelTask(b, ctx, driver)
					sub := harness.Subscribe(ctx, "watcher", watcher, task.ID)
					sub.WaitLive(b)
					seen := 1
					b.StartTimer()
					for k := 0; k < streamBenchRound && done < b.N; k, done = k+1, done+1 {
						streamBenchPause(b)
						t0 := time.Now()
						harness.AnswerNotADate(b, ctx, driver, task.ID, done)
						t1 := time.Now()
						seen += 2
						sub.WaitEvents(b, seen)
						times := sub.Arrivals()
						working, asked := times[seen-2], times[seen-1]
						first = append(first, working.Sub(t0))
						status = append(status, asked.Sub(t0))
						send = append(send, t1.Sub(t0))
						lag = append(lag, asked.Sub(t1))
					}
					b.StopTimer()
					sub.Cancel()
					<-sub.Done
					b.StartTimer()
				}
				b.ReportMetric(harness.Percentile(first, 50), "first-p50-ms")
				b.ReportMetric(harness.Percentile(first, 95), "first-p95-ms")
				b.ReportMetric(harness.Percentile(status, 50), "status-p50-ms")
				b.ReportMetric(harness.Percentile(status, 95), "status-p95-ms")
				b.ReportMetric(harness.Percentile(send, 50), "send-p50-ms")
				b.ReportMetric(harness.Percentile(lag, 50), "lag-p50-ms")
				b.ReportMetric(0, "ns/op")
				if b.N > 1 {
					summary = append(summary, fmt.Sprintf("%-19s n=%-4d first p50 %7.2f p95 %7.2f | status p50 %7.2f p95 %7.2f | send p50 %7.2f | lag p50 %7.2f p95 %7.2f",
						d.name, len(first), harness.Percentile(first, 50), harness.Percentile(first, 95), harness.Percentile(status, 50), harness.Percentile(status, 95),
						harness.Percentile(send, 50), harness.Percentile(lag, 50), harness.Percentile(lag, 95)))
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
			ctx := harness.LongContext(b)
			driver := harness.StreamClient(b, ctx, url, 1)
			watcher := harness.StreamClient(b, ctx, url, streamBenchSubscribers)
			b.Run(fmt.Sprintf("subscribers=%d", streamBenchSubscribers), func(b *testing.B) {
				var lat []time.Duration
				var delivered, broken int
				var firstBreak string
				var wall time.Duration
				for done := 0; done < b.N; {
					b.StopTimer()
					task := harness.WaitingTravelTask(b, ctx, driver)
					subs := make([]*harness.Subscription, streamBenchSubscribers)
					for i := range subs {
						subs[i] = harness.Subscribe(ctx, fmt.Sprintf("subscriber %d", i), watcher, task.ID)
					}
					for _, s := range subs {
						s.WaitLive(b)
					}
					b.StartTimer()
					start := time.Now()
					var sent []time.Time
					for k := 0; k < streamBenchRound && done < b.N; k, done = k+1, done+1 {
						sent = append(sent, time.Now())
						harness.AnswerNotADate(b, ctx, driver, task.ID, done)
					}
					var last time.Time
					for _, s := range subs {
						if err := s.AwaitEvents(1+2*len(sent), time.Minute); err != nil {
							// Reported, not fatal: how many streams break under
							// this load is one of the results.
							broken++
							if firstBreak == "" {
								firstBreak = err.Error()
							}
							continue
						}
						times := s.Arrivals()
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
						s.Cancel()
						<-s.Done
					}
					b.StartTimer()
				}
				rate := float64(delivered) / wall.Seconds()
				b.ReportMetric(rate, "events/s")
				b.ReportMetric(harness.Percentile(lat, 50), "delivery-p50-ms")
				b.ReportMetric(harness.Percentile(lat, 95), "delivery-p95-ms")
				b.ReportMetric(float64(broken), "broken-streams")
				b.ReportMetric(0, "ns/op")
				if b.N > 1 {
					line := fmt.Sprintf("%-10s %d subscribers, %d answers: %8.0f events/s delivered | delivery p50 %7.2f p95 %7.2f ms | %d streams broke",
						d.name, streamBenchSubscribers, b.N, rate, harness.Percentile(lat, 50), harness.Percentile(lat, 95), broken)
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
	time.Sleep(time.Duration(rand.Int64N(int64(harness.APIPoll))))
	b.StartTimer()
}

// streamBenchFollowers is the fan-out of BenchmarkStreamFollowers: 1,000
// subscribers of one task, and one subscriber each of 1,000 tasks, on one
// api process. A2AFLOW_BENCH_SUBSCRIBERS sets another number (to measure
// a build that cannot bear 1,000).
var streamBenchFollowers = func() int {
	if n, err := strconv.Atoi(os.Getenv("A2AFLOW_BENCH_SUBSCRIBERS")); err == nil && n > 0 {
		return n
	}
	return 1000
}()

// BenchmarkStreamFollowers measures the streams of one api process
// following many subscribers, in the split deployment (api + worker on
// SQLite with an api not given the database, which polls each followed task
// every 250 ms; on SQLite with the api given it, and on PostgreSQL, where the
// worker's hints reach the api and it polls every 5 minutes).
// Subscribers read from api 1; the answers go through api 2, so that api
// 1's Temporal queries are its streams' only. Two shapes: 1,000
// subscribers of one task ("tasks=1"), and 1,000 tasks with a subscriber
// each ("tasks=1000"; on SQLite, 50 tasks of 20 subscribers: see below).
// One operation is one answer (of a random task of
// the shape), after a random pause shorter than the poll interval; it
// causes two status events, which every subscriber of the task must get.
// Reported: missed events (subscribers' events that never came: must be
// 0), the streams' Temporal queries per event on api 1 (the a2aflow
// counter without the streams' first queries, and the Temporal SDK's count
// of QueryWorkflow calls, which includes them; events are the tasks'
// events, not their deliveries), those without the polls (the queries
// events cause) and the polls per second, the
// first event's latency (from the answer to a subscriber receiving the
// working status) and the delivery of the input-required event that
// follows, p50/p95 over every subscriber of the answered task.
func BenchmarkStreamFollowers(b *testing.B) {
	// Every subscriber has a connection of its own: the test process
	// holds 1,000 of them, the api process as many.
	b.Setenv("A2AFLOW_MAX_STREAMS_PER_PRINCIPAL", "0")
	var summary []string
	for _, d := range streamBenchDeployments[1:] {
		b.Run(d.name, func(b *testing.B) {
			var apis []string
			switch d.name {
			case "api+worker":
				apis = harness.StartSplit(b, 2).APIURLs
			case "api+worker+sqlite":
				apis = harness.StartSplitDB(b, 2, false, harness.SQLiteHintsDB(b)).APIURLs
			default:
				apis = harness.StartSplitDB(b, 2, false, harness.Postgres(b)).APIURLs
			}
			ctx := harness.LongContext(b)
			drivers := make([]*a2aclient.Client, 8)
			for i := range drivers {
				drivers[i] = harness.StreamClient(b, ctx, apis[1], 1)
			}
			watcher := harness.StreamClient(b, ctx, apis[0], streamBenchFollowers)
			shapes := []int{1, streamBenchFollowers}
			if d.name == "api+worker" {
				// Without hints every followed task is polled every 250 ms:
				// 1,000 tasks are 4,000 queries a second, more than a
				// 2-core machine answers (the answers time out). 50 tasks
				// of 20 subscribers each are measured instead.
				shapes = []int{1, 50}
			}
			for _, tasks := range shapes {
				b.Run(fmt.Sprintf("tasks=%d", tasks), func(b *testing.B) {
					line := streamBenchFollow(b, ctx, apis[0], drivers, watcher, tasks)
					if line != "" {
						summary = append(summary, fmt.Sprintf("%-19s %s", d.name, line))
					}
				})
			}
		})
	}
	fmt.Printf("--- %s summary\n  %s\n", b.Name(), strings.Join(summary, "\n  "))
}

// streamBenchFollow runs one shape of BenchmarkStreamFollowers: tasks
// waiting tasks, streamBenchFollowers subscribers spread over them, on the
// api at url.
func streamBenchFollow(b *testing.B, ctx context.Context, url string, drivers []*a2aclient.Client, watcher *a2aclient.Client, tasks int) string {
	b.StopTimer()
	// The tasks, started by the drivers at once.
	ids := make([]a2a.TaskID, tasks)
	var wg sync.WaitGroup
	var setupErr atomic.Value
	next := atomic.Int64{}
	for _, c := range drivers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < tasks; i = int(next.Add(1) - 1) {
				task, err := harness.TrySend(ctx, c, "", "Book a flight")
				if err == nil {
					task, err = harness.TrySend(ctx, c, task.ID, "Lisbon")
				}
				if err != nil {
					setupErr.Store(err)
					return
				}
				ids[i] = task.ID
			}
		}()
	}
	wg.Wait()
	if err, _ := setupErr.Load().(error); err != nil {
		b.Fatal(err)
	}
	// The subscribers, subscribed 50 at a time.
	subs := make([]*harness.Subscription, streamBenchFollowers)
	byTask := make([][]*harness.Subscription, tasks)
	for i := range subs {
		subs[i] = harness.Subscribe(ctx, fmt.Sprintf("subscriber %d", i), watcher, ids[i%tasks])
		byTask[i%tasks] = append(byTask[i%tasks], subs[i])
		if i%50 == 49 {
			for _, s := range subs[i-49 : i+1] {
				s.WaitLive(b)
			}
		}
	}
	for _, s := range subs {
		s.WaitLive(b)
	}
	answers := make([]int, tasks) // answers given to each task
	var first, earliest, delivery []time.Duration
	time.Sleep(1500 * time.Millisecond) // the SDK's series report every second
	before, sdkBefore := harness.StreamQueryCounts(b, url), sdkQueries(b, url)
	start := time.Now()
	b.StartTimer()
	for done := 0; done < b.N; done++ {
		streamBenchPause(b)
		i := rand.IntN(tasks)
		t0 := time.Now()
		harness.AnswerNotADate(b, ctx, drivers[0], ids[i], done)
		answers[i]++
		b.StopTimer()
		soonest := time.Duration(math.MaxInt64)
		for _, s := range byTask[i] {
			if err := s.AwaitEvents(1+2*answers[i], time.Minute); err != nil {
				continue // counted as missed below
			}
			times := s.Arrivals()
			first = append(first, times[2*answers[i]-1].Sub(t0))
			delivery = append(delivery, times[2*answers[i]].Sub(t0))
			soonest = min(soonest, first[len(first)-1])
		}
		if soonest < math.MaxInt64 {
			earliest = append(earliest, soonest)
		}
		b.StartTimer()
	}
	b.StopTimer()
	elapsed := time.Since(start)
	after := harness.StreamQueryCounts(b, url)
	time.Sleep(1500 * time.Millisecond)
	sdkAfter := sdkQueries(b, url)
	missed := 0
	for i, s := range subs {
		events, _, err := s.EventsSoFar()
		got := len(events)
		if want := 1 + 2*answers[i%tasks]; got < want {
			missed += want - got
			if missed == want-got {
				b.Logf("%s has %d of %d events (%v)", s.Name, got, want, err)
			}
		}
		s.Cancel()
	}
	for _, s := range subs {
		<-s.Done
	}
	events := float64(2 * b.N)
	follow := harness.FollowQueries(before, after)
	polls := after["poll"] - before["poll"]
	perEvent, sdkPerEvent := follow/events, (sdkAfter-sdkBefore)/events
	hinted := (follow - polls) / events // the queries an event causes: hint, join, retry
	b.ReportMetric(float64(missed), "missed-events")
	b.ReportMetric(perEvent, "queries/event")
	b.ReportMetric(hinted, "event-queries/event")
	b.ReportMetric(sdkPerEvent, "temporal-queries/event")
	b.ReportMetric(polls/elapsed.Seconds(), "polls/s")
	b.ReportMetric(harness.Percentile(first, 50), "first-p50-ms")
	b.ReportMetric(harness.Percentile(first, 95), "first-p95-ms")
	b.ReportMetric(harness.Percentile(earliest, 50), "earliest-p50-ms")
	b.ReportMetric(harness.Percentile(delivery, 50), "delivery-p50-ms")
	b.ReportMetric(harness.Percentile(delivery, 95), "delivery-p95-ms")
	b.ReportMetric(0, "ns/op")
	if b.N <= 1 {
		return ""
	}
	return fmt.Sprintf("tasks=%-4d subscribers=%d answers=%d: missed %d | queries/event %.2f (without polls %.2f; %.0f polls/s), Temporal QueryWorkflow/event %.2f | first p50 %.2f p95 %.2f (earliest subscriber p50 %.2f) | delivery p50 %.2f p95 %.2f ms",
		tasks, len(subs), b.N, missed, perEvent, hinted, polls/elapsed.Seconds(), sdkPerEvent,
		harness.Percentile(first, 50), harness.Percentile(first, 95), harness.Percentile(earliest, 50), harness.Percentile(delivery, 50), harness.Percentile(delivery, 95))
}

// sdkQueries is the Temporal SDK's count of QueryWorkflow calls of the
// process at url (temporal_request_total, reported every second).
func sdkQueries(b testing.TB, url string) float64 {
	b.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	families, err := new(expfmt.TextParser).TextToMetricFamilies(resp.Body)
	if err != nil {
		b.Fatalf("parse %s/metrics: %v", url, err)
	}
	n := 0.0
	for _, m := range families["temporal_request_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "operation" && l.GetValue() == "QueryWorkflow" {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}
