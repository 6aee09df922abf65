package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// benchParkedDefault is how many tasks BenchmarkParkedTasks parks unless
// A2AFLOW_BENCH_PARKED says otherwise.
const benchParkedDefault = 10000

// benchSettle is how long the server is left quiet before its memory is
// read: long enough for it to give back what a burst of work left
// (releaseMemoryWhenQuiet in internal/cli/server) and for the background
// work of the burst to end.
const benchSettle = 30 * time.Second

// BenchmarkParkedTasks measures what tasks waiting for their user cost a
// real `a2aflow serve` process (its own settings: the worker's workflow
// cache, the embedded server's caches), and what answering one of them
// costs against a hot task:
//
//   - it parks N travel tasks in input-required ("Book a flight" -> "Where
//     to?"), 8 clients at a time, N = A2AFLOW_BENCH_PARKED or 10,000;
//   - it reports the serve process's RSS (VmRSS) and peak RSS (VmHWM) from
//     /proc after start-up and after parking, the MiB per 1,000 parked tasks
//     ((RSS after - RSS before) / N * 1000), the Go heap in use and the
//     goroutines from its /metrics, before and after;
//   - then, interleaved, it answers "Lisbon" to the oldest parked tasks (out
//     of the worker's workflow cache when N exceeds it: they replay their
//     history) and to hot tasks (started just before, untimed, so in the
//     cache), and reports p50/p95 of both and parked/hot as ratio-p50 and
//     ratio-p95.
//
// The serve process inherits the environment: A2AFLOW_WORKFLOW_CACHE_SIZE=N
// measures another cache size.
func BenchmarkParkedTasks(b *testing.B) {
	n := benchParkedDefault
	if v := os.Getenv("A2AFLOW_BENCH_PARKED"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("A2AFLOW_BENCH_PARKED=%q: want a positive number", v)
		}
	}
	s := harness.StartServe(b, b.TempDir())
	ctx := benchContext(b)
	pid := benchPid(s)
	a2aSide := newBenchA2A(b, ctx, s.APIURL, benchConc)
	// Warm up (connections, pollers, the travel agent's first replay), then
	// read the process at rest.
	benchWarm(b, ctx, benchConc, a2aSide.resume)
	time.Sleep(benchSettle)
	before := benchProcMem(b, pid, s.APIURL)

	// Park n tasks from benchConc callers; parked is in the order they
	// parked, oldest first.
	parked := make([]a2a.TaskID, 0, n)
	var mu sync.Mutex
	park := func(ctx context.Context, w int) (time.Duration, error) {
		task, err := a2aSide.send(ctx, w, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(benchTravelFirst)))
		if err == nil {
			err = benchWantTask(task, a2a.TaskStateInputRequired, benchTravelWhere)
		}
		if err != nil {
			return 0, fmt.Errorf("parking a task: %w", err)
		}
		mu.Lock()
		parked = append(parked, task.ID)
		mu.Unlock()
		return 0, nil
	}
	t0 := time.Now()
	if _, err := benchBlock(ctx, 0, n, benchConc, park); err != nil {
		b.Fatal(err)
	}
	parkTime := time.Since(t0)
	time.Sleep(benchSettle)
	after := benchProcMem(b, pid, s.APIURL)
	mibPer1k := (after.rss - before.rss) / float64(n) * 1000

	var nextParked atomic.Int64
	resumeParked := func(ctx context.Context, w int) (time.Duration, error) {
		i := int(nextParked.Add(1)) - 1
		if i >= n {
			return 0, fmt.Errorf("all %d parked tasks answered: park more (A2AFLOW_BENCH_PARKED) or run fewer iterations", n)
		}
		answer := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(benchTravelAnswer))
		answer.TaskID = parked[i]
		t0 := time.Now()
		task, err := a2aSide.send(ctx, w, answer)
		d := time.Since(t0)
		if err != nil {
			return 0, err
		}
		return d, benchWantTask(task, a2a.TaskStateInputRequired, benchTravelWhen)
	}
	sum := &benchSummary{}
	b.Run("resume", func(b *testing.B) {
		b.ResetTimer()
		smps := benchInterleave(b, ctx, pid, 1, benchRoundSeq, resumeParked, a2aSide.resume)
		b.StopTimer()
		p, h := smps[0], smps[1]
		p.report(b, "parked-", false)
		h.report(b, "hot-", false)
		benchReportRatio(b, p, h, false)
		b.ReportMetric(after.rss, "rss-MiB")
		b.ReportMetric(after.hwm, "hwm-MiB")
		b.ReportMetric(mibPer1k, "MiB/1k-parked")
		b.ReportMetric(0, "ns/op")
		sum.set("resume parked (out of the cache)", p)
		sum.set("resume hot", h)
	})
	end := benchProcMem(b, pid, s.APIURL)
	fmt.Printf("--- %s: %d tasks parked in %.1f s (%.0f tasks/s), workflow cache %s\n"+
		"  %-22s %9s %9s %10s %11s\n"+
		"  %-22s %9.0f %9.0f %10.0f %11.0f\n"+
		"  %-22s %9.0f %9.0f %10.0f %11.0f\n"+
		"  %-22s %9.0f %9.0f %10.0f %11.0f\n"+
		"  per 1,000 parked tasks: %.1f MiB RSS, %.1f MiB Go heap, %.0f goroutines; %.0f MiB RSS extrapolated to 10,000\n",
		b.Name(), n, parkTime.Seconds(), float64(n)/parkTime.Seconds(), benchEnvOr("A2AFLOW_WORKFLOW_CACHE_SIZE", "default"),
		"serve process", "RSS MiB", "HWM MiB", "heap MiB", "goroutines",
		"at rest", before.rss, before.hwm, before.heap, before.goroutines,
		fmt.Sprintf("%d parked", n), after.rss, after.hwm, after.heap, after.goroutines,
		"after the answers", end.rss, end.hwm, end.heap, end.goroutines,
		mibPer1k, (after.heap-before.heap)/float64(n)*1000, (after.goroutines-before.goroutines)/float64(n)*1000,
		before.rss+mibPer1k*10)
	benchPrint(b, sum.tableNoTput([][2]string{{"resume parked (out of the cache)", "resume hot"}}))
}

func benchEnvOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// benchMem is what a process holds: RSS and peak RSS from /proc, the Go
// heap in use and the goroutines from its /metrics.
type benchMem struct {
	rss, hwm, heap, goroutines float64 // MiB, MiB, MiB, count
}

func benchProcMem(b testing.TB, pid int, apiURL string) benchMem {
	b.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatalf("read the memory of process %d: %v", pid, err)
	}
	defer f.Close()
	var m benchMem
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if err != nil {
			b.Fatalf("/proc/%d/status %s: %q", pid, k, v)
		}
		if k == "VmRSS" {
			m.rss = kb / 1024
		} else {
			m.hwm = kb / 1024
		}
	}
	if m.rss == 0 || m.hwm == 0 {
		b.Fatalf("/proc/%d/status has no VmRSS or VmHWM", pid)
	}
	resp, err := http.Get(apiURL + "/metrics")
	if err != nil {
		b.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatalf("GET /metrics: %v", err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		name, v, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		switch name {
		case "go_memstats_heap_inuse_bytes":
			x, _ := strconv.ParseFloat(v, 64)
			m.heap = x / (1 << 20)
		case "go_goroutines":
			m.goroutines, _ = strconv.ParseFloat(v, 64)
		}
	}
	if m.heap == 0 || m.goroutines == 0 {
		b.Fatalf("GET /metrics: no go_memstats_heap_inuse_bytes or go_goroutines")
	}
	return m
}
