package bench

// BenchmarkTaskListPage: the console's task list (GET /task-list, one
// visibility query a page) over 10,000 tasks, against reading the same
// tasks over A2A (ListTasks over HTTP+JSON, historyLength 0), in the same
// run. One serve holds N tasks (A2AFLOW_BENCH_LIST_TASKS, default
// 10,000): N/10 travel tasks parked in input-required and the rest echo
// tasks, completed, made by 8 clients. Visibility lists running tasks
// first, so the first pages of every agent are the parked ones, whose
// rows say what they wait for: from the memo each wrote when it parked
// (wire.WaitingMemo), or, for a task recorded before it, a read of the
// task each (the route's worst case then). The summary says how many rows
// of the first page came from the memo.
// Each read is timed 30 times, interleaved:
//
//   - the list's first page of 50, every agent (the parked tasks), against
//     ListTasks of travel's first 50 (the same tasks);
//   - the list's first page of 50 of echo (completed tasks), against
//     ListTasks of echo's first 50;
//
// then every page of 100 of the whole list is read once, one after
// another, and every page of 100 of echo's ListTasks. Run by `make bench`;
// alone:
//
//	go test ./tests/bench -run '^$' -bench TaskListPage -benchtime=1x
//
// It measures once whatever b.N is: the first call of its leaf (b.N=1)
// builds and measures, a later one (make bench's b.N=200) reports the same
// figures again. Nothing asserts on timing.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/harness"
)

func BenchmarkTaskListPage(b *testing.B) {
	n := 10000
	if v := os.Getenv("A2AFLOW_BENCH_LIST_TASKS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 100 {
			b.Fatalf("A2AFLOW_BENCH_LIST_TASKS=%q: want a number of 100 or more", v)
		}
	}
	benchMeasureOnce(b, fmt.Sprintf("tasks=%d", n), func(b *testing.B) *benchMeasured { return runTaskListBench(b, n) })
}

// benchMeasured is what a benchmark that measures once reports at every
// call: its metrics, in order, and its summary.
type benchMeasured struct {
	names   []string
	values  []float64
	summary string
}

func (m *benchMeasured) metric(name string, v float64) {
	m.names, m.values = append(m.names, name), append(m.values, v)
}

func (m *benchMeasured) printf(format string, args ...any) {
	m.summary += fmt.Sprintf(format, args...)
}

func (m *benchMeasured) report(b *testing.B) {
	for i, name := range m.names {
		b.ReportMetric(m.values[i], name)
	}
	b.ReportMetric(0, "ns/op")
}

// runTaskListBench builds n tasks and measures the list over them.
func runTaskListBench(b *testing.B, n int) *benchMeasured {
	s := harness.StartServe(b, b.TempDir())
	ctx := benchContext(b)
	echo := newBenchA2A(b, ctx, s.APIURL+"/agents/echo", benchConc)
	travel := newBenchA2A(b, ctx, s.APIURL+"/agents/travel", benchConc)
	parked := n / 10
	built := time.Now()
	if _, err := benchBlock(ctx, 0, parked, benchConc, func(ctx context.Context, w int) (time.Duration, error) {
		task, err := travel.send(ctx, w, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(benchTravelFirst)))
		if err == nil {
			err = benchWantTask(task, a2a.TaskStateInputRequired, benchTravelWhere)
		}
		return 0, err
	}); err != nil {
		b.Fatal(err)
	}
	if _, err := benchBlock(ctx, 0, n-parked, benchConc, echo.echo); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d tasks (%d parked) in %s", n, parked, time.Since(built).Round(time.Millisecond))

	hc := &http.Client{Timeout: time.Minute}
	get := func(path string, q url.Values) (time.Duration, benchListPage) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.APIURL+path+"?"+q.Encode(), nil)
		req.Header.Set("A2A-Version", "1.0")
		began := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(began)
		var page benchListPage
		if err := json.Unmarshal(raw, &page); resp.StatusCode != http.StatusOK || err != nil {
			b.Fatalf("GET %s?%s: HTTP %d %v %.300s", path, q.Encode(), resp.StatusCode, err, raw)
		}
		return took, page
	}
	list := func(q url.Values) (time.Duration, benchListPage) { return get("/task-list", q) }
	listTasks := func(agent string, q url.Values) (time.Duration, benchListPage) {
		q.Set("historyLength", "0")
		return get("/agents/"+agent+"/tasks", q)
	}
	// Visibility is eventually consistent: wait until it lists every task.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, p := list(url.Values{"agent": {"echo"}, "state": {"TASK_STATE_COMPLETED"}, "pageSize": {"1"}}); len(p.Tasks) == 1 {
			if _, all := listTasks("echo", url.Values{"pageSize": {"1"}}); all.TotalSize >= n-parked {
				break
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("visibility does not list the %d echo tasks after 2 minutes", n-parked)
		}
		time.Sleep(500 * time.Millisecond)
	}
	fifty := func(agent string) url.Values {
		q := url.Values{"pageSize": {"50"}}
		if agent != "" {
			q.Set("agent", agent)
		}
		return q
	}
	// Warm up.
	list(fifty(""))
	listTasks("travel", fifty(""))

	const samples = 30
	var first, firstA2A, echoFirst, echoA2A benchSample
	var firstWaiting, firstMemo int
	b.ResetTimer()
	for range samples {
		took, page := list(fifty(""))
		first.lat = append(first.lat, took)
		firstWaiting, firstMemo = 0, 0
		for _, r := range page.Tasks {
			if r.WaitingFor != "" {
				firstWaiting++
			}
			if len(r.Waiting) > 0 {
				firstMemo++
			}
		}
		took, _ = listTasks("travel", fifty(""))
		firstA2A.lat = append(firstA2A.lat, took)
		took, _ = list(fifty("echo"))
		echoFirst.lat = append(echoFirst.lat, took)
		took, _ = listTasks("echo", fifty(""))
		echoA2A.lat = append(echoA2A.lat, took)
	}
	walk := func(read func(q url.Values) (time.Duration, benchListPage)) (benchSample, int, time.Duration) {
		var smp benchSample
		rows, began := 0, time.Now()
		for token := ""; ; {
			q := url.Values{"pageSize": {"100"}}
			if token != "" {
				q.Set("pageToken", token)
			}
			took, page := read(q)
			smp.lat, rows = append(smp.lat, took), rows+len(page.Tasks)
			if token = page.NextPageToken; token == "" {
				return smp, rows, time.Since(began)
			}
		}
	}
	pages, rows, whole := walk(list)
	a2aPages, a2aRows, a2aWhole := walk(func(q url.Values) (time.Duration, benchListPage) { return listTasks("echo", q) })
	b.StopTimer()
	m := &benchMeasured{}
	m.metric("list-p50-ms", first.pct(50))
	m.metric("list-p95-ms", first.pct(95))
	m.metric("list/listtasks-p50", first.pct(50)/firstA2A.pct(50))
	m.metric("list-echo-p50-ms", echoFirst.pct(50))
	m.metric("list-echo/listtasks-p50", echoFirst.pct(50)/echoA2A.pct(50))
	m.metric("list-page100-p95-ms", pages.pct(95))
	m.printf("the task list of %d tasks (%d parked in input-required):\n", n, parked)
	m.printf("  /task-list, first 50 of every agent (%d waiting, %d from the memo)  p50 %.1f ms  p95 %.1f ms\n",
		firstWaiting, firstMemo, first.pct(50), first.pct(95))
	m.printf("  ListTasks travel, first 50 (the same tasks)      p50 %.1f ms  p95 %.1f ms  list/ListTasks p50 %.2f×\n",
		firstA2A.pct(50), firstA2A.pct(95), first.pct(50)/firstA2A.pct(50))
	m.printf("  /task-list?agent=echo, first 50 (completed)       p50 %.1f ms  p95 %.1f ms\n", echoFirst.pct(50), echoFirst.pct(95))
	m.printf("  ListTasks echo, first 50                          p50 %.1f ms  p95 %.1f ms  list/ListTasks p50 %.2f×\n",
		echoA2A.pct(50), echoA2A.pct(95), echoFirst.pct(50)/echoA2A.pct(50))
	m.printf("  /task-list, every page of 100 (%d pages, %d rows) p50 %.1f ms  p95 %.1f ms  max %.1f ms; %s in all\n",
		len(pages.lat), rows, pages.pct(50), pages.pct(95), pages.pct(100), whole.Round(time.Millisecond))
	m.printf("  ListTasks echo, every page of 100 (%d pages, %d)  p50 %.1f ms  p95 %.1f ms  max %.1f ms; %s in all\n",
		len(a2aPages.lat), a2aRows, a2aPages.pct(50), a2aPages.pct(95), a2aPages.pct(100), a2aWhole.Round(time.Millisecond))
	return m
}

// benchListPage is what the benchmark reads of a page of /task-list or of
// ListTasks.
type benchListPage struct {
	Tasks []struct {
		ID         string          `json:"id"`
		WaitingFor string          `json:"waitingFor"`
		Waiting    json.RawMessage `json:"waiting"`
	} `json:"tasks"`
	NextPageToken string `json:"nextPageToken"`
	TotalSize     int    `json:"totalSize"`
}

// benchMeasureOnce runs measure once under the sub-benchmark name, however
// many times `go test -bench` calls it (b.N 1, then the asked count): the
// data it builds is costly. It reports the result each time and prints its
// summary.
func benchMeasureOnce(b *testing.B, name string, measure func(*testing.B) *benchMeasured) {
	var res *benchMeasured
	b.Run(name, func(b *testing.B) {
		if res == nil {
			res = measure(b)
		}
		res.report(b)
	})
	if res != nil {
		fmt.Print(res.summary)
	}
}
