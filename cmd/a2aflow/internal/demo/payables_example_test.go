package demo_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// Invoice is what the model asks pay_invoice to pay.
type Invoice struct {
	Invoice string  `json:"invoice" validate:"required"`
	Amount  float64 `json:"amount" validate:"gt=0"`
}

// Bank pays each idempotency key once, as a payment API does.
type Bank struct {
	mu    sync.Mutex
	calls int
	paid  map[string]Invoice
}

// Pay pays in under key, once however often it is called with that key.
func (b *Bank) Pay(ctx context.Context, key string, in Invoice) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if b.paid == nil {
		b.paid = map[string]Invoice{}
	}
	if _, done := b.paid[key]; !done {
		b.paid[key] = in
	}
	return fmt.Sprintf("paid %s: %.2f EUR", in.Invoice, in.Amount), nil
}

// Payables is the README's gated tool example, verbatim (TestREADMEShowsTestedCode
// keeps the two the same): an LLM agent with a Go tool that waits for
// finance's approval above 1,000.
func Payables(bank *Bank) *workflows.Agent {
	pay := llm.NewTool("pay_invoice", "Pays an invoice.",
		func(ctx context.Context, in Invoice) (string, error) {
			return bank.Pay(ctx, llm.CallKey(ctx), in) // the same key on every retry of this call
		},
		llm.RequireApproval(llm.Gate{
			Request:   workflows.ApprovalRequest{Groups: []string{"finance"}, Timeout: 48 * time.Hour},
			When:      llm.If(func(in Invoice) bool { return in.Amount > 1000 }),
			Grantable: true, // an approver may allow it for the rest of the task
		}))
	return &workflows.Agent{
		Name: "payables", Description: "Pays invoices; finance approves those over 1,000.",
		Activities: []any{pay}, // the worker registers the tool with the agent
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

// payModel is a model that calls pay_invoice once with args, then answers
// with the tool's result as it read it.
type payModel struct{ args string }

func (payModel) Name() string  { return "scripted" }
func (payModel) Model() string { return "scripted-1" }
func (m payModel) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role != llm.RoleTool {
		return llm.Response{Text: "It is due today.", StopReason: llm.StopToolUse,
			ToolCalls: []llm.ToolCall{{ID: "call-1", Name: "pay_invoice", Arguments: m.args}}}, nil
	}
	return llm.Response{Text: "done: " + last.Text, StopReason: llm.StopEnd}, nil
}

// TestPayables runs the README's agent in Temporal's test environment: a
// small invoice is paid at once; a large one waits for finance, and is paid
// once when approved (under a key naming the approval), or not at all when
// rejected, the model reading why.
func TestPayables(t *testing.T) {
	type outcome struct {
		Approval bool // the call waited on an approval
		Paid     []string
		Answer   string
	}
	for _, tc := range []struct {
		name   string
		args   string
		decide *workflowstest.Decision
		want   outcome
	}{
		{name: "below the threshold", args: `{"invoice":"INV-1","amount":99}`,
			want: outcome{Paid: []string{"INV-1 99 under the call's activity ID"}, Answer: "done: paid INV-1: 99.00 EUR"}},
		{name: "approved", args: `{"invoice":"INV-2","amount":1500}`, decide: ptr(workflowstest.Approve("fiona", "finance")),
			want: outcome{Approval: true, Paid: []string{"INV-2 1500 under task-1/call-task-1-approval-1"}, Answer: "done: paid INV-2: 1500.00 EUR"}},
		{name: "rejected", args: `{"invoice":"INV-3","amount":5000}`, decide: ptr(workflowstest.Reject("fiona", "not before the audit", "finance")),
			want: outcome{Approval: true, Answer: "done: error: the call of pay_invoice was not approved (approval task-1-approval-1, rejected by fiona: not before the audit)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bank := &Bank{}
			env := workflowstest.New(t, Payables(bank))
			env.RegisterActivity(&activities.LLM{Provider: payModel{args: tc.args}})
			var got outcome
			env.Look(30*time.Minute, func(task *a2a.Task) {
				got.Approval = task.Status.State == a2a.TaskStateInputRequired
			})
			if tc.decide != nil {
				env.Decide(time.Hour, workflowstest.ApprovalID(1), *tc.decide)
			}
			task := env.RunText("payables", "Pay what is due.")
			for key, in := range bank.paid {
				if !strings.Contains(key, "approval") {
					key = "the call's activity ID"
				}
				got.Paid = append(got.Paid, fmt.Sprintf("%s %g under %s", in.Invoice, in.Amount, key))
			}
			got.Answer, _, _ = strings.Cut(workflows.MessageText(task.Status.Message), "; do not call")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("payables task (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
