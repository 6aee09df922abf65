package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// PayInvoiceInput is the argument of the pay_invoice test tool.
type PayInvoiceInput struct {
	Invoice string  `json:"invoice" validate:"required"`
	Amount  float64 `json:"amount" validate:"gt=0"`
}

// payments is the service pay_invoice calls: it pays each call key once,
// as an idempotent payment API would.
type payments struct {
	mu    sync.Mutex
	calls int
	paid  map[string]PayInvoiceInput
}

func (p *payments) pay(ctx context.Context, in PayInvoiceInput) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.paid == nil {
		p.paid = map[string]PayInvoiceInput{}
	}
	key := llm.CallKey(ctx)
	if _, done := p.paid[key]; !done {
		p.paid[key] = in
	}
	return fmt.Sprintf("paid %s: %.2f EUR", in.Invoice, in.Amount), nil
}

// payAgent pays invoices with a tool gated above 1,000 EUR.
func payAgent(p *payments, grantable bool) *workflows.Agent {
	pay := llm.NewTool("pay_invoice", "Pays an invoice.", p.pay, llm.RequireApproval(llm.Gate{
		Request:   workflows.ApprovalRequest{Groups: []string{"finance"}, Timeout: 48 * time.Hour},
		When:      llm.If(func(in PayInvoiceInput) bool { return in.Amount > 1000 }),
		Grantable: grantable,
	}))
	return &workflows.Agent{
		Name:       "payables",
		Activities: []any{pay}, // the tool's activity, registered like any other
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			answer, err := llm.Worker(pay).Run(ctx, t.Thread())
			if err != nil {
				return err
			}
			t.Reply(answer)
			return nil
		},
	}
}

// payScript calls pay_invoice with each of args in turn (one turn each),
// then answers with the last tool result it read.
func payScript(args ...string) *scripted {
	return &scripted{answer: func(n int, req llm.Request) (llm.Response, error) {
		if n <= len(args) {
			return llm.Response{Text: "The invoice is due today.", StopReason: llm.StopToolUse,
				ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call-%d", n), Name: "pay_invoice", Arguments: args[n-1]}}}, nil
		}
		last := req.Messages[len(req.Messages)-1]
		return llm.Response{Text: "done: " + last.Text, StopReason: llm.StopEnd}, nil
	}}
}

func newPayEnv(t *testing.T, p *payments, provider llm.Provider, grantable bool) *workflowstest.Env {
	env := workflowstest.New(t, payAgent(p, grantable))
	env.RegisterActivity(&activities.LLM{Provider: provider})
	return env
}

// TestGatedToolCall: a call above the threshold waits on an approval that
// shows the tool, its arguments and the model's reason; approved, it runs
// once with the model's arguments or the approver's edit; rejected or
// expired, the model reads the rejection as the tool's result and answers.
// A call below the threshold runs at once.
func TestGatedToolCall(t *testing.T) {
	const big = `{"invoice":"INV-7","amount":1500}`
	for _, tc := range []struct {
		name     string
		args     string
		decide   func(env *workflowstest.Env)
		approval bool
		paid     string // "" when nothing is paid
		answer   string // what the model read last
	}{
		{name: "below the threshold", args: `{"invoice":"INV-1","amount":99}`, paid: "INV-1 99", answer: "paid INV-1: 99.00 EUR"},
		{name: "approved", args: big, approval: true, paid: "INV-7 1500",
			decide: func(env *workflowstest.Env) {
				env.Decide(time.Hour, workflowstest.ApprovalID(1), workflowstest.Approve("fiona", "finance"))
			},
			answer: "paid INV-7: 1500.00 EUR"},
		{name: "approved with edited arguments", args: big, approval: true, paid: "INV-7 900",
			decide: func(env *workflowstest.Env) {
				d := workflowstest.Approve("fiona", "finance")
				d.Arguments = map[string]any{"invoice": "INV-7", "amount": 900}
				env.Decide(time.Hour, workflowstest.ApprovalID(1), d)
			},
			answer: "paid INV-7: 900.00 EUR"},
		{name: "rejected", args: big, approval: true,
			decide: func(env *workflowstest.Env) {
				env.Decide(time.Hour, workflowstest.ApprovalID(1), workflowstest.Reject("fiona", "not before the audit", "finance"))
			},
			answer: "error: the call of pay_invoice was not approved (approval task-1-approval-1, rejected by fiona: not before the audit)"},
		{name: "expired at the deadline", args: big, approval: true,
			answer: "error: the call of pay_invoice was not approved (approval task-1-approval-1, rejected by deadline: no decision before the deadline)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &payments{}
			provider := payScript(tc.args)
			env := newPayEnv(t, p, provider, false)
			var pending *workflows.Approval
			if tc.decide != nil {
				tc.decide(env)
			}
			env.RegisterDelayedCallback(func() { pending = approvalOf(t, env) }, 30*time.Minute)
			task := env.RunText("payables", "Pay what is due.")
			if got := statusText(task); !strings.HasPrefix(got, "done: "+tc.answer) {
				t.Errorf("the model answered %q, want it to have read %q", got, tc.answer)
			}
			var paid []string
			for _, in := range p.paid {
				paid = append(paid, fmt.Sprintf("%s %g", in.Invoice, in.Amount))
			}
			if want := tc.paid; (want == "" && len(paid) != 0) || (want != "" && (len(paid) != 1 || paid[0] != want)) {
				t.Errorf("paid %v, want %q", paid, want)
			}
			if tc.approval != (pending != nil) {
				t.Fatalf("approval while the call waited: %+v, want one: %v", pending, tc.approval)
			}
			if pending != nil {
				var action llm.ToolCallAction
				raw, _ := json.Marshal(pending.Request.Action)
				_ = json.Unmarshal(raw, &action)
				if action.Tool != "pay_invoice" || !sameJSON(action.Arguments, tc.args) || action.Reason != "The invoice is due today." ||
					len(pending.Request.EditSchema) == 0 || !strings.Contains(pending.Request.Title, "pay_invoice") {
					t.Errorf("the approval shows %+v (title %q), want the tool, its arguments, the reason and the schema", action, pending.Request.Title)
				}
			}
		})
	}
}

// approvalOf returns the task's pending approval, if any, as the inbox
// reads it.
func approvalOf(t *testing.T, env *workflowstest.Env) *workflows.Approval {
	t.Helper()
	v, err := env.QueryWorkflow(wire.QueryApprovals, wire.Caller{})
	if err != nil {
		t.Fatal(err)
	}
	var list []workflows.Approval
	if err := v.Get(&list); err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		if a.State == workflows.ApprovalPending {
			return &a
		}
	}
	return nil
}

func sameJSON(a json.RawMessage, b string) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal([]byte(b), &vb) == nil && fmt.Sprint(va) == fmt.Sprint(vb)
}

// TestGatedToolCallGrantAndEdits: an edit the tool's schema refuses is
// refused before it reaches history; an approval with a grant lets the
// tool's later calls run without asking; the approved call's key names its
// approval.
func TestGatedToolCallGrantAndEdits(t *testing.T) {
	p := &payments{}
	env := newPayEnv(t, p, payScript(`{"invoice":"INV-7","amount":1500}`, `{"invoice":"INV-8","amount":2500}`), true)
	bad := workflowstest.Approve("fiona", "finance")
	bad.Arguments = map[string]any{"invoice": "INV-7", "amount": "a lot"}
	var refusal error
	env.DecideRefused(time.Hour, workflowstest.ApprovalID(1), bad, func(err error) { refusal = err })
	grant := workflowstest.Approve("fiona", "finance")
	grant.Grant = true
	env.Decide(2*time.Hour, workflowstest.ApprovalID(1), grant)
	task := env.RunText("payables", "Pay what is due.")
	if refusal == nil || !strings.Contains(refusal.Error(), "edited arguments") {
		t.Errorf("an edit the schema refuses: %v, want refused", refusal)
	}
	if got := statusText(task); !strings.HasPrefix(got, "done: paid INV-8: 2500.00 EUR") {
		t.Errorf("the model answered %q, want the second payment made under the grant", got)
	}
	if len(p.paid) != 2 {
		t.Fatalf("paid %v, want both invoices", p.paid)
	}
	if _, ok := p.paid["task-1/call-task-1-approval-1"]; !ok {
		t.Errorf("call keys %v, want the approved call keyed by its approval", p.paid)
	}
}

// TestParallelToolCalls: five independent calls of one turn run at once
// (each waits until all five have started), and the model reads their
// results in its order; two gated calls of a turn wait on two approvals at
// once.
func TestParallelToolCalls(t *testing.T) {
	var mu sync.Mutex
	started := 0
	slow := llm.NewTool("slow", "Waits for its siblings.", func(ctx context.Context, in addInput) (int, error) {
		mu.Lock()
		started++
		mu.Unlock()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			all := started == 5
			mu.Unlock()
			if all {
				return in.A * 10, nil
			}
			time.Sleep(time.Millisecond)
		}
		return 0, fmt.Errorf("the other calls did not start: they ran one after another")
	})
	var calls []llm.ToolCall
	for i := 1; i <= 5; i++ {
		calls = append(calls, llm.ToolCall{ID: fmt.Sprint(i), Name: "slow", Arguments: fmt.Sprintf(`{"a":%d}`, i)})
	}
	provider := &scripted{answer: func(n int, req llm.Request) (llm.Response, error) {
		if n == 1 {
			return llm.Response{ToolCalls: calls, StopReason: llm.StopToolUse}, nil
		}
		var results []string
		for _, m := range req.Messages {
			if m.Role == llm.RoleTool {
				results = append(results, m.ToolCallID+"="+m.Text)
			}
		}
		return llm.Response{Text: strings.Join(results, " "), StopReason: llm.StopEnd}, nil
	}}
	agent := &workflows.Agent{Name: "fan", Activities: []any{slow}, Handle: func(ctx workflow.Context, t *workflows.Task) error {
		answer, err := llm.Worker(slow).Run(ctx, t.Thread())
		if err != nil {
			return err
		}
		t.Reply(answer)
		return nil
	}}
	env := workflowstest.New(t, agent)
	env.RegisterActivity(&activities.LLM{Provider: provider})
	task := env.RunText("fan", "go")
	if got, want := statusText(task), "1=10 2=20 3=30 4=40 5=50"; got != want {
		t.Errorf("the model read %q, want %q (every call ran at once, results in its order)", got, want)
	}

	// Two gated calls of one turn: two approvals pending together.
	p := &payments{}
	two := &scripted{answer: func(n int, req llm.Request) (llm.Response, error) {
		if n == 1 {
			return llm.Response{StopReason: llm.StopToolUse, ToolCalls: []llm.ToolCall{
				{ID: "a", Name: "pay_invoice", Arguments: `{"invoice":"INV-1","amount":2000}`},
				{ID: "b", Name: "pay_invoice", Arguments: `{"invoice":"INV-2","amount":3000}`}}}, nil
		}
		return llm.Response{Text: "ok", StopReason: llm.StopEnd}, nil
	}}
	env2 := newPayEnv(t, p, two, false)
	var pending []string
	env2.RegisterDelayedCallback(func() {
		v, err := env2.QueryWorkflow(wire.QueryApprovals, wire.Caller{})
		if err != nil {
			t.Fatal(err)
		}
		var list []workflows.Approval
		_ = v.Get(&list)
		for _, a := range list {
			if a.State == workflows.ApprovalPending {
				pending = append(pending, a.ID)
			}
		}
	}, 10*time.Minute)
	env2.Decide(time.Hour, workflowstest.ApprovalID(1), workflowstest.Approve("fiona", "finance"))
	env2.Decide(time.Hour, workflowstest.ApprovalID(2), workflowstest.Approve("fiona", "finance"))
	env2.RunText("payables", "pay both")
	if len(pending) != 2 {
		t.Errorf("pending approvals while both calls waited: %v, want two", pending)
	}
	if len(p.paid) != 2 {
		t.Errorf("paid %v, want both", p.paid)
	}
}

// TestToolActivityOptions: a tool's own activity options (ToolActivity)
// govern its calls, approved ones included: here a heartbeat timeout the
// activity sees and one attempt instead of ToolActivityOptions' three.
func TestToolActivityOptions(t *testing.T) {
	var mu sync.Mutex
	var attempts int
	var heartbeat time.Duration
	flaky := llm.NewTool("pay_invoice", "Pays an invoice.", func(ctx context.Context, in PayInvoiceInput) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		attempts++
		heartbeat = activity.GetInfo(ctx).HeartbeatTimeout
		return "", errors.New("the bank is down")
	}, llm.RequireApproval(llm.Gate{Request: workflows.ApprovalRequest{Groups: []string{"finance"}}}),
		llm.ToolActivity(workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second, HeartbeatTimeout: 7 * time.Second,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}}))
	agent := &workflows.Agent{
		Name:       "payables",
		Activities: []any{flaky},
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			answer, err := llm.Worker(flaky).Run(ctx, t.Thread())
			t.Reply(answer)
			return err
		},
	}
	env := workflowstest.New(t, agent)
	env.LLM(payScript(`{"invoice":"INV-7","amount":1500}`))
	env.Decide(time.Hour, workflowstest.ApprovalID(1), workflowstest.Approve("fiona", "finance"))
	task := env.RunText("payables", "Pay what is due.")
	if got := statusText(task); !strings.Contains(got, "the bank is down") {
		t.Errorf("the model answered %q, want it to have read the tool's error", got)
	}
	if attempts != 1 || heartbeat != 7*time.Second {
		t.Errorf("%d attempts with heartbeat timeout %s, want 1 with 7s (the tool's own options)", attempts, heartbeat)
	}
}
