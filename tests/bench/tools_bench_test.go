package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/mcptest"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

// Benchmarks of the LLM tool loop's tool calls (issue "LLM agents under
// human control"), each against its baseline measured in the same run on
// the same embedded Temporal: a tool call through the loop against the same
// activities run by a plain workflow; an MCP tool call through a2aflow
// against the Go SDK's client calling the same server; five independent
// tool calls of one turn against one.

// benchToolDelay is how long the tools of BenchmarkParallelToolCalls work.
const benchToolDelay = 200 * time.Millisecond

// benchMCPDelay is the latency of the MCP tool of BenchmarkMCPToolCall: a
// payment provider's, say. Without one, the ratio compares a durable
// workflow with an in-memory call (reported too, as mcp-instant).
const benchMCPDelay = 50 * time.Millisecond

// benchTools is a worker on the serve's Temporal, on a task queue of its own,
// serving the tool benchmarks' agents with an in-process model.
type benchTools struct {
	c       client.Client
	queue   string
	mcpURL  string
	session *mcp.ClientSession
}

// benchModel is the in-process model of the tool benchmarks: its first
// answer calls tool (n times, each call its own arguments), its second
// answers with the last result.
type benchModel struct{}

func (benchModel) Name() string  { return "bench" }
func (benchModel) Model() string { return "bench-1" }
func (benchModel) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == llm.RoleTool {
		return llm.Response{Text: last.Text, StopReason: llm.StopEnd}, nil
	}
	// The user's text says which tool to call how often: "TOOL N ARGS".
	f := strings.SplitN(last.Text, " ", 3)
	var n int
	fmt.Sscan(f[1], &n)
	var calls []llm.ToolCall
	for i := range n {
		calls = append(calls, llm.ToolCall{ID: fmt.Sprint(i), Name: f[0], Arguments: f[2]})
	}
	return llm.Response{ToolCalls: calls, StopReason: llm.StopToolUse}, nil
}

// benchSleepInput is the argument of the bench tools.
type benchSleepInput struct {
	Millis int `json:"millis"`
}

var benchSleepTool = llm.NewTool("sleep", "Sleeps.", func(ctx context.Context, in benchSleepInput) (string, error) {
	time.Sleep(time.Duration(in.Millis) * time.Millisecond)
	return "slept", nil
})

func benchLoopAgent() *workflows.Agent {
	return &workflows.Agent{Name: "looper", Activities: []any{benchSleepTool}, Handle: func(ctx workflow.Context, t *workflows.Task) error {
		answer, err := llm.Worker(benchSleepTool).Run(ctx, t.Thread())
		if err != nil {
			return err
		}
		t.Reply(answer)
		return nil
	}}
}

func benchMCPAgent() *workflows.Agent {
	return &workflows.Agent{Name: "payer", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		tools, err := llm.MCP(ctx, "payments", llm.OnlyTools("pay_invoice"))
		if err != nil {
			return err
		}
		// "N ARGS": N calls of the tool, one after the other.
		var n int
		count, args, _ := strings.Cut(t.Text(), " ")
		fmt.Sscan(count, &n)
		var out string
		for range n {
			if out, err = tools[0].Call(ctx, args); err != nil {
				return err
			}
		}
		t.Reply(out)
		return nil
	}}
}

// benchToolLoopRaw is the baseline of the loop: the same three activities
// (a model call, the tool, a model call), run by a plain workflow.
func benchToolLoopRaw(ctx workflow.Context, millis int) (string, error) {
	llmCtx := workflow.WithActivityOptions(ctx, llm.DefaultActivityOptions)
	toolCtx := workflow.WithActivityOptions(ctx, llm.ToolActivityOptions)
	var resp llm.Response
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: fmt.Sprintf(`sleep 1 {"millis":%d}`, millis)}}}
	if err := workflow.ExecuteActivity(llmCtx, wire.ActivityCompleteChat, req).Get(ctx, &resp); err != nil {
		return "", err
	}
	var out string
	if err := workflow.ExecuteActivity(toolCtx, benchSleepTool.ActivityName(), benchSleepInput{Millis: millis}).Get(ctx, &out); err != nil {
		return "", err
	}
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: resp.ToolCalls}, llm.Message{Role: llm.RoleTool, ToolCallID: "0", Text: out})
	if err := workflow.ExecuteActivity(llmCtx, wire.ActivityCompleteChat, req).Get(ctx, &resp); err != nil {
		return "", err
	}
	return resp.Text, nil
}

func newBenchTools(b testing.TB, s *harness.Server, payments *mcptest.Payments) *benchTools {
	b.Helper()
	logger := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	c, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default", Logger: logger})
	if err != nil {
		b.Fatalf("dial Temporal at %s: %v", s.TemporalAddr, err)
	}
	b.Cleanup(c.Close)
	srv := httptest.NewServer(payments.Handler())
	b.Cleanup(srv.Close)
	bt := &benchTools{c: c, queue: "bench-tools-" + uuid.NewString(), mcpURL: srv.URL}
	reg, err := engine.NewRegistry(benchLoopAgent(), benchMCPAgent())
	if err != nil {
		b.Fatal(err)
	}
	w := worker.New(c, bt.queue, engine.WorkerOptions())
	if err := engine.Register(w, reg, engine.Options{}); err != nil {
		b.Fatal(err)
	}
	w.RegisterWorkflowWithOptions(benchToolLoopRaw, workflow.RegisterOptions{Name: "BenchToolLoopRaw"})
	m := &activities.MCP{Servers: map[string]activities.MCPServer{"payments": {Name: "payments", URL: srv.URL}}, Outbound: outbound.New(outbound.Options{})}
	b.Cleanup(m.Close)
	activities.Set{LLM: &activities.LLM{Provider: benchModel{}}, MCP: m}.Register(w)
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
	session, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = session.Close() })
	bt.session = session
	return bt
}

// task runs one task of agent with text to its end and checks its answer.
func (bt *benchTools) task(agent, text, want string) benchOp {
	return func(ctx context.Context, w int) (time.Duration, error) {
		t0 := time.Now()
		run, err := bt.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: uuid.NewString(), TaskQueue: bt.queue}, wire.TaskWorkflowName,
			wire.TaskInput{Agent: agent, ContextID: a2a.NewContextID(), Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))})
		if err != nil {
			return 0, err
		}
		var snap wire.TaskSnapshot
		if err := run.Get(ctx, &snap); err != nil {
			return 0, err
		}
		d := time.Since(t0)
		if snap.Task == nil || snap.Status.State != a2a.TaskStateCompleted || !strings.Contains(workflows.MessageText(snap.Status.Message), want) {
			return 0, fmt.Errorf("%s task ended %+v", agent, snap.Task)
		}
		return d, nil
	}
}

func (bt *benchTools) raw(millis int) benchOp {
	return func(ctx context.Context, w int) (time.Duration, error) {
		t0 := time.Now()
		run, err := bt.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: uuid.NewString(), TaskQueue: bt.queue}, "BenchToolLoopRaw", millis)
		if err != nil {
			return 0, err
		}
		var out string
		if err := run.Get(ctx, &out); err != nil || out != "slept" {
			return 0, fmt.Errorf("raw tool loop: %q %v", out, err)
		}
		return time.Since(t0), nil
	}
}

// BenchmarkToolCallThroughLoop: a task whose model calls a tool once and
// answers (llm.Worker: a model call, the tool's activity, a model call)
// against a plain workflow running the same three activities. The ratio is
// the loop's own cost; goal ≤ 1.1x (p50).
func BenchmarkToolCallThroughLoop(b *testing.B) {
	s := harness.StartServe(b, b.TempDir())
	ctx := benchContext(b)
	bt := newBenchTools(b, s, &mcptest.Payments{})
	sum := &benchSummary{}
	b.Run("seq", func(b *testing.B) {
		benchPair(b, ctx, s, benchMode{"seq", 1, benchRoundSeq}, bt.task("looper", `sleep 1 {"millis":0}`, "slept"), bt.raw(0), sum, "tool")
	})
	benchPrint(b, sum.table([][2]string{{"tool a2a", "tool raw"}}))
}

// BenchmarkMCPToolCall: a task that calls one MCP tool (its tool list read
// by an activity, the call an activity through the worker's session)
// against the Go SDK's client listing and calling the same server directly,
// with a tool of benchMCPDelay (goal ≤ 1.2x p50) and an instant one.
func BenchmarkMCPToolCall(b *testing.B) {
	s := harness.StartServe(b, b.TempDir())
	ctx := benchContext(b)
	for _, delay := range []time.Duration{benchMCPDelay, 0} {
		name := fmt.Sprintf("mcp-%dms", delay.Milliseconds())
		if delay == 0 {
			name = "mcp-instant"
		}
		b.Run(name, func(b *testing.B) {
			bt := newBenchTools(b, s, &mcptest.Payments{Delay: delay})
			args := `{"invoice":"INV-1","amount":10}`
			direct := func(ctx context.Context, w int) (time.Duration, error) {
				t0 := time.Now()
				var n int
				for _, err := range bt.session.Tools(ctx, nil) {
					if err != nil {
						return 0, err
					}
					n++
				}
				res, err := bt.session.CallTool(ctx, &mcp.CallToolParams{Name: "pay_invoice", Arguments: json.RawMessage(args),
					Meta: mcp.Meta{wire.MCPIdempotencyKeyMeta: uuid.NewString()}})
				if err != nil || res.IsError || n == 0 {
					return 0, fmt.Errorf("direct call: %v %+v", err, res)
				}
				return time.Since(t0), nil
			}
			sum := &benchSummary{}
			benchPair(b, ctx, s, benchMode{"seq", 1, benchRoundSeq}, bt.task("payer", "1 "+args, "paid invoice INV-1"), direct, sum, name)
			benchPrint(b, sum.tableNoTput([][2]string{{name + " a2a", name + " raw"}}))
		})
	}
	// What one more call costs a task (a task of two calls against one of
	// one, interleaved) against the SDK's client calling the tool directly:
	// the call's own cost, without the task's start and the tool list.
	b.Run(fmt.Sprintf("mcp-%dms-per-call", benchMCPDelay.Milliseconds()), func(b *testing.B) {
		bt := newBenchTools(b, s, &mcptest.Payments{Delay: benchMCPDelay})
		args := `{"invoice":"INV-1","amount":10}`
		direct := func(ctx context.Context, w int) (time.Duration, error) {
			t0 := time.Now()
			res, err := bt.session.CallTool(ctx, &mcp.CallToolParams{Name: "pay_invoice", Arguments: json.RawMessage(args),
				Meta: mcp.Meta{wire.MCPIdempotencyKeyMeta: uuid.NewString()}})
			if err != nil || res.IsError {
				return 0, fmt.Errorf("direct call: %v %+v", err, res)
			}
			return time.Since(t0), nil
		}
		two, one := bt.task("payer", "2 "+args, "paid invoice INV-1"), bt.task("payer", "1 "+args, "paid invoice INV-1")
		benchWarm(b, ctx, 1, two, one, direct)
		b.ResetTimer()
		smps := benchInterleave(b, ctx, benchPid(s), 1, benchRoundSeq, two, one, direct)
		b.StopTimer()
		perCall := smps[0].pct(50) - smps[1].pct(50)
		b.ReportMetric(perCall, "a2a-per-call-p50-ms")
		b.ReportMetric(smps[2].pct(50), "raw-call-p50-ms")
		b.ReportMetric(perCall/smps[2].pct(50), "ratio-p50")
		benchPrint(b, fmt.Sprintf("\n  one more MCP call in a task: +%.1f ms p50 (tasks of 2 calls %.1f, of 1 call %.1f); the SDK's client directly: %.1f ms; ratio %.2fx",
			perCall, smps[0].pct(50), smps[1].pct(50), smps[2].pct(50), perCall/smps[2].pct(50)))
	})
}

// BenchmarkParallelToolCalls: a turn of five independent tool calls of
// benchToolDelay each against a turn of one. Goal: five take at most 1.3x
// the wall time of one.
func BenchmarkParallelToolCalls(b *testing.B) {
	s := harness.StartServe(b, b.TempDir())
	ctx := benchContext(b)
	bt := newBenchTools(b, s, &mcptest.Payments{})
	args := fmt.Sprintf(`{"millis":%d}`, benchToolDelay.Milliseconds())
	sum := &benchSummary{}
	b.Run("seq", func(b *testing.B) {
		benchPair(b, ctx, s, benchMode{"seq", 1, benchRoundSeq}, bt.task("looper", "sleep 5 "+args, "slept"), bt.task("looper", "sleep 1 "+args, "slept"), sum, "five-vs-one")
	})
	benchPrint(b, sum.table([][2]string{{"five-vs-one a2a", "five-vs-one raw"}}))
}
