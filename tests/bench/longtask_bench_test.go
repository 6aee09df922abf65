package bench

// BenchmarkLongConversation: does a task's cost per turn stay flat as it
// ages? One travel task answers "On which date?" wrongly, turn after turn
// (A2AFLOW_BENCH_TURNS, default 10,000), on `a2aflow serve` with Temporal's
// default continue-as-new suggestion (4,096 events). Run by `make bench`;
// alone, or shorter:
//
//	A2AFLOW_BENCH_TURNS=1500 go test ./tests/bench -run '^$' -bench LongConversation -benchtime=1x
//
// Two comparisons, both in the same run: turn N against the same task's
// turn 10 (what the issue asks; minutes apart, so a change in the machine's
// load shows in it), and turn N against a fresh task's turn 10, the two
// interleaved turn by turn on the server as it is at turn N (the task's age
// alone). Nothing asserts on timing.

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/proto"

	"github.com/a2aflow/a2aflow/tests/harness"
)

const (
	// longBenchTurns is how many invalid dates the conversation sends
	// unless A2AFLOW_BENCH_TURNS says otherwise.
	longBenchTurns = 10_000
	// longBenchFirst is the first turn of the early window, and
	// longBenchWindow the turns of each window.
	longBenchFirst  = 10
	longBenchWindow = 100
	// longBenchRecent is the historyLength of the windows' GetTask reads.
	// The SendMessages set none: they get the server's default answer, the
	// messages since the caller's own (issue #31 item 6).
	longBenchRecent = 10
	// longBenchOldDefault is the historyLength a SendMessage without one
	// was answered with before that default (the API's
	// DefaultHistoryLength), sent a few times after turn N for the record.
	longBenchOldDefault = 1000
	// longBenchFullReads is how many GetTask reads of the whole history
	// are timed after each window.
	longBenchFullReads = 5
	// longBenchBlocks is how many blocks of turns the trend table has.
	longBenchBlocks = 10
	// longBenchRunBucket is the width, in turns, of the rows of the table by
	// position in the run.
	longBenchRunBucket = 100
)

// longBenchTurnCount is A2AFLOW_BENCH_TURNS, or longBenchTurns. A quick run
// takes a few hundred; 1,500 reach two or three continue-as-new.
func longBenchTurnCount() int {
	if n, err := strconv.Atoi(os.Getenv("A2AFLOW_BENCH_TURNS")); err == nil && n > 0 {
		return max(n, longBenchFirst+2)
	}
	return longBenchTurns
}

// BenchmarkLongConversation runs one travel task for N turns (Book a flight,
// Lisbon, then invalid dates: each turn is a blocking SendMessage without
// historyLength, as a2a-go sends by default, answered with the question
// asked again and, by the server's default, the turn's messages only)
// through the official a2a-go client over JSON-RPC, and measures:
//
//   - over the 100 turns from turn 10 and the 100 turns ending at N:
//     SendMessage and GetTask (historyLength 10, one after each turn) p50
//     and p95, the ratios N/10 (goal: at most 1.2), and the server's CPU
//     per turn;
//   - the same for a fresh task's turns 10-109, each right after one of the
//     old task's last 100 turns, and the ratios N/fresh;
//   - history events and bytes (proto sizes, read with GetWorkflowHistory)
//     per turn in the two windows of the long task;
//   - the turns during which the task continued as new (its run ID changed,
//     by DescribeWorkflowExecution after every turn) against the others;
//   - for the record: the runs (visibility), the largest run's events, each
//     run's first event (the continue-as-new input), GetTask of the whole
//     history (the pages) after each window, a few SendMessage with
//     historyLength 1,000 (what a send without one was answered with before
//     the turn's default) after turn N, and the trend by blocks of turns
//     and by turn in the run.
//
// The conversation is one task, whatever b.N: the first call of the leaf
// (b.N=1) holds it, and the later call `make bench` asks for (b.N=200)
// reports the same figures again rather than running 200 conversations.
func BenchmarkLongConversation(b *testing.B) {
	turns := longBenchTurnCount()
	var conv *longConv
	b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
		if conv == nil {
			conv = runLongConversation(b, turns)
		}
		conv.report(b)
	})
	if conv != nil {
		fmt.Print(conv.summary())
	}
}

// longTurn is what one turn measured.
type longTurn struct {
	send    time.Duration // the blocking SendMessage, retries included
	runID   string        // the task's run after the turn
	events  int64         // that run's history length after the turn
	bytes   int64         // and its history size (Temporal's accounting)
	newRun  bool          // the run changed during the turn
	runTurn int           // turns since the run started (1: the first turn it took)
}

// longWindow is a measurement window: turns from..to of a task.
type longWindow struct {
	from, to   int
	send, read benchSample
	// srvCPU is the serve process's CPU during the window's SendMessage
	// and GetTask calls; cpuMissing says /proc could not tell once.
	srvCPU     time.Duration
	cpuMissing bool
	// eventsPerTurn and bytesPerTurn are over the window's turns that
	// stayed in one run (counted: how many); activityBytesPerTurn is the
	// part of bytesPerTurn in activity events: the history pages, whose
	// messages are the StoreHistoryPage activity's input.
	eventsPerTurn, bytesPerTurn, activityBytesPerTurn float64
	counted                                           int
	// full is GetTask without historyLength after the window; fullMsgs
	// the messages it returned.
	full     benchSample
	fullMsgs int
}

// longRun is one workflow run of the task.
type longRun struct {
	runID      string
	status     enums.WorkflowExecutionStatus
	events     int64
	bytes      int64
	startBytes int // proto size of its WorkflowExecutionStarted event (the continue-as-new input)
	firstTurn  int // the first turn that found it
	started    time.Time
}

// longBlock is the state of the server at the end of a block of turns.
type longBlock struct {
	to     int
	srvCPU time.Duration // the serve process's CPU in the block
	cpuOK  bool
	rssMB  float64 // the serve process's resident memory
	dbMB   float64 // the embedded Temporal's SQLite files (temporal.db*)
	load   string
}

// longConv is the whole conversation's measurements.
type longConv struct {
	turns       int
	log         []longTurn // log[i] for turn i; log[0] is before the first
	early, late longWindow
	// fresh is a fresh task's turns 10-109, interleaved with late.
	fresh longWindow
	// sendAll is SendMessage with historyLength 1,000 after turn N.
	sendAll      benchSample
	blocks       []longBlock
	runs         []longRun
	elapsed      time.Duration
	srvCPU       time.Duration
	cpuOK        bool
	loads        []string // /proc/loadavg at the start and the end
	totalRetries int
	firstErrors  []string
}

func runLongConversation(b *testing.B, turns int) *longConv {
	b.Helper()
	window := min(longBenchWindow, (turns-longBenchFirst+1)/2)
	conv := &longConv{turns: turns, log: make([]longTurn, turns+1)}
	conv.early = longWindow{from: longBenchFirst, to: longBenchFirst + window - 1}
	conv.late = longWindow{from: turns - window + 1, to: turns}
	conv.fresh = longWindow{from: conv.early.from, to: conv.early.to}
	conv.loads = append(conv.loads, "start "+loadAvg())

	s := harness.StartServe(b, b.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Hour)
	b.Cleanup(cancel)
	c := newBenchA2A(b, ctx, s.APIURL, 1).clients[0]
	logger := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	tc, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default", Logger: logger})
	if err != nil {
		b.Fatalf("dial Temporal at %s: %v", s.TemporalAddr, err)
	}
	b.Cleanup(tc.Close)
	pid := benchPid(s)
	var cfg *a2a.SendMessageConfig // no historyLength: the default answer

	id := conv.startTask(b, ctx, c, "long", cfg)
	desc := func() (runID string, events, bytes int64) {
		d, err := tc.DescribeWorkflowExecution(ctx, string(id), "")
		if err != nil {
			b.Fatalf("describe task %s: %v", id, err)
		}
		info := d.GetWorkflowExecutionInfo()
		return info.GetExecution().GetRunId(), info.GetHistoryLength(), info.GetHistorySizeBytes()
	}
	prev := &conv.log[0]
	prev.runID, prev.events, prev.bytes = desc()
	conv.runs = append(conv.runs, longRun{runID: prev.runID, firstTurn: 1})

	srv0, _, ok0 := benchCPUNow(pid)
	start := time.Now()
	block := max(1, turns/longBenchBlocks)
	blockCPU, blockOK := srv0, ok0
	var fresh a2a.TaskID
	for i := 1; i <= turns; i++ {
		if i == conv.late.from {
			// The fresh task's turns before its window, not timed.
			fresh = conv.startTask(b, ctx, c, "fresh", cfg)
			for j := 1; j < conv.fresh.from; j++ {
				conv.turn(b, ctx, c, fresh, "fresh", j, cfg)
			}
		}
		w := conv.windowOf(i)
		cpu0, _, cpuOK0 := benchCPUNow(pid)
		d := conv.turn(b, ctx, c, id, "long", i, cfg)
		if w != nil {
			read := conv.read(b, ctx, c, id, i)
			cpu1, _, cpuOK1 := benchCPUNow(pid)
			w.add(d, read, cpu1-cpu0, cpuOK0 && cpuOK1)
		}
		t := &conv.log[i]
		t.send = d
		t.runID, t.events, t.bytes = desc()
		t.runTurn = conv.log[i-1].runTurn + 1
		if t.runID != conv.log[i-1].runID {
			t.newRun, t.runTurn = true, 1
			conv.runs = append(conv.runs, longRun{runID: t.runID, firstTurn: i})
		}
		if w == &conv.late {
			// A young task's turn right after the old one's: a burst of
			// load elsewhere on the machine hits both.
			j := conv.fresh.from + i - conv.late.from
			cpu0, _, cpuOK0 := benchCPUNow(pid)
			d := conv.turn(b, ctx, c, fresh, "fresh", j, cfg)
			read := conv.read(b, ctx, c, fresh, j)
			cpu1, _, cpuOK1 := benchCPUNow(pid)
			conv.fresh.add(d, read, cpu1-cpu0, cpuOK0 && cpuOK1)
		}
		if w != nil && i == w.to {
			w.full, w.fullMsgs = fullReads(b, ctx, c, id)
		}
		if i%block == 0 || i == turns {
			srv, _, ok := benchCPUNow(pid)
			conv.blocks = append(conv.blocks, longBlock{to: i, srvCPU: srv - blockCPU, cpuOK: ok && blockOK,
				rssMB: rssMB(pid), dbMB: filesMB(filepath.Join(s.DataDir, "temporal.db*")), load: loadAvg()})
			blockCPU, blockOK = srv, ok
		}
	}
	conv.elapsed = time.Since(start)
	if srv1, _, ok1 := benchCPUNow(pid); ok0 && ok1 {
		conv.srvCPU, conv.cpuOK = srv1-srv0, true
	}
	conv.loads = append(conv.loads, "end "+loadAvg())

	// Every message is there once: start, question, Lisbon, question, then
	// an answer and a question per turn; GetTask without historyLength
	// reads the latest 1,000 (the server's default).
	if want := min(longBenchOldDefault, 4+2*turns); conv.late.fullMsgs != want {
		b.Errorf("GetTask returned %d messages after %d turns, want %d", conv.late.fullMsgs, turns, want)
	}
	// What a send without historyLength cost before the default answer
	// was the turn's: historyLength 1,000 at turn N.
	old := longBenchOldDefault
	for i := turns + 1; i <= turns+longBenchFullReads; i++ {
		task, d, err := conv.send(ctx, c, id, fmt.Sprintf("long-%05d", i), fmt.Sprintf("day %d", i), &a2a.SendMessageConfig{HistoryLength: &old})
		if err != nil {
			b.Fatalf("turn %d with historyLength %d: %v", i, old, err)
		}
		if want := min(old, 4+2*i); len(task.History) != want {
			b.Errorf("turn %d with historyLength %d: %d messages, want %d", i, old, len(task.History), want)
		}
		conv.sendAll.lat = append(conv.sendAll.lat, d)
	}
	for _, w := range []*longWindow{&conv.early, &conv.late} {
		if err := conv.historyPerTurn(ctx, tc, string(id), w); err != nil {
			b.Fatal(err)
		}
	}
	if err := conv.readRuns(ctx, tc, string(id)); err != nil {
		b.Fatal(err)
	}
	return conv
}

// startTask creates a travel task and answers its first question; the
// task then asks for the date.
func (conv *longConv) startTask(b *testing.B, ctx context.Context, c *a2aclient.Client, name string, cfg *a2a.SendMessageConfig) a2a.TaskID {
	b.Helper()
	task, _, err := conv.send(ctx, c, "", name+"-start", benchTravelFirst, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := benchWantTask(task, a2a.TaskStateInputRequired, benchTravelWhere); err != nil {
		b.Fatal(err)
	}
	id := task.ID
	if task, _, err = conv.send(ctx, c, id, name+"-dest", benchTravelAnswer, cfg); err != nil {
		b.Fatal(err)
	}
	if err := benchWantTask(task, a2a.TaskStateInputRequired, benchTravelWhen); err != nil {
		b.Fatal(err)
	}
	return id
}

// turn sends task id its i-th invalid date, checks the answer (the question
// again, with the last historyLength messages) and returns its latency.
func (conv *longConv) turn(b *testing.B, ctx context.Context, c *a2aclient.Client, id a2a.TaskID, name string, i int, cfg *a2a.SendMessageConfig) time.Duration {
	b.Helper()
	text := fmt.Sprintf("day %d", i)
	task, d, err := conv.send(ctx, c, id, fmt.Sprintf("%s-%05d", name, i), text, cfg)
	if err != nil {
		b.Fatalf("%s task, turn %d: %v", name, i, err)
	}
	want := fmt.Sprintf("%q is not a date like 2026-12-24. %s", text, benchTravelWhen)
	if err := benchWantTask(task, a2a.TaskStateInputRequired, want); err != nil {
		b.Fatalf("%s task, turn %d: %v", name, i, err)
	}
	if cfg == nil || cfg.HistoryLength == nil {
		// The default answer: the caller's message and the question.
		if len(task.History) != 2 || task.History[0].ID != fmt.Sprintf("%s-%05d", name, i) {
			b.Fatalf("%s task, turn %d: SendMessage without historyLength returned %d messages, want 2 (the caller's and the question)", name, i, len(task.History))
		}
	} else if want := min(*cfg.HistoryLength, 4+2*i); len(task.History) != want {
		b.Fatalf("%s task, turn %d: SendMessage(historyLength %d) returned %d messages, want %d", name, i, *cfg.HistoryLength, len(task.History), want)
	}
	return d
}

// read times GetTask(historyLength 10) of task id after its turn i.
func (conv *longConv) read(b *testing.B, ctx context.Context, c *a2aclient.Client, id a2a.TaskID, i int) time.Duration {
	b.Helper()
	n := longBenchRecent
	t0 := time.Now()
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id, HistoryLength: &n})
	d := time.Since(t0)
	if err != nil {
		b.Fatalf("turn %d: GetTask(historyLength %d): %v", i, n, err)
	}
	if want := min(n, 4+2*i); len(got.History) != want {
		b.Fatalf("turn %d: GetTask(historyLength %d) returned %d messages, want %d", i, n, len(got.History), want)
	}
	return d
}

// add records one turn of the window: its SendMessage, its GetTask and the
// server's CPU during both.
func (w *longWindow) add(send, read, cpu time.Duration, cpuOK bool) {
	w.send.lat = append(w.send.lat, send)
	w.read.lat = append(w.read.lat, read)
	w.srvCPU += cpu
	w.cpuMissing = w.cpuMissing || !cpuOK
}

// windowOf returns the window turn i is in, or nil.
func (conv *longConv) windowOf(i int) *longWindow {
	switch {
	case i >= conv.early.from && i <= conv.early.to:
		return &conv.early
	case i >= conv.late.from && i <= conv.late.to:
		return &conv.late
	}
	return nil
}

// send sends text as message msgID (to taskID when set) and times it. A
// failed call is sent again with the same messageId, which the task applies
// once, as a client would; the time includes the retries.
func (conv *longConv) send(ctx context.Context, c *a2aclient.Client, taskID a2a.TaskID, msgID, text string, cfg *a2a.SendMessageConfig) (*a2a.Task, time.Duration, error) {
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	msg.ID, msg.TaskID = msgID, taskID
	t0 := time.Now()
	for attempt := 0; ; attempt++ {
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: cfg})
		if err == nil {
			task, ok := res.(*a2a.Task)
			if !ok {
				return nil, 0, fmt.Errorf("SendMessage(%q) returned %T, want *a2a.Task", text, res)
			}
			return task, time.Since(t0), nil
		}
		if len(conv.firstErrors) < 5 {
			conv.firstErrors = append(conv.firstErrors, fmt.Sprintf("%s: %v", msgID, err))
		}
		if attempt == 4 || ctx.Err() != nil {
			return nil, 0, fmt.Errorf("SendMessage(%q) failed %d times: %w", text, attempt+1, err)
		}
		conv.totalRetries++
		time.Sleep(200 * time.Millisecond)
	}
}

// fullReads times GetTask without historyLength: the recent messages from
// the workflow and the rest from the history pages.
func fullReads(b *testing.B, ctx context.Context, c *a2aclient.Client, id a2a.TaskID) (benchSample, int) {
	b.Helper()
	var smp benchSample
	msgs := 0
	for range longBenchFullReads {
		t0 := time.Now()
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		smp.lat = append(smp.lat, time.Since(t0))
		if err != nil {
			b.Fatalf("GetTask(%s) without historyLength: %v", id, err)
		}
		msgs = len(got.History)
	}
	return smp, msgs
}

// historyPerTurn reads the histories of the runs w's turns ran in and sums,
// for each turn that stayed in one run, the events it added and their proto
// sizes.
func (conv *longConv) historyPerTurn(ctx context.Context, tc client.Client, id string, w *longWindow) error {
	type event struct {
		size     int
		activity bool
	}
	sizes := map[string][]event{} // run ID -> event i+1
	events, bytes, activityBytes := 0, 0, 0
	for i := w.from; i <= w.to; i++ {
		t, before := conv.log[i], conv.log[i-1]
		if t.runID != before.runID {
			continue
		}
		run, ok := sizes[t.runID]
		if !ok {
			it := tc.GetWorkflowHistory(ctx, id, t.runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for it.HasNext() {
				ev, err := it.Next()
				if err != nil {
					return fmt.Errorf("history of %s run %s: %w", id, t.runID, err)
				}
				run = append(run, event{proto.Size(ev), strings.HasPrefix(ev.GetEventType().String(), "ActivityTask")})
			}
			sizes[t.runID] = run
		}
		for e := before.events; e < t.events && int(e) < len(run); e++ {
			bytes += run[e].size
			if run[e].activity {
				activityBytes += run[e].size
			}
		}
		events += int(t.events - before.events)
		w.counted++
	}
	if w.counted > 0 {
		w.eventsPerTurn = float64(events) / float64(w.counted)
		w.bytesPerTurn = float64(bytes) / float64(w.counted)
		w.activityBytesPerTurn = float64(activityBytes) / float64(w.counted)
	}
	return nil
}

// readRuns lists the task's runs in visibility and reads the first event of
// each (the input it started with).
func (conv *longConv) readRuns(ctx context.Context, tc client.Client, id string) error {
	byID := map[string]*longRun{}
	for i := range conv.runs {
		byID[conv.runs[i].runID] = &conv.runs[i]
	}
	var token []byte
	for {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowId = '%s'", id), PageSize: 1000, NextPageToken: token,
		})
		if err != nil {
			return fmt.Errorf("list the runs of %s: %w", id, err)
		}
		for _, e := range resp.GetExecutions() {
			r, ok := byID[e.GetExecution().GetRunId()]
			if !ok {
				conv.runs = append(conv.runs, longRun{runID: e.GetExecution().GetRunId()})
				r = &conv.runs[len(conv.runs)-1]
				byID[r.runID] = r
			}
			r.status, r.events, r.bytes = e.GetStatus(), e.GetHistoryLength(), e.GetHistorySizeBytes()
			r.started = e.GetStartTime().AsTime()
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	slices.SortStableFunc(conv.runs, func(a, b longRun) int { return a.started.Compare(b.started) })
	for i := range conv.runs {
		r := &conv.runs[i]
		if r.status == enums.WORKFLOW_EXECUTION_STATUS_RUNNING || r.events == 0 {
			// Visibility has a running run's counts as of its last update.
			d, err := tc.DescribeWorkflowExecution(ctx, id, r.runID)
			if err != nil {
				return fmt.Errorf("describe %s run %s: %w", id, r.runID, err)
			}
			r.events, r.bytes = d.GetWorkflowExecutionInfo().GetHistoryLength(), d.GetWorkflowExecutionInfo().GetHistorySizeBytes()
		}
		it := tc.GetWorkflowHistory(ctx, id, r.runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		if it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return fmt.Errorf("first event of %s run %s: %w", id, r.runID, err)
			}
			r.startBytes = proto.Size(ev)
		}
	}
	return nil
}

// canTurns are the latencies of the turns during which the task continued
// as new, of the turns right after them, and of every other turn.
func (conv *longConv) canTurns() (can, after, other benchSample) {
	for i := 1; i <= conv.turns; i++ {
		t := conv.log[i]
		switch {
		case t.newRun:
			can.lat = append(can.lat, t.send)
		case i > 1 && conv.log[i-1].newRun:
			after.lat = append(after.lat, t.send)
			other.lat = append(other.lat, t.send)
		default:
			other.lat = append(other.lat, t.send)
		}
	}
	return can, after, other
}

func (conv *longConv) maxRunEvents() int64 {
	var m int64
	for _, r := range conv.runs {
		m = max(m, r.events)
	}
	return m
}

// report reports the figures as the leaf's metrics.
func (conv *longConv) report(b *testing.B) {
	e, l := &conv.early, &conv.late
	b.ReportMetric(e.send.pct(50), "send-t10-p50-ms")
	b.ReportMetric(e.send.pct(95), "send-t10-p95-ms")
	b.ReportMetric(l.send.pct(50), "send-tN-p50-ms")
	b.ReportMetric(l.send.pct(95), "send-tN-p95-ms")
	b.ReportMetric(l.send.pct(50)/e.send.pct(50), "ratio-send-p50")
	b.ReportMetric(l.send.pct(95)/e.send.pct(95), "ratio-send-p95")
	b.ReportMetric(e.read.pct(50), "get10-t10-p50-ms")
	b.ReportMetric(e.read.pct(95), "get10-t10-p95-ms")
	b.ReportMetric(l.read.pct(50), "get10-tN-p50-ms")
	b.ReportMetric(l.read.pct(95), "get10-tN-p95-ms")
	b.ReportMetric(l.read.pct(50)/e.read.pct(50), "ratio-get10-p50")
	b.ReportMetric(l.read.pct(95)/e.read.pct(95), "ratio-get10-p95")
	b.ReportMetric(e.eventsPerTurn, "events/turn-t10")
	b.ReportMetric(l.eventsPerTurn, "events/turn-tN")
	b.ReportMetric(e.bytesPerTurn, "hist-B/turn-t10")
	b.ReportMetric(l.bytesPerTurn, "hist-B/turn-tN")
	b.ReportMetric(l.bytesPerTurn/e.bytesPerTurn, "ratio-hist-B")
	// Without the history pages' activities, which start only once the task
	// holds 200 messages (turn 98): the early window has none.
	b.ReportMetric((l.bytesPerTurn-l.activityBytesPerTurn)/(e.bytesPerTurn-e.activityBytesPerTurn), "ratio-hist-B-turns")
	f := &conv.fresh
	b.ReportMetric(f.send.pct(50), "send-fresh-p50-ms")
	b.ReportMetric(f.send.pct(95), "send-fresh-p95-ms")
	b.ReportMetric(f.read.pct(50), "get10-fresh-p50-ms")
	b.ReportMetric(f.read.pct(95), "get10-fresh-p95-ms")
	b.ReportMetric(l.send.pct(50)/f.send.pct(50), "ratio-send-p50-vs-fresh")
	b.ReportMetric(l.send.pct(95)/f.send.pct(95), "ratio-send-p95-vs-fresh")
	b.ReportMetric(l.read.pct(50)/f.read.pct(50), "ratio-get10-p50-vs-fresh")
	b.ReportMetric(l.read.pct(95)/f.read.pct(95), "ratio-get10-p95-vs-fresh")
	if !e.cpuMissing && !l.cpuMissing && !f.cpuMissing {
		b.ReportMetric(e.cpuPerTurn(), "srv-cpu-ms/turn-t10")
		b.ReportMetric(l.cpuPerTurn(), "srv-cpu-ms/turn-tN")
		b.ReportMetric(f.cpuPerTurn(), "srv-cpu-ms/turn-fresh")
	}
	can, _, other := conv.canTurns()
	b.ReportMetric(float64(len(can.lat)), "can-turns")
	if len(can.lat) > 0 {
		b.ReportMetric(can.pct(50), "can-turn-p50-ms")
		b.ReportMetric(other.pct(50), "other-turn-p50-ms")
		b.ReportMetric(can.pct(50)/other.pct(50), "ratio-can-p50")
	}
	b.ReportMetric(float64(len(conv.runs)), "runs")
	b.ReportMetric(float64(conv.maxRunEvents()), "max-run-events")
	b.ReportMetric(l.full.pct(50), "getall-tN-p50-ms")
	b.ReportMetric(float64(l.fullMsgs), "getall-tN-msgs")
	b.ReportMetric(conv.sendAll.pct(50), "send-h1000-tN-p50-ms")
	b.ReportMetric(0, "ns/op") // one conversation, whatever b.N
}

// cpuPerTurn is the serve process's CPU per turn of the window (the
// SendMessage and the GetTask), in ms.
func (w *longWindow) cpuPerTurn() float64 {
	if w.cpuMissing || len(w.send.lat) == 0 {
		return math.NaN()
	}
	return float64(w.srvCPU) / float64(time.Millisecond) / float64(len(w.send.lat))
}

// summary is the table printed after the benchmark.
func (conv *longConv) summary() string {
	var sb strings.Builder
	e, l := &conv.early, &conv.late
	fmt.Fprintf(&sb, "--- BenchmarkLongConversation summary: one travel task, %d invalid dates in %s (%.1f ms/turn",
		conv.turns, conv.elapsed.Round(time.Second), float64(conv.elapsed)/float64(time.Millisecond)/float64(conv.turns))
	if conv.cpuOK {
		fmt.Fprintf(&sb, ", server CPU %.1f ms/turn", float64(conv.srvCPU)/float64(time.Millisecond)/float64(conv.turns))
	}
	fmt.Fprintf(&sb, "), %d send retries\n", conv.totalRetries)
	for _, msg := range conv.firstErrors {
		fmt.Fprintf(&sb, "  error (retried): %s\n", msg)
	}
	fmt.Fprintf(&sb, "  load (1/5/15 min): %s (and by age below)\n", strings.Join(conv.loads, "; "))
	k := &conv.fresh
	fmt.Fprintf(&sb, "  %-26s %14s %14s %8s %14s %8s\n", "", fmt.Sprintf("turns %d-%d", e.from, e.to), fmt.Sprintf("turns %d-%d", l.from, l.to), "N/10",
		"fresh task", "N/fresh")
	fmt.Fprintf(&sb, "  %-26s %14s %14s %8s %14s %8s\n", "", "", "", "", fmt.Sprintf("turns %d-%d", k.from, k.to), "")
	row3 := func(name string, a, z, f float64) {
		fmt.Fprintf(&sb, "  %-26s %14.2f %14.2f %8.2f %14.2f %8.2f\n", name, a, z, z/a, f, z/f)
	}
	row := func(name string, a, z float64) {
		fmt.Fprintf(&sb, "  %-26s %14.2f %14.2f %8.2f\n", name, a, z, z/a)
	}
	row3("SendMessage p50 ms", e.send.pct(50), l.send.pct(50), k.send.pct(50))
	row3("SendMessage p95 ms", e.send.pct(95), l.send.pct(95), k.send.pct(95))
	row3("GetTask(10) p50 ms", e.read.pct(50), l.read.pct(50), k.read.pct(50))
	row3("GetTask(10) p95 ms", e.read.pct(95), l.read.pct(95), k.read.pct(95))
	row("history events/turn", e.eventsPerTurn, l.eventsPerTurn)
	row("history bytes/turn", e.bytesPerTurn, l.bytesPerTurn)
	row("  in activities (pages)", e.activityBytesPerTurn, l.activityBytesPerTurn)
	row("  in the rest", e.bytesPerTurn-e.activityBytesPerTurn, l.bytesPerTurn-l.activityBytesPerTurn)
	row3("server CPU ms/turn", e.cpuPerTurn(), l.cpuPerTurn(), k.cpuPerTurn())
	row("GetTask(all) p50 ms", e.full.pct(50), l.full.pct(50))
	row("GetTask(all) messages", float64(e.fullMsgs), float64(l.fullMsgs))
	fmt.Fprintf(&sb, "  (history per turn over %d and %d turns that stayed in one run)\n", e.counted, l.counted)
	fmt.Fprintf(&sb, "  SendMessage with historyLength %d after turn %d (the former default answer): p50 %.1f ms over %d turns\n",
		longBenchOldDefault, conv.turns, conv.sendAll.pct(50), len(conv.sendAll.lat))

	can, after, other := conv.canTurns()
	fmt.Fprintf(&sb, "  continue-as-new: %d turns changed run: p50 %.1f ms, p95 %.1f ms, max %.1f ms; the turns after them p50 %.1f ms; all other turns p50 %.1f ms, p95 %.1f ms\n",
		len(can.lat), can.pct(50), can.pct(95), can.pct(100), after.pct(50), other.pct(50), other.pct(95))

	fmt.Fprintf(&sb, "  runs (visibility): %d\n", len(conv.runs))
	fmt.Fprintf(&sb, "  %4s %-16s %7s %10s %12s %10s %13s\n", "run", "status", "events", "bytes", "start-event B", "first turn", "its turn ms")
	for i, r := range conv.runs {
		turnMs := math.NaN()
		if r.firstTurn > 0 {
			turnMs = float64(conv.log[r.firstTurn].send) / float64(time.Millisecond)
		}
		fmt.Fprintf(&sb, "  %4d %-16s %7d %10d %12d %10d %13.1f\n", i+1,
			strings.TrimPrefix(r.status.String(), "WorkflowExecutionStatus"), r.events, r.bytes, r.startBytes, r.firstTurn, turnMs)
	}

	// The trend across the task's age, from every turn.
	fmt.Fprintf(&sb, "  by age: %-12s %8s %8s %11s %12s %5s %12s %7s %7s %s\n", "turns", "p50 ms", "p95 ms", "events/turn", "bytes/turn*",
		"CAN", "srv cpu ms/t", "RSS MB", "db MB", "load")
	from := 1
	for _, bl := range conv.blocks {
		to := bl.to
		cpu := math.NaN()
		if bl.cpuOK {
			cpu = float64(bl.srvCPU) / float64(time.Millisecond) / float64(to-from+1)
		}
		fmt.Fprintf(&sb, "          %-12s %s %12.1f %7.0f %7.1f %s\n", fmt.Sprintf("%d-%d", from, to),
			conv.rowOf(func(i int, _ longTurn) bool { return i >= from && i <= to }), cpu, bl.rssMB, bl.dbMB, bl.load)
		from = to + 1
	}
	// The same by position in the run: the cost of a run's growing history.
	fmt.Fprintf(&sb, "  by turn in its run: %-10s %8s %8s %11s %12s %5s\n", "turns", "p50 ms", "p95 ms", "events/turn", "bytes/turn*", "CAN")
	maxRunTurn := 0
	for _, t := range conv.log[1:] {
		maxRunTurn = max(maxRunTurn, t.runTurn)
	}
	for from := 1; from <= maxRunTurn; from += longBenchRunBucket {
		to := from + longBenchRunBucket - 1
		fmt.Fprintf(&sb, "                      %-10s %s\n", fmt.Sprintf("%d-%d", from, to), conv.rowOf(func(_ int, t longTurn) bool { return t.runTurn >= from && t.runTurn <= to }))
	}
	sb.WriteString("  (* bytes/turn here is Temporal's history size accounting from DescribeWorkflowExecution, the windows' are proto sizes;\n" +
		"   srv cpu ms/t is the serve process's CPU over the block, which for the blocks holding a window includes its GetTask\n" +
		"   reads and, for the last, the fresh task's turns)\n")
	return sb.String()
}

// rowOf formats the latency, history growth and continue-as-new count of
// the turns in.
func (conv *longConv) rowOf(in func(int, longTurn) bool) string {
	var smp benchSample
	var events, bytes int64
	counted, cans := 0, 0
	for i := 1; i <= conv.turns; i++ {
		t := conv.log[i]
		if !in(i, t) {
			continue
		}
		smp.lat = append(smp.lat, t.send)
		if t.newRun {
			cans++
			continue
		}
		events += t.events - conv.log[i-1].events
		bytes += t.bytes - conv.log[i-1].bytes
		counted++
	}
	per := func(v int64) float64 {
		if counted == 0 {
			return math.NaN()
		}
		return float64(v) / float64(counted)
	}
	return fmt.Sprintf("%8.1f %8.1f %11.2f %12.0f %5d", smp.pct(50), smp.pct(95), per(events), per(bytes), cans)
}

// rssMB is the resident memory of process pid in MB (NaN when unreadable).
func rssMB(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return math.NaN()
	}
	for line := range strings.Lines(string(raw)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return math.NaN()
}

// filesMB is the size of the files matching pattern, in MB.
func filesMB(pattern string) float64 {
	paths, _ := filepath.Glob(pattern)
	var n int64
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return float64(n) / (1 << 20)
}

// loadAvg is the machine's load average (1, 5, 15 minutes).
func loadAvg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], "/")
}
