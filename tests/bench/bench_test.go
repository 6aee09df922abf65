package bench

// Benchmarks of a2aflow's overhead over raw Temporal, run by `make bench`:
//
//	go test ./tests/bench -run '^$' -bench . -benchtime=200x -count=1
//
// Machines are shared and noisy, so absolute numbers mean little: every
// benchmark measures a baseline on the same embedded Temporal server in the
// same run, and the comparisons interleave the two sides in small rounds so
// that a burst of load elsewhere hits both. Latencies are reported as p50 and
// p95 in milliseconds ("p50-ms", "p95-ms"), throughput in tasks per second,
// and a2aflow/raw as "ratio-*" (above 1 means a2aflow is slower). Nothing here
// asserts on timing.
//
// Each top-level benchmark starts its servers once and measures in
// sub-benchmarks (a top-level benchmark with sub-benchmarks runs once, while
// a leaf runs once with b.N=1 and again with the requested b.N).

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/google/uuid"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

const (
	// benchConc is the number of concurrent clients of the "conc8" modes.
	benchConc = 8
	// benchRoundSeq and benchRoundConc are the operations per side and round
	// when two sides are interleaved.
	benchRoundSeq  = 10
	benchRoundConc = 6 * benchConc

	// The baseline's workflow types and update name, on the benchmark's own
	// task queue and in-process worker.
	benchRawEchoWorkflow  = "BenchRawEcho"
	benchRawAwaitWorkflow = "BenchRawAwaitUpdates"
	benchRawUpdate        = "Message"

	// Texts of the travel conversation (agents/travel.go).
	benchTravelFirst     = "Book a flight"
	benchTravelWhere     = "Where to?"
	benchTravelAnswer    = "Lisbon"
	benchTravelWhen      = "On which date? (YYYY-MM-DD)"
	benchTickDynamicConf = "history.transferProcessorMaxPollRPS=20"
)

// benchMode is a client concurrency and the operations per side and round.
type benchMode struct {
	name        string
	conc, round int
}

// benchModes are the client concurrencies measured.
var benchModes = []benchMode{
	{"seq", 1, benchRoundSeq},
	{"conc8", benchConc, benchRoundConc},
}

// ---------------------------------------------------------------------------
// (a) + (b): each side alone, on its own server.

// BenchmarkSendMessageEcho measures blocking A2A SendMessage (JSON-RPC, A2A
// 1.0, the official Go client) to the echo agent: each call creates a task
// that completes.
func BenchmarkSendMessageEcho(b *testing.B) {
	s := harness.StartServe(b, b.TempDir())
	ctx := benchContext(b)
	a2aSide := newBenchA2A(b, ctx, s.APIURL+"/agents/echo", benchConc)
	sum := &benchSummary{}
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			benchWarm(b, ctx, m.conc, a2aSide.echo)
			b.ResetTimer()
			smp, err := benchBlock(ctx, benchPid(s), b.N, m.conc, a2aSide.echo)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			smp.report(b, "", true)
			sum.set(m.name+" a2a", smp)
		})
	}
	benchPrint(b, sum.table(nil))
}

// BenchmarkRawTemporalEcho is the baseline of BenchmarkSendMessageEcho: a
// workflow that returns its input, started with ExecuteWorkflow and awaited
// with Get, run by an in-process worker on the same embedded server.
func BenchmarkRawTemporalEcho(b *testing.B) {
	s := harness.StartServe(b, b.TempDir())
	ctx := benchContext(b)
	raw := newBenchRaw(b, s)
	sum := &benchSummary{}
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			benchWarm(b, ctx, m.conc, raw.echo)
			b.ResetTimer()
			smp, err := benchBlock(ctx, benchPid(s), b.N, m.conc, raw.echo)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			smp.report(b, "", true)
			sum.set(m.name+" raw", smp)
		})
	}
	benchPrint(b, sum.table(nil))
}

// ---------------------------------------------------------------------------
// (c) + (e): both sides interleaved on one server, with a2aflow's raised
// history poll rate and with Temporal's default of 20/s.

// BenchmarkEchoVsRawTemporal interleaves BenchmarkSendMessageEcho's and
// BenchmarkRawTemporalEcho's operations on one server and reports both and
// their ratio. It runs twice: "tick-raised" is a2aflow's default
// configuration (history queue processors polling at up to 1000/s),
// "tick20" the embedded server with Temporal's own default of 20/s.
func BenchmarkEchoVsRawTemporal(b *testing.B) {
	sum := &benchSummary{}
	ticks := []struct {
		name string
		args []string
	}{
		{"tick-raised", nil},
		{"tick20", []string{"--temporal-dynamic-config", benchTickDynamicConf}},
	}
	for _, tick := range ticks {
		b.Run(tick.name, func(b *testing.B) {
			// The server lives as long as this sub-benchmark: its cleanup
			// kills it before the next one starts.
			s := harness.StartServe(b, b.TempDir(), tick.args...)
			ctx := benchContext(b)
			a2aSide := newBenchA2A(b, ctx, s.APIURL+"/agents/echo", benchConc)
			raw := newBenchRaw(b, s)
			for _, m := range benchModes {
				b.Run(m.name, func(b *testing.B) {
					benchPair(b, ctx, s, m, a2aSide.echo, raw.echo, sum, tick.name+"/"+m.name)
				})
			}
		})
	}
	benchPrint(b, sum.table([][2]string{
		{"tick-raised/seq a2a", "tick-raised/seq raw"},
		{"tick-raised/conc8 a2a", "tick-raised/conc8 raw"},
		{"tick20/seq a2a", "tick20/seq raw"},
		{"tick20/conc8 a2a", "tick20/conc8 raw"},
		{"tick20/seq a2a", "tick-raised/seq a2a"},
		{"tick20/seq raw", "tick-raised/seq raw"},
		{"tick20/conc8 a2a", "tick-raised/conc8 a2a"},
		{"tick20/conc8 raw", "tick-raised/conc8 raw"},
	}))
}

// ---------------------------------------------------------------------------
// (d): resuming an input-required task.

// BenchmarkResumeInputRequired measures the answer to a waiting task: the
// travel agent's task asks "Where to?" (set up, not timed), then the timed
// SendMessage "Lisbon" returns once the task is input-required again, asking
// for the date. The baseline is a Temporal Update round trip (UpdateWorkflow
// waiting for the Completed stage, then Get) on a trivial workflow, started
// the same way (Update-with-Start, not timed), that returns after the update.
func BenchmarkResumeInputRequired(b *testing.B) {
	s := harness.StartServe(b, b.TempDir())
	ctx := benchContext(b)
	a2aSide := newBenchA2A(b, ctx, s.APIURL, 1)
	raw := newBenchRaw(b, s)
	sum := &benchSummary{}
	b.Run("seq", func(b *testing.B) {
		benchWarm(b, ctx, 1, a2aSide.resume, raw.resume)
		b.ResetTimer()
		smps := benchInterleave(b, ctx, benchPid(s), 1, benchRoundSeq, a2aSide.resume, raw.resume)
		b.StopTimer()
		a, r := smps[0], smps[1]
		// The wall time and the CPU include the untimed setup, so no
		// throughput here, and CPU per op is per setup + answer.
		a.report(b, "a2a-", false)
		r.report(b, "raw-", false)
		benchReportRatio(b, a, r, false)
		b.ReportMetric(0, "ns/op")
		sum.set("resume a2a", a)
		sum.set("resume raw", r)
	})
	histories := benchHistories(b, ctx, raw.c, "after the timed answer", a2aSide.resumeRun, raw.resumeRun)
	benchPrint(b, sum.tableNoTput([][2]string{{"resume a2a", "resume raw"}})+histories)
}

// ---------------------------------------------------------------------------
// Attribution: the way from raw Temporal to a2aflow in steps.

// BenchmarkEchoBreakdown interleaves five ways of running one echo, each
// adding one piece of what a2aflow does:
//
//	raw-start  ExecuteWorkflow + Get of a workflow returning its input
//	raw-uws    Update-with-Start of a trivial workflow whose update returns
//	           the input (the workflow then completes)
//	task-own   Update-with-Start of a2aflow's TaskWorkflow running the echo
//	           agent, with the API's start options (search attributes, memo),
//	           run by the benchmark's in-process worker
//	task-srv   the same on a2aflow's task queue, run by the server's worker
//	a2a-http   A2A SendMessage over HTTP (JSON-RPC) to the echo agent
//
// so raw-uws-raw-start is Update-with-Start vs Start, task-own-raw-uws the
// task workflow's own work, task-srv-task-own where the worker runs, and
// a2a-http-task-srv the HTTP/JSON-RPC layer and the API.
func BenchmarkEchoBreakdown(b *testing.B) {
	s := harness.StartServe(b, b.TempDir())
	ctx := benchContext(b)
	a2aSide := newBenchA2A(b, ctx, s.APIURL+"/agents/echo", benchConc)
	raw := newBenchRaw(b, s)
	names := []string{"raw-start", "raw-uws", "task-own", "task-srv", "a2a-http"}
	idOps := []benchIDOp{raw.echoRun, raw.uwsEchoRun, raw.taskEchoRun(raw.queue), raw.taskEchoRun(wire.DefaultTaskQueue), a2aSide.echoRun}
	var ops []benchOp
	for _, op := range idOps {
		ops = append(ops, op.timed)
	}
	sum := &benchSummary{}
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			benchWarm(b, ctx, m.conc, ops...)
			b.ResetTimer()
			smps := benchInterleave(b, ctx, benchPid(s), m.conc, m.round, ops...)
			b.StopTimer()
			for i, smp := range smps {
				smp.report(b, names[i]+"-", true)
				sum.set(m.name+" "+names[i], smp)
			}
			b.ReportMetric(0, "ns/op")
		})
	}
	var pairs [][2]string
	for _, m := range benchModes {
		for i := 1; i < len(names); i++ {
			pairs = append(pairs, [2]string{m.name + " " + names[i], m.name + " " + names[i-1]})
		}
		pairs = append(pairs, [2]string{m.name + " a2a-http", m.name + " raw-start"})
	}
	histories := "\n  histories:"
	for i, op := range idOps {
		h, err := benchHistory(ctx, raw.c, op)
		if err != nil {
			b.Fatal(err)
		}
		histories += fmt.Sprintf("\n  %-9s %s", names[i], h)
	}
	benchPrint(b, sum.table(pairs)+histories)
}

// ---------------------------------------------------------------------------
// The a2aflow side: the official a2a-go client over HTTP.

type benchA2A struct {
	clients []*a2aclient.Client
}

// newBenchA2A resolves the card at baseURL and makes n clients of it (one per
// concurrent caller). They share one HTTP transport that keeps enough idle
// connections for all of them: Go's default keeps 2 per host, which would
// make every concurrent caller beyond the second dial a new connection per
// request.
func newBenchA2A(b testing.TB, ctx context.Context, baseURL string, n int) *benchA2A {
	b.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, baseURL)
	if err != nil {
		b.Fatalf("resolve card at %s: %v", baseURL, err)
	}
	if len(card.SupportedInterfaces) == 0 || card.SupportedInterfaces[0].ProtocolBinding != a2a.TransportProtocolJSONRPC {
		b.Fatalf("card at %s does not list JSON-RPC first: %+v", baseURL, card.SupportedInterfaces)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConns = 4 * benchConc
	transport.MaxIdleConnsPerHost = 4 * benchConc
	hc := &http.Client{Transport: transport, Timeout: 2 * time.Minute}
	b.Cleanup(transport.CloseIdleConnections)
	e := &benchA2A{}
	for range n {
		c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
		if err != nil {
			b.Fatalf("client for %s: %v", baseURL, err)
		}
		b.Cleanup(func() { _ = c.Destroy() })
		e.clients = append(e.clients, c)
	}
	return e
}

func (e *benchA2A) send(ctx context.Context, w int, msg *a2a.Message) (*a2a.Task, error) {
	res, err := e.clients[w].SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		return nil, fmt.Errorf("SendMessage(%q): %w", workflows.MessageText(msg), err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		return nil, fmt.Errorf("SendMessage(%q) returned %T, want *a2a.Task", workflows.MessageText(msg), res)
	}
	return task, nil
}

// echo sends one message to the echo agent: a new task, completed.
func (e *benchA2A) echo(ctx context.Context, w int) (time.Duration, error) {
	return benchIDOp(e.echoRun).timed(ctx, w)
}

func (e *benchA2A) echoRun(ctx context.Context, w int) (string, time.Duration, error) {
	text := fmt.Sprintf("hello from client %d", w)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	t0 := time.Now()
	task, err := e.send(ctx, w, msg)
	d := time.Since(t0)
	if err != nil {
		return "", 0, err
	}
	if err := benchWantTask(task, a2a.TaskStateCompleted, text); err != nil {
		return "", 0, err
	}
	return string(task.ID), d, nil
}

// resume starts a travel task (not timed) and times the answer to its first question.
func (e *benchA2A) resume(ctx context.Context, w int) (time.Duration, error) {
	return benchIDOp(e.resumeRun).timed(ctx, w)
}

func (e *benchA2A) resumeRun(ctx context.Context, w int) (string, time.Duration, error) {
	task, err := e.send(ctx, w, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(benchTravelFirst)))
	if err != nil {
		return "", 0, err
	}
	if err := benchWantTask(task, a2a.TaskStateInputRequired, benchTravelWhere); err != nil {
		return "", 0, err
	}
	answer := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(benchTravelAnswer))
	answer.TaskID = task.ID
	t0 := time.Now()
	task, err = e.send(ctx, w, answer)
	d := time.Since(t0)
	if err != nil {
		return "", 0, err
	}
	if err := benchWantTask(task, a2a.TaskStateInputRequired, benchTravelWhen); err != nil {
		return "", 0, err
	}
	return string(task.ID), d, nil
}

func benchWantTask(task *a2a.Task, state a2a.TaskState, text string) error {
	var got string
	if task.Status.Message != nil {
		got = workflows.MessageText(task.Status.Message)
	}
	if task.Status.State != state || got != text {
		return fmt.Errorf("task %s is %s with status message %q, want %s with %q", task.ID, task.Status.State, got, state, text)
	}
	return nil
}

// ---------------------------------------------------------------------------
// The baseline: raw Temporal SDK calls and an in-process worker.

type benchRaw struct {
	c     client.Client
	queue string
}

// newBenchRaw dials the server's Temporal frontend and starts a worker on a
// task queue of its own with the baseline workflows (and, for the
// breakdown, a2aflow's TaskWorkflow serving the echo agent). It polls like
// the a2aflow worker (engine.WorkerOptions' pollers, not the SDK's 2).
func newBenchRaw(b testing.TB, s *harness.Server) *benchRaw {
	b.Helper()
	logger := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	c, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default", Logger: logger})
	if err != nil {
		b.Fatalf("dial Temporal at %s: %v", s.TemporalAddr, err)
	}
	b.Cleanup(c.Close)
	r := &benchRaw{c: c, queue: "bench-" + uuid.NewString()}
	reg, err := engine.NewRegistry(benchEchoAgent())
	if err != nil {
		b.Fatal(err)
	}
	w := worker.New(c, r.queue, worker.Options{
		MaxConcurrentWorkflowTaskPollers: engine.WorkflowTaskPollers,
		MaxConcurrentActivityTaskPollers: engine.ActivityTaskPollers,
	})
	w.RegisterWorkflowWithOptions(benchEchoWorkflow, workflow.RegisterOptions{Name: benchRawEchoWorkflow})
	w.RegisterWorkflowWithOptions(benchAwaitUpdatesWorkflow, workflow.RegisterOptions{Name: benchRawAwaitWorkflow})
	w.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, engine.Options{}), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	if err := w.Start(); err != nil {
		b.Fatalf("start worker: %v", err)
	}
	b.Cleanup(w.Stop)
	return r
}

// benchEchoWorkflow returns its input.
func benchEchoWorkflow(ctx workflow.Context, in string) (string, error) { return in, nil }

// benchAwaitUpdatesWorkflow returns after n updates, each of which returns its input.
func benchAwaitUpdatesWorkflow(ctx workflow.Context, n int) (int, error) {
	received := 0
	if err := workflow.SetUpdateHandler(ctx, benchRawUpdate, func(ctx workflow.Context, in string) (string, error) {
		received++
		return in, nil
	}); err != nil {
		return 0, err
	}
	if err := workflow.Await(ctx, func() bool { return received >= n && workflow.AllHandlersFinished(ctx) }); err != nil {
		return 0, err
	}
	return received, nil
}

// echo runs benchEchoWorkflow: ExecuteWorkflow + Get.
func (r *benchRaw) echo(ctx context.Context, w int) (time.Duration, error) {
	return benchIDOp(r.echoRun).timed(ctx, w)
}

func (r *benchRaw) echoRun(ctx context.Context, w int) (string, time.Duration, error) {
	text := fmt.Sprintf("hello from client %d", w)
	return benchExecute(ctx, r.c, r.queue, benchRawEchoWorkflow, text, text)
}

// benchExecute runs workflowType(in) on queue with ExecuteWorkflow + Get,
// timed, and checks that it returned want.
func benchExecute(ctx context.Context, c client.Client, queue, workflowType, in, want string) (string, time.Duration, error) {
	t0 := time.Now()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, workflowType, in)
	if err != nil {
		return "", 0, fmt.Errorf("ExecuteWorkflow: %w", err)
	}
	var out string
	if err := run.Get(ctx, &out); err != nil {
		return "", 0, fmt.Errorf("workflow %s: %w", run.GetID(), err)
	}
	d := time.Since(t0)
	if out != want {
		return "", 0, fmt.Errorf("workflow %s returned %q, want %q", run.GetID(), out, want)
	}
	return run.GetID(), d, nil
}

// updateWithStart starts benchAwaitUpdatesWorkflow(n) as id with the update text.
func (r *benchRaw) updateWithStart(ctx context.Context, id string, n int, text string) (string, error) {
	start := r.c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                r.queue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, benchRawAwaitWorkflow, n)
	h, err := r.c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			WorkflowID:   id,
			UpdateName:   benchRawUpdate,
			Args:         []any{text},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err != nil {
		return "", fmt.Errorf("UpdateWithStartWorkflow: %w", err)
	}
	var out string
	if err := h.Get(ctx, &out); err != nil {
		return "", fmt.Errorf("update of %s: %w", id, err)
	}
	return out, nil
}

// uwsEcho is echo with Update-with-Start: the update returns the input.
func (r *benchRaw) uwsEcho(ctx context.Context, w int) (time.Duration, error) {
	return benchIDOp(r.uwsEchoRun).timed(ctx, w)
}

func (r *benchRaw) uwsEchoRun(ctx context.Context, w int) (string, time.Duration, error) {
	text := fmt.Sprintf("hello from client %d", w)
	id := uuid.NewString()
	t0 := time.Now()
	out, err := r.updateWithStart(ctx, id, 1, text)
	d := time.Since(t0)
	if err != nil {
		return "", 0, err
	}
	if out != text {
		return "", 0, fmt.Errorf("update returned %q, want %q", out, text)
	}
	return id, d, nil
}

// resume starts benchAwaitUpdatesWorkflow(2) with a first update (not timed)
// and times the second, after which the workflow returns.
func (r *benchRaw) resume(ctx context.Context, w int) (time.Duration, error) {
	return benchIDOp(r.resumeRun).timed(ctx, w)
}

func (r *benchRaw) resumeRun(ctx context.Context, w int) (string, time.Duration, error) {
	id := uuid.NewString()
	if _, err := r.updateWithStart(ctx, id, 2, benchTravelFirst); err != nil {
		return "", 0, err
	}
	t0 := time.Now()
	h, err := r.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   id,
		UpdateName:   benchRawUpdate,
		Args:         []any{benchTravelAnswer},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return "", 0, fmt.Errorf("UpdateWorkflow: %w", err)
	}
	var out string
	if err := h.Get(ctx, &out); err != nil {
		return "", 0, fmt.Errorf("update of %s: %w", id, err)
	}
	d := time.Since(t0)
	if out != benchTravelAnswer {
		return "", 0, fmt.Errorf("update returned %q, want %q", out, benchTravelAnswer)
	}
	return id, d, nil
}

// taskEchoRun returns an op that does what the API's task service does for
// a new echo task, with the SDK directly: Update-with-Start of TaskWorkflow
// on queue with the API's start options.
func (r *benchRaw) taskEchoRun(queue string) benchIDOp {
	agent := benchEchoAgent()
	return func(ctx context.Context, w int) (string, time.Duration, error) {
		text := fmt.Sprintf("hello from client %d", w)
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
		taskID, contextID := uuid.NewString(), a2a.NewContextID()
		t0 := time.Now()
		start := r.c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
			ID:                       taskID,
			TaskQueue:                queue,
			WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
			WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			TypedSearchAttributes: temporal.NewSearchAttributes(
				wire.ContextIDKey.ValueSet(contextID),
				wire.TaskStateKey.ValueSet(string(a2a.TaskStateWorking)),
				wire.AgentKey.ValueSet(agent.Name),
				wire.SkillKey.ValueSet(agent.DefaultSkill()),
			),
			Memo: map[string]any{"agent": agent.Name, "text": text},
		}, wire.TaskWorkflowName, wire.TaskInput{Agent: agent.Name, ContextID: contextID, Recording: wire.LongTasks | wire.MergedWrites})
		h, err := r.c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
			StartWorkflowOperation: start,
			UpdateOptions: client.UpdateWorkflowOptions{
				WorkflowID:   taskID,
				UpdateID:     msg.ID,
				UpdateName:   wire.UpdateSendMessage,
				Args:         []any{wire.SendMessageInput{Agent: agent.Name, Message: msg}},
				WaitForStage: client.WorkflowUpdateStageCompleted,
			},
		})
		if err != nil {
			return "", 0, fmt.Errorf("UpdateWithStartWorkflow: %w", err)
		}
		var task a2a.Task
		if err := h.Get(ctx, &task); err != nil {
			return "", 0, fmt.Errorf("update of %s: %w", taskID, err)
		}
		d := time.Since(t0)
		if err := benchWantTask(&task, a2a.TaskStateCompleted, text); err != nil {
			return "", 0, err
		}
		return taskID, d, nil
	}
}

// ---------------------------------------------------------------------------
// Measuring.

// benchOp does one operation as concurrent caller w and returns its latency
// (which may leave out an untimed setup).
type benchOp func(ctx context.Context, w int) (time.Duration, error)

// benchIDOp is a benchOp that also returns the ID of the workflow it ran.
type benchIDOp func(ctx context.Context, w int) (string, time.Duration, error)

func (op benchIDOp) timed(ctx context.Context, w int) (time.Duration, error) {
	_, d, err := op(ctx, w)
	return d, err
}

// benchHistories runs one op of each side and describes both histories.
func benchHistories(b *testing.B, ctx context.Context, c client.Client, what string, a2aOp, rawOp benchIDOp) string {
	out := "\n  histories " + what + ":"
	for _, side := range []struct {
		name string
		op   benchIDOp
	}{{"a2a", a2aOp}, {"raw", rawOp}} {
		h, err := benchHistory(ctx, c, side.op)
		if err != nil {
			b.Fatal(err)
		}
		out += fmt.Sprintf("\n  %-4s %s", side.name, h)
	}
	return out
}

// benchHistory runs op once and describes the history of its workflow: the
// number of events, workflow tasks and bytes, and the event types.
func benchHistory(ctx context.Context, c client.Client, op benchIDOp) (string, error) {
	id, _, err := op(ctx, 0)
	if err != nil {
		return "", err
	}
	var types []string
	wfts, size := 0, 0
	it := c.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return "", fmt.Errorf("history of %s: %w", id, err)
		}
		size += proto.Size(ev)
		t := ev.GetEventType()
		if t == enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			wfts++
		}
		types = append(types, benchEventAbbrev(t))
	}
	return fmt.Sprintf("%2d events, %d WFT, %5d B: %s", len(types), wfts, size, strings.Join(types, " ")), nil
}

// benchEventAbbrev shortens event type names: WorkflowTaskCompleted is
// WtCompleted, UpsertWorkflowSearchAttributes UpsertSA.
func benchEventAbbrev(t enums.EventType) string {
	return strings.NewReplacer(
		"WorkflowExecutionUpdate", "Update",
		"WorkflowExecution", "Wf",
		"WorkflowTask", "Wt",
		"UpsertWorkflowSearchAttributes", "UpsertSA",
	).Replace(t.String())
}

// benchSample is a set of latencies, the wall time they took and the CPU
// time the server process and this process (the client, and the baseline's
// worker) used meanwhile.
type benchSample struct {
	lat              []time.Duration
	wall             time.Duration
	srvCPU, benchCPU time.Duration
	cpuOK            bool
}

func (s *benchSample) add(o benchSample) {
	s.cpuOK = o.cpuOK && (s.cpuOK || len(s.lat) == 0)
	s.lat = append(s.lat, o.lat...)
	s.wall += o.wall
	s.srvCPU += o.srvCPU
	s.benchCPU += o.benchCPU
}

// pct is the p-th percentile (nearest rank) in milliseconds.
func (s benchSample) pct(p float64) float64 {
	if len(s.lat) == 0 {
		return math.NaN()
	}
	sorted := slices.Clone(s.lat)
	slices.Sort(sorted)
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i]) / float64(time.Millisecond)
}

// tput is operations per second of wall time.
func (s benchSample) tput() float64 {
	if s.wall <= 0 {
		return math.NaN()
	}
	return float64(len(s.lat)) / s.wall.Seconds()
}

// cpuPerOp is the CPU time of the server and of this process per operation, in ms.
func (s benchSample) cpuPerOp() (srv, bench float64) {
	if !s.cpuOK || len(s.lat) == 0 {
		return math.NaN(), math.NaN()
	}
	n := float64(len(s.lat)) * float64(time.Millisecond)
	return float64(s.srvCPU) / n, float64(s.benchCPU) / n
}

// report reports the sample's metrics, throughput only when tput (not
// when the operations had an untimed setup).
func (s benchSample) report(b *testing.B, prefix string, tput bool) {
	b.ReportMetric(s.pct(50), prefix+"p50-ms")
	b.ReportMetric(s.pct(95), prefix+"p95-ms")
	if tput {
		b.ReportMetric(s.tput(), prefix+"tasks/s")
	}
	if srv, bench := s.cpuPerOp(); !math.IsNaN(srv) {
		b.ReportMetric(srv, prefix+"srv-cpu-ms/op")
		b.ReportMetric(bench, prefix+"bench-cpu-ms/op")
	}
}

// benchReportRatio reports a2aflow/raw for the latencies and raw/a2aflow for
// throughput, so that every ratio above 1 means a2aflow is slower.
func benchReportRatio(b *testing.B, a, r benchSample, tput bool) {
	b.ReportMetric(a.pct(50)/r.pct(50), "ratio-p50")
	b.ReportMetric(a.pct(95)/r.pct(95), "ratio-p95")
	if tput {
		b.ReportMetric(r.tput()/a.tput(), "ratio-tput")
	}
}

// benchPid is the pid of s's serve process.
func benchPid(s *harness.Server) int { return s.Proc().Cmd.Process.Pid }

// benchCPUNow returns the CPU time (user+system) used so far by process pid
// and by this process; ok is false where /proc is not readable.
func benchCPUNow(pid int) (srv, self time.Duration, ok bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	// Fields after "pid (comm) ": state is field 3, utime 14, stime 15, in
	// clock ticks of 1/100 s (USER_HZ on Linux).
	stat := string(raw)
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	if len(f) < 13 {
		return 0, 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	var ru syscall.Rusage
	if err1 != nil || err2 != nil || syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0, false
	}
	srv = time.Duration(utime+stime) * 10 * time.Millisecond
	self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return srv, self, true
}

// benchBlock runs op n times from conc concurrent callers, measuring the CPU
// time of server process pid and of this process meanwhile.
func benchBlock(ctx context.Context, pid, n, conc int, op benchOp) (benchSample, error) {
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	srv0, self0, ok0 := benchCPUNow(pid)
	start := time.Now()
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				d, err := op(ctx, w)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					next.Store(int64(n))
					return
				}
				lat[i] = d
			}
		}()
	}
	wg.Wait()
	smp := benchSample{lat: lat, wall: time.Since(start)}
	if srv1, self1, ok1 := benchCPUNow(pid); ok0 && ok1 {
		smp.srvCPU, smp.benchCPU, smp.cpuOK = srv1-srv0, self1-self0, true
	}
	return smp, firstErr
}

// benchPair measures a2aOp against rawOp, interleaved in mode m on s,
// reports both and their ratio, and records them in sum under key+" a2a"
// and key+" raw".
func benchPair(b *testing.B, ctx context.Context, s *harness.Server, m benchMode, a2aOp, rawOp benchOp, sum *benchSummary, key string) {
	benchWarm(b, ctx, m.conc, a2aOp, rawOp)
	b.ResetTimer()
	smps := benchInterleave(b, ctx, benchPid(s), m.conc, m.round, a2aOp, rawOp)
	b.StopTimer()
	a, r := smps[0], smps[1]
	a.report(b, "a2a-", true)
	r.report(b, "raw-", true)
	benchReportRatio(b, a, r, true)
	b.ReportMetric(0, "ns/op") // an iteration is one op of each side
	sum.set(key+" a2a", a)
	sum.set(key+" raw", r)
}

// benchWarm runs each op a few times: connections, sticky caches, pollers.
func benchWarm(b *testing.B, ctx context.Context, conc int, ops ...benchOp) {
	b.Helper()
	for _, op := range ops {
		if _, err := benchBlock(ctx, 0, 2*conc, conc, op); err != nil {
			b.Fatalf("warm-up: %v", err)
		}
	}
}

// benchInterleave runs b.N operations of each op, in rounds of round
// operations per op whose order rotates from round to round, and returns one
// sample per op.
func benchInterleave(b *testing.B, ctx context.Context, pid, conc, round int, ops ...benchOp) []benchSample {
	b.Helper()
	pids := make([]int, len(ops))
	for i := range pids {
		pids[i] = pid
	}
	return benchInterleavePids(b, ctx, pids, conc, round, ops...)
}

func benchContext(b testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	b.Cleanup(cancel)
	return ctx
}

// benchPrint prints a summary table on stdout: a top-level benchmark's own
// log is only shown with -v once it has sub-benchmarks.
func benchPrint(b *testing.B, table string) {
	fmt.Printf("--- %s summary (b.N of the last run; ratio rows: first/second, throughput inverted so >1 = first slower)%s\n", b.Name(), table)
}

// benchSummary keeps the last sample of each row for a table at the end of
// a top-level benchmark (a leaf runs with b.N=1 first; its row is replaced).
type benchSummary struct {
	mu    sync.Mutex
	order []string
	rows  map[string]benchSample
}

func (s *benchSummary) set(key string, smp benchSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rows == nil {
		s.rows = map[string]benchSample{}
	}
	if _, ok := s.rows[key]; !ok {
		s.order = append(s.order, key)
	}
	s.rows[key] = smp
}

// table formats the rows (p50, p95, throughput, CPU per op) and then the
// ratio rows pairs[i][0]/pairs[i][1] (throughput inverted: above 1 means
// the first is slower).
func (s *benchSummary) table(pairs [][2]string) string { return s.format(pairs, true) }

// tableNoTput is table without the throughput column, for operations timed
// without their setup.
func (s *benchSummary) tableNoTput(pairs [][2]string) string { return s.format(pairs, false) }

func (s *benchSummary) format(pairs [][2]string, tput bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n  %-44s %5s %8s %8s", "", "n", "p50 ms", "p95 ms")
	if tput {
		fmt.Fprintf(&sb, " %8s", "tasks/s")
	}
	fmt.Fprintf(&sb, " %13s %15s", "srv cpu ms/op", "bench cpu ms/op")
	for _, k := range s.order {
		r := s.rows[k]
		fmt.Fprintf(&sb, "\n  %-44s %5d %8.2f %8.2f", k, len(r.lat), r.pct(50), r.pct(95))
		if tput {
			fmt.Fprintf(&sb, " %8.1f", r.tput())
		}
		srv, bench := r.cpuPerOp()
		fmt.Fprintf(&sb, " %13.2f %15.2f", srv, bench)
	}
	for _, p := range pairs {
		a, okA := s.rows[p[0]]
		r, okR := s.rows[p[1]]
		if !okA || !okR {
			continue
		}
		fmt.Fprintf(&sb, "\n  %-44s %5s %8.2f %8.2f", "ratio "+p[0]+" / "+p[1], "", a.pct(50)/r.pct(50), a.pct(95)/r.pct(95))
		if tput {
			fmt.Fprintf(&sb, " %8.2f", r.tput()/a.tput())
		}
		as, ab := a.cpuPerOp()
		rs, rb := r.cpuPerOp()
		fmt.Fprintf(&sb, " %13.2f %15.2f", as/rs, ab/rb)
	}
	return sb.String()
}

// ---------------------------------------------------------------------------
// The three bindings: the same blocking SendMessage over each.

// BenchmarkSendMessageBindings measures blocking A2A 1.0 SendMessage to the
// echo agent over JSON-RPC, HTTP+JSON and gRPC (serve with --grpc-addr,
// a2a-go's clients), interleaved on one server, and reports each binding's
// p50 and p95 and its ratio to JSON-RPC (above 1: slower than JSON-RPC).
func BenchmarkSendMessageBindings(b *testing.B) {
	s := harness.StartServe(b, b.TempDir(), "--grpc-addr", fmt.Sprintf("127.0.0.1:%d", harness.FreePort(b)))
	ctx := benchContext(b)
	bindings := []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON, a2a.TransportProtocolGRPC}
	var ops []benchOp
	for _, binding := range bindings {
		ops = append(ops, newBenchBinding(b, ctx, s.APIURL+"/agents/echo", benchConc, binding).echo)
	}
	sum := &benchSummary{}
	var pairs [][2]string
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			benchWarm(b, ctx, m.conc, ops...)
			b.ResetTimer()
			smps := benchInterleave(b, ctx, benchPid(s), m.conc, m.round, ops...)
			b.StopTimer()
			for i, binding := range bindings {
				name := strings.ToLower(strings.ReplaceAll(string(binding), "+", ""))
				smps[i].report(b, name+"-", true)
				sum.set(m.name+" "+string(binding), smps[i])
				if i > 0 {
					b.ReportMetric(smps[i].pct(50)/smps[0].pct(50), name+"/jsonrpc-p50")
					b.ReportMetric(smps[i].pct(95)/smps[0].pct(95), name+"/jsonrpc-p95")
				}
			}
			b.ReportMetric(0, "ns/op") // an iteration is one op of each binding
		})
		for _, binding := range bindings[1:] {
			pairs = append(pairs, [2]string{m.name + " " + string(binding), m.name + " " + string(bindings[0])})
		}
	}
	benchPrint(b, sum.table(pairs))
}

// newBenchBinding is newBenchA2A over binding (A2A 1.0): n clients, each
// with connections of its own.
func newBenchBinding(b testing.TB, ctx context.Context, baseURL string, n int, binding a2a.TransportProtocol) *benchA2A {
	b.Helper()
	return &benchA2A{clients: harness.ClientsOver(b, ctx, baseURL, n, binding, 4*benchConc)}
}

// benchEchoAgent is the echo agent of the a2aflow command (its demo agents
// are the command's own): it completes at once with the text it was sent.
func benchEchoAgent() *workflows.Agent {
	return &workflows.Agent{
		Name:   "echo",
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo"}},
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			t.Reply(t.Text())
			return nil
		},
	}
}
