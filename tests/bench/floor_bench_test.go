package bench

import (
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/uuid"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

const (
	benchRawBookWorkflow = "BenchRawBook"
	benchRawBookActivity = "BenchRawBookTrip"

	// The rest of the travel conversation (agents/travel.go).
	benchTravelDate       = "2026-12-24"
	benchTravelHowMany    = "How many travellers?"
	benchTravelTravellers = "2"
)

// BenchmarkBelowTheFloor measures what is left between a2aflow and a
// server without durability, and Temporal's latency levers, in one run:
//
//   - "a2ago": blocking SendMessage to serve's echo agent against a2a-go
//     v2.4.0's own server (a2asrv, its in-memory task store) echoing the
//     same text, both driven by the same keep-alive JSON-RPC clients;
//     ratio rows a2aflow / a2a-go.
//   - "levers": the travel agent's last turn, which runs the BookTrip
//     activity (three answers before it, not timed), on a serve with eager
//     activity execution (the default) and on one started with
//     --eager-activities=false, each against a raw workflow whose second
//     update runs an activity, on a worker of the benchmark configured the
//     same way (eager on / off); and an echo task on the eager serve for
//     the travel / echo ratio. The servers' activity_eager_execution
//     counters say how many activities started eagerly.
//   - "writes": an echo task and an @mention delegation, both completed
//     in their first turn, on a serve with lean writes (the default) and
//     on one started with --lean-writes=false, two servers that run
//     nothing else; ratio rows lean / plain. The levers section also times
//     a raw workflow whose activity is a local activity ("raw-local").
//   - "eagerstart": raw Temporal ExecuteWorkflow with and without
//     StartWorkflowOptions.EnableEagerStart against Update-with-Start (what
//     a2aflow's API uses, which cannot start eagerly) and a2aflow's echo.
//
// and the history events of a plain turn (an answer to a waiting task that
// asks its next question), of an echo task and of a delegation (each also
// with --lean-writes=false), as custom
// metrics of the "histories" sub-benchmark.
func BenchmarkBelowTheFloor(b *testing.B) {
	ctx := benchContext(b)
	ext := &fakes.ExtAgent{}
	extURL := fakes.ServeExt(b, ext, false).URL
	dirOn := b.TempDir()
	harness.AddAgent(b, dirOn, "ext", extURL)
	on := harness.StartServe(b, dirOn)
	off := harness.StartServe(b, b.TempDir(), "--eager-activities=false")
	// Lean writes on and off, on two servers of their own that run
	// nothing else (the same pollers, the same load).
	dirLean, dirPlain := b.TempDir(), b.TempDir()
	harness.AddAgent(b, dirLean, "ext", extURL)
	harness.AddAgent(b, dirPlain, "ext", extURL)
	lean := harness.StartServe(b, dirLean)
	plain := harness.StartServe(b, dirPlain, "--lean-writes=false")
	echoOn := newBenchA2A(b, ctx, on.APIURL+"/agents/echo", benchConc)
	travelOn := newBenchA2A(b, ctx, on.APIURL, benchConc)
	travelOff := newBenchA2A(b, ctx, off.APIURL, benchConc)
	rawOn := newBenchRawBook(b, on, true)
	rawOff := newBenchRawBook(b, off, false)
	rawLocal := newBenchRawBookAs(b, on, true, true)
	goEcho := newBenchA2A(b, ctx, serveA2AGoEcho(b).URL, benchConc)
	echoLean := newBenchA2A(b, ctx, lean.APIURL+"/agents/echo", benchConc)
	echoPlain := newBenchA2A(b, ctx, plain.APIURL+"/agents/echo", benchConc)
	routerOn := newBenchA2A(b, ctx, lean.APIURL+"/agents/router", benchConc).delegateTo("ext")
	routerPlain := newBenchA2A(b, ctx, plain.APIURL+"/agents/router", benchConc).delegateTo("ext")
	sum := &benchSummary{}

	for _, m := range benchModes {
		b.Run("a2ago/"+m.name, func(b *testing.B) {
			// a2a-go runs in this process: its CPU is the bench column.
			names := []string{"a2aflow", "a2a-go"}
			ops := []benchOp{echoOn.echo, goEcho.echo}
			benchWarm(b, ctx, m.conc, ops...)
			b.ResetTimer()
			smps := benchInterleave(b, ctx, benchPid(on), m.conc, m.round, ops...)
			b.StopTimer()
			for i, smp := range smps {
				smp.report(b, names[i]+"-", true)
				sum.set("a2ago/"+m.name+" "+names[i], smp)
			}
			benchReportRatio(b, smps[0], smps[1], true)
			b.ReportMetric(0, "ns/op")
		})
	}

	for _, m := range benchModes {
		b.Run("levers/"+m.name, func(b *testing.B) {
			names := []string{"echo", "travel-eager", "travel-noeager", "raw-eager", "raw-noeager", "raw-local"}
			ops := []benchOp{echoOn.echo, travelOn.book, travelOff.book, rawOn.book, rawOff.book, rawLocal.book}
			pids := []int{benchPid(on), benchPid(on), benchPid(off), benchPid(on), benchPid(off), benchPid(on)}
			benchWarm(b, ctx, m.conc, ops...)
			eagerOn0, eagerOff0 := benchCounter(b, on, "activity_eager_execution"), benchCounter(b, off, "activity_eager_execution")
			b.ResetTimer()
			smps := benchInterleavePids(b, ctx, pids, m.conc, m.round, ops...)
			b.StopTimer()
			eagerOn, eagerOff := benchCounter(b, on, "activity_eager_execution")-eagerOn0, benchCounter(b, off, "activity_eager_execution")-eagerOff0
			for i, smp := range smps {
				// The travel and raw-book operations have an untimed setup.
				smp.report(b, names[i]+"-", i == 0)
				sum.set("levers/"+m.name+" "+names[i], smp)
			}
			b.ReportMetric(smps[1].pct(50)/smps[0].pct(50), "travel/echo-p50")
			b.ReportMetric(smps[1].pct(50)/smps[2].pct(50), "eager/noeager-p50")
			b.ReportMetric(smps[3].pct(50)/smps[4].pct(50), "raw-eager/noeager-p50")
			b.ReportMetric(smps[1].pct(50)/smps[3].pct(50), "a2a/raw-eager-p50")
			b.ReportMetric(smps[2].pct(50)/smps[4].pct(50), "a2a/raw-noeager-p50")
			b.ReportMetric(smps[5].pct(50)/smps[3].pct(50), "raw-local/eager-p50")
			// One activity per timed operation on each server (a2aflow's
			// BookTrip and the raw one).
			b.ReportMetric(eagerOn/float64(2*b.N), "eager-acts/act-on")
			b.ReportMetric(eagerOff/float64(2*b.N), "eager-acts/act-off")
			b.ReportMetric(0, "ns/op")
		})
	}

	for _, m := range benchModes {
		b.Run("writes/"+m.name, func(b *testing.B) {
			// Lean writes (the default) against --lean-writes=false, on
			// servers alike but for that flag (eager activities on both):
			// an echo task and a delegation that complete in their first
			// turn.
			names := []string{"echo-lean", "echo-plain", "delegate-lean", "delegate-plain"}
			ops := []benchOp{echoLean.echo, echoPlain.echo, routerOn.delegate, routerPlain.delegate}
			pids := []int{benchPid(lean), benchPid(plain), benchPid(lean), benchPid(plain)}
			benchWarm(b, ctx, m.conc, ops...)
			b.ResetTimer()
			smps := benchInterleavePids(b, ctx, pids, m.conc, m.round, ops...)
			b.StopTimer()
			for i, smp := range smps {
				smp.report(b, names[i]+"-", true)
				sum.set("writes/"+m.name+" "+names[i], smp)
			}
			b.ReportMetric(smps[0].pct(50)/smps[1].pct(50), "echo-lean/plain-p50")
			b.ReportMetric(smps[2].pct(50)/smps[3].pct(50), "delegate-lean/plain-p50")
			b.ReportMetric(0, "ns/op")
		})
	}

	rawStart := newBenchRaw(b, on)
	leanClient, err := client.Dial(client.Options{HostPort: lean.TemporalAddr, Namespace: "default"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(leanClient.Close)
	plainClient, err := client.Dial(client.Options{HostPort: plain.TemporalAddr, Namespace: "default"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(plainClient.Close)
	b.Run("eagerstart/seq", func(b *testing.B) {
		names := []string{"raw-start", "raw-start-eager", "raw-uws", "a2aflow"}
		ops := []benchOp{rawStart.echo, rawStart.eagerEcho, rawStart.uwsEcho, echoOn.echo}
		benchWarm(b, ctx, 1, ops...)
		eager0 := benchCounter(b, on, "workflow_eager_execution")
		denied0 := benchCounter(b, on, "workflow_eager_execution_denied")
		b.ResetTimer()
		smps := benchInterleave(b, ctx, benchPid(on), 1, benchRoundSeq, ops...)
		b.StopTimer()
		eager := benchCounter(b, on, "workflow_eager_execution") - eager0
		denied := benchCounter(b, on, "workflow_eager_execution_denied") - denied0
		for i, smp := range smps {
			smp.report(b, names[i]+"-", true)
			sum.set("eagerstart "+names[i], smp)
		}
		b.ReportMetric(smps[1].pct(50)/smps[0].pct(50), "eager/start-p50")
		b.ReportMetric((eager-denied)/float64(b.N), "eager-starts/op")
		b.ReportMetric(0, "ns/op")
	})

	histories := "\n  histories:"
	b.Run("histories", func(b *testing.B) {
		histories = "\n  histories:"
		for _, h := range []struct {
			name string
			op   benchIDOp
			from int // events before the part measured: the setup's
			c    client.Client
		}{
			{"plain-turn", travelOn.plainTurnRun, -1, nil},
			{"echo-task", echoOn.echoRun, 0, nil},
			{"echo-plain", echoPlain.echoRun, 0, plainClient},
			{"delegation", routerOn.run, 0, leanClient},
			{"deleg-plain", routerPlain.run, 0, plainClient},
			{"raw-delegation", newBenchRawDelegate(b, ctx, on, extURL).delegateRun, 0, nil},
		} {
			c := rawStart.c
			if h.c != nil {
				c = h.c
			}
			events, desc, err := benchTurnEvents(ctx, c, h.op, h.from)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(events), "events/"+h.name)
			histories += fmt.Sprintf("\n  %-14s %s", h.name, desc)
		}
		b.ReportMetric(0, "ns/op")
	})

	benchPrint(b, sum.table([][2]string{
		{"a2ago/seq a2aflow", "a2ago/seq a2a-go"},
		{"a2ago/conc8 a2aflow", "a2ago/conc8 a2a-go"},
		{"levers/seq travel-eager", "levers/seq echo"},
		{"levers/seq travel-eager", "levers/seq travel-noeager"},
		{"levers/seq raw-eager", "levers/seq raw-noeager"},
		{"levers/seq travel-eager", "levers/seq raw-eager"},
		{"levers/seq travel-noeager", "levers/seq raw-noeager"},
		{"levers/seq raw-local", "levers/seq raw-eager"},
		{"levers/conc8 travel-eager", "levers/conc8 echo"},
		{"levers/conc8 travel-eager", "levers/conc8 travel-noeager"},
		{"levers/conc8 raw-eager", "levers/conc8 raw-noeager"},
		{"levers/conc8 travel-eager", "levers/conc8 raw-eager"},
		{"levers/conc8 travel-noeager", "levers/conc8 raw-noeager"},
		{"levers/conc8 raw-local", "levers/conc8 raw-eager"},
		{"writes/seq echo-lean", "writes/seq echo-plain"},
		{"writes/seq delegate-lean", "writes/seq delegate-plain"},
		{"writes/conc8 echo-lean", "writes/conc8 echo-plain"},
		{"writes/conc8 delegate-lean", "writes/conc8 delegate-plain"},
		{"eagerstart raw-start-eager", "eagerstart raw-start"},
		{"eagerstart raw-uws", "eagerstart raw-start"},
		{"eagerstart a2aflow", "eagerstart raw-uws"},
	})+histories)
}

// book runs the travel conversation to its last question (not timed) and
// times the answer that books the trip: a turn that runs an activity.
func (e *benchA2A) book(ctx context.Context, w int) (time.Duration, error) {
	taskID, err := e.travelTo(ctx, w, 3)
	if err != nil {
		return 0, err
	}
	answer := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(benchTravelTravellers))
	answer.TaskID = a2a.TaskID(taskID)
	t0 := time.Now()
	task, err := e.send(ctx, w, answer)
	d := time.Since(t0)
	if err != nil {
		return 0, err
	}
	if task.Status.State != a2a.TaskStateCompleted || !strings.HasPrefix(benchStatusText(task), "Booked: 2 traveller(s) to Lisbon") {
		return 0, fmt.Errorf("task %s is %s with %q, want completed and booked", task.ID, task.Status.State, benchStatusText(task))
	}
	return d, nil
}

// travelTo starts a travel task and answers its questions until it has asked
// the n-th one (1: "Where to?"), and returns its ID.
func (e *benchA2A) travelTo(ctx context.Context, w, n int) (string, error) {
	texts := []string{benchTravelFirst, benchTravelAnswer, benchTravelDate}
	wants := []string{benchTravelWhere, benchTravelWhen, benchTravelHowMany}
	var id a2a.TaskID
	for i := range n {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(texts[i]))
		msg.TaskID = id
		task, err := e.send(ctx, w, msg)
		if err != nil {
			return "", err
		}
		if err := benchWantTask(task, a2a.TaskStateInputRequired, wants[i]); err != nil {
			return "", err
		}
		id = task.ID
	}
	return string(id), nil
}

// plainTurnRun is a plain turn: the answer to a waiting travel task
// ("Lisbon"), after which it asks its next question.
func (e *benchA2A) plainTurnRun(ctx context.Context, w int) (string, time.Duration, error) {
	return e.resumeRun(ctx, w)
}

func benchStatusText(task *a2a.Task) string {
	if task.Status.Message == nil {
		return ""
	}
	return workflows.MessageText(task.Status.Message)
}

// benchTurnEvents runs op and counts the events of its workflow's history:
// all of them when from is 0, those from the first workflow task after the
// history's last-but-one WorkflowExecutionUpdateCompleted (the turn op
// timed, after its setup) when from is -1. desc lists them as benchHistory does.
func benchTurnEvents(ctx context.Context, c client.Client, op benchIDOp, from int) (int, string, error) {
	id, _, err := op(ctx, 0)
	if err != nil {
		return 0, "", err
	}
	var types []string
	var sizes []int
	var updateEnds []int
	it := c.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return 0, "", fmt.Errorf("history of %s: %w", id, err)
		}
		if ev.GetEventType() == enums.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED {
			updateEnds = append(updateEnds, len(types))
		}
		types = append(types, benchEventAbbrev(ev.GetEventType()))
		sizes = append(sizes, proto.Size(ev))
	}
	start := 0
	if from < 0 {
		if len(updateEnds) < 2 {
			return 0, "", fmt.Errorf("history of %s has %d updates completed, want 2 or more", id, len(updateEnds))
		}
		// The setup's last turn may write after its update completed
		// (the task's state, once the update handler has answered): the
		// turn begins with its workflow task.
		start = updateEnds[len(updateEnds)-2] + 1
		for start < len(types) && types[start] != benchEventAbbrev(enums.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED) {
			start++
		}
	}
	size := 0
	for _, s := range sizes[start:] {
		size += s
	}
	n := len(types) - start
	return n, fmt.Sprintf("%2d events, %5d B: %s", n, size, strings.Join(types[start:], " ")), nil
}

// benchCounter is the sum of every series of the Prometheus counter name
// on s's /metrics (Temporal's server metrics are there in serve).
func benchCounter(b testing.TB, s *harness.Server, name string) float64 {
	b.Helper()
	resp, err := http.Get(s.APIURL + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	total := 0.0
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		metric, _, _ := strings.Cut(series, "{")
		if !ok || (metric != name && metric != name+"_total") {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err == nil {
			total += v
		}
	}
	return total
}

// benchRawBook is the baseline of a turn that runs an activity: a workflow
// whose first update returns at once and whose second runs one activity
// before it returns, on a worker of the benchmark with eager activity
// execution on or off, or (local) as a local activity: the lever a turn
// whose activity is short, local and idempotent could use (measured here on
// the raw workflow only).
type benchRawBook struct {
	c     client.Client
	queue string
}

func newBenchRawBook(b testing.TB, s *harness.Server, eager bool) *benchRawBook {
	return newBenchRawBookAs(b, s, eager, false)
}

func newBenchRawBookAs(b testing.TB, s *harness.Server, eager, local bool) *benchRawBook {
	b.Helper()
	raw := newBenchRaw(b, s)
	r := &benchRawBook{c: raw.c, queue: "bench-book-" + uuid.NewString()}
	w := worker.New(raw.c, r.queue, worker.Options{
		MaxConcurrentWorkflowTaskPollers: engine.WorkflowTaskPollers,
		MaxConcurrentActivityTaskPollers: engine.ActivityTaskPollers,
		DisableEagerActivities:           !eager,
	})
	book := func(ctx context.Context, in string) (string, error) {
		return "booked " + in, nil
	}
	w.RegisterActivityWithOptions(book, activity.RegisterOptions{Name: benchRawBookActivity})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context) (int, error) {
		received := 0
		if err := workflow.SetUpdateHandler(ctx, benchRawUpdate, func(ctx workflow.Context, in string) (string, error) {
			received++
			if received < 2 {
				return in, nil
			}
			var out string
			if local {
				lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{ScheduleToCloseTimeout: 30 * time.Second})
				err := workflow.ExecuteLocalActivity(lctx, book, in).Get(ctx, &out)
				return out, err
			}
			actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
			err := workflow.ExecuteActivity(actx, benchRawBookActivity, in).Get(ctx, &out)
			return out, err
		}); err != nil {
			return 0, err
		}
		err := workflow.Await(ctx, func() bool { return received >= 2 && workflow.AllHandlersFinished(ctx) })
		return received, err
	}, workflow.RegisterOptions{Name: benchRawBookWorkflow})
	if err := w.Start(); err != nil {
		b.Fatalf("start worker: %v", err)
	}
	b.Cleanup(w.Stop)
	return r
}

// book starts the workflow with its first update (not timed) and times the
// second, which runs the activity.
func (r *benchRawBook) book(ctx context.Context, w int) (time.Duration, error) {
	id := uuid.NewString()
	start := r.c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID: id, TaskQueue: r.queue, WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, benchRawBookWorkflow)
	h, err := r.c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions:          client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: benchRawUpdate, Args: []any{benchTravelFirst}, WaitForStage: client.WorkflowUpdateStageCompleted},
	})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err != nil {
		return 0, fmt.Errorf("UpdateWithStartWorkflow: %w", err)
	}
	t0 := time.Now()
	h, err = r.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: id, UpdateName: benchRawUpdate, Args: []any{benchTravelTravellers}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return 0, fmt.Errorf("UpdateWorkflow: %w", err)
	}
	var out string
	if err := h.Get(ctx, &out); err != nil {
		return 0, fmt.Errorf("update of %s: %w", id, err)
	}
	d := time.Since(t0)
	if out != "booked "+benchTravelTravellers {
		return 0, fmt.Errorf("update returned %q", out)
	}
	return d, nil
}

// eagerEcho is echo started with StartWorkflowOptions.EnableEagerStart: the
// first workflow task comes back in the start's response to this worker.
func (r *benchRaw) eagerEcho(ctx context.Context, w int) (time.Duration, error) {
	text := fmt.Sprintf("hello from client %d", w)
	t0 := time.Now()
	run, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: r.queue, EnableEagerStart: true}, benchRawEchoWorkflow, text)
	if err != nil {
		return 0, fmt.Errorf("ExecuteWorkflow: %w", err)
	}
	var out string
	if err := run.Get(ctx, &out); err != nil {
		return 0, fmt.Errorf("workflow %s: %w", run.GetID(), err)
	}
	d := time.Since(t0)
	if out != text {
		return 0, fmt.Errorf("workflow %s returned %q, want %q", run.GetID(), out, text)
	}
	return d, nil
}

// a2aGoEcho is an a2a-go agent that completes every task at once with the
// text it was sent, as a2aflow's echo agent does.
type a2aGoEcho struct{ fakes.CancelsAtOnce }

func (a2aGoEcho) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text := workflows.MessageText(ec.Message)
		// a2a-go wants a task (or a message) first.
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(text))), nil)
	}
}

// serveA2AGoEcho serves a2aGoEcho with a2a-go's JSON-RPC handler and its
// default in-memory task store, with a card listing JSON-RPC.
func serveA2AGoEcho(b testing.TB) *httptest.Server {
	return fakes.RemoteAgent{Name: "echo", Description: "Echoes the text it is sent.", Skill: "Echo", SkillDoes: "Echoes the text."}.Serve(b, a2aGoEcho{})
}
