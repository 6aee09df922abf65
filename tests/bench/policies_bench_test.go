package bench

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/policies"
	"github.com/a2aflow/a2aflow/internal/workerenv"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

// benchPolicyText is the policy of the policy-gated agent: its sleep tool
// runs without a person unless the call sleeps over a second.
const benchPolicyText = `@id("sleep") permit (principal, action == Action::"callTool", resource) when { context.tool == "sleep" };
@id("long") @groups("ops")
permit (principal, action == Action::"callTool", resource)
when { context.tool == "sleep" && context.numbers.hasTag("millis") && context.numbers.getTag("millis") > 1000 };
`

// benchGatedLooper is a tool loop over the sleep tool with opts on it.
func benchGatedLooper(name string, opts ...llm.ToolOption) *workflows.Agent {
	tool := benchSleepTool.With(opts...)
	return &workflows.Agent{Name: name, Handle: func(ctx workflow.Context, t *workflows.Task) error {
		answer, err := llm.Worker(tool).Run(ctx, t.Thread())
		if err != nil {
			return err
		}
		t.Reply(answer)
		return nil
	}}
}

// BenchmarkPolicyGatedToolCall (issue 46: policy evaluation adds at most
// 1 ms p50 to a gated call): a task whose model calls a tool once that an
// approval policy judges (stored in SQLite, read on every call, allowing
// it) against the same task whose tool has a gate of its own, a condition
// on its arguments that does not hold (the tool-approvals' way), in the
// same run. Both tasks ask the DecidePolicy local activity (every tool call
// does); the plain workflow running the same three activities without it
// is the third row, for what the gate costs a call in all.
func BenchmarkPolicyGatedToolCall(b *testing.B) {
	s := harness.StartServe(b, b.TempDir())
	ctx := benchContext(b)
	store, err := models.Open(filepath.Join(b.TempDir(), "a2aflow.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	if _, err := policies.Compile("agent/policy-looper", benchPolicyText); err != nil {
		b.Fatal(err)
	}
	if _, err := store.AddPolicyVersion(ctx, "agent/policy-looper", benchPolicyText, "bench", "bench"); err != nil {
		b.Fatal(err)
	}
	logger := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	c, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default", Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	bt := &benchTools{c: c, queue: "bench-policies-" + uuid.NewString()}
	gate := llm.RequireApproval(llm.Gate{Request: workflows.ApprovalRequest{Groups: []string{"ops"}},
		When: llm.If(func(in benchSleepInput) bool { return in.Millis > 1000 })})
	reg, err := engine.NewRegistry(benchGatedLooper("policy-looper"), benchGatedLooper("code-looper", gate))
	if err != nil {
		b.Fatal(err)
	}
	opts := engine.WorkerOptions()
	opts.BackgroundActivityContext = workerenv.With(context.Background(), &workerenv.Env{DB: store.DB(), Policies: policies.NewEngine(store)})
	w := worker.New(c, bt.queue, opts)
	if err := engine.Register(w, reg, engine.Options{}); err != nil {
		b.Fatal(err)
	}
	llm.RegisterTools(w, benchSleepTool)
	w.RegisterWorkflowWithOptions(benchToolLoopRaw, workflow.RegisterOptions{Name: "BenchToolLoopRaw"})
	activities.Set{LLM: &activities.LLM{Provider: benchModel{}}}.Register(w)
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
	sum := &benchSummary{}
	call := `sleep 1 {"millis":0}`
	b.Run("policy-vs-code-gate", func(b *testing.B) {
		benchPair(b, ctx, s, benchMode{"seq", 1, benchRoundSeq}, bt.task("policy-looper", call, "slept"), bt.task("code-looper", call, "slept"), sum, "policy")
	})
	b.Run("code-gate-vs-raw", func(b *testing.B) {
		benchPair(b, ctx, s, benchMode{"seq", 1, benchRoundSeq}, bt.task("code-looper", call, "slept"), bt.raw(0), sum, "code")
	})
	benchPrint(b, sum.table([][2]string{{"policy a2a", "policy raw"}, {"code a2a", "code raw"}}))
}
