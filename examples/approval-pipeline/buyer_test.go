package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// buyerModel is a scripted model for the buyer: it quotes item x quantity,
// orders the quote on CC-4100, and answers with what the order tool said.
// Real models do the same with more words; the script makes the test exact.
func buyerModel(t *testing.T, item string, quantity int) workflowstest.LLMFunc {
	return func(req llm.Request) (llm.Response, error) {
		var results []llm.Message
		for _, m := range req.Messages {
			if m.Role == llm.RoleTool {
				results = append(results, m)
			}
		}
		switch len(results) {
		case 0:
			args, _ := json.Marshal(QuoteArgs{Item: item, Quantity: quantity})
			return llm.Response{StopReason: llm.StopToolUse,
				ToolCalls: []llm.ToolCall{{ID: "call-quote", Name: ToolGetQuote, Arguments: string(args)}}}, nil
		case 1:
			var q Quote
			if err := json.Unmarshal([]byte(results[0].Text), &q); err != nil {
				t.Errorf("get_quote answered %q: %v", results[0].Text, err)
			}
			args, _ := json.Marshal(OrderArgs{SKU: q.SKU, Quantity: q.Quantity, CostCentre: "CC-4100", QuoteID: q.QuoteID})
			return llm.Response{Text: fmt.Sprintf("The quote is %.2f EUR; ordering.", q.Total), StopReason: llm.StopToolUse,
				ToolCalls: []llm.ToolCall{{ID: "call-order", Name: ToolPlaceOrder, Arguments: string(args)}}}, nil
		default:
			return llm.Response{Text: "place_order said: " + results[1].Text, StopReason: llm.StopEnd}, nil
		}
	}
}

// newBuyerRun is a task of the buyer with the model scripted to buy
// quantity x item.
func newBuyerRun(t *testing.T, item string, quantity int) *run {
	r := newAgentRun(t, Config{}, Buyer)
	r.env.LLM(buyerModel(t, item, quantity))
	return r
}

// TestBuyerOrdersSmallOrdersAtOnce: 2 keyboards (170 EUR) are under the
// threshold: quoted by the quotes agent and ordered without an approval.
func TestBuyerOrdersSmallOrdersAtOnce(t *testing.T) {
	r := newBuyerRun(t, "mechanical keyboard", 2)
	var approvals []workflows.Approval
	r.env.LookApprovals(time.Minute, func(list []workflows.Approval) { approvals = list })
	task := r.env.RunText("buyer", "Two keyboards for CC-4100, please.")
	orders := r.supplier.Orders()
	if len(orders) != 1 || orders[0].Order.SKU != "KB-MECH" || orders[0].Order.Quantity != 2 || orders[0].Order.UnitPrice != 85 ||
		orders[0].Order.QuoteID != "Q-QUOTETAS" {
		t.Fatalf("the supplier took %+v, want one order of 2 KB-MECH at 85.00 on quote Q-QUOTETAS", orders)
	}
	if len(approvals) != 0 {
		t.Errorf("approvals %+v: an order of 170 EUR needs none", approvals)
	}
	if got := workflows.MessageText(task.Status.Message); task.Status.State != a2a.TaskStateCompleted || !strings.Contains(got, orders[0].OrderID) {
		t.Errorf("the buyer answered %s %q, want the order's ID", task.Status.State, got)
	}
	if len(r.quoted) != 1 || r.quoted[0] != "mechanical keyboard" {
		t.Errorf("the quotes agent was asked for %q", r.quoted)
	}
}

// TestBuyerAsksAManager: 3 standing desks (1,560 EUR) wait for a manager,
// who sees the order the model wants to place. Approved as it is, changed
// to 2 desks, or rejected; with the supplier's answer lost on the way back,
// the approved order is still taken once.
func TestBuyerAsksAManager(t *testing.T) {
	for _, tc := range []struct {
		name     string
		decision workflowstest.Decision
		lose     int
		want     int    // desks ordered, 0 for none
		answer   string // in the model's last tool result
	}{
		{name: "approved", decision: workflowstest.Approve("maria", GroupManagers), want: 3, answer: `"status":"accepted"`},
		{name: "approved with 2 desks", want: 2, answer: `"status":"accepted"`,
			decision: workflowstest.Decision{Approver: "maria", Groups: []string{GroupManagers}, Approved: true,
				Arguments: map[string]any{"sku": "DESK-STAND", "quantity": 2, "costCentre": "CC-4100"}}},
		{name: "rejected", decision: workflowstest.Reject("maria", "we have desks in storage", GroupManagers),
			answer: "rejected by maria: we have desks in storage"},
		{name: "approved, the supplier's answer lost", decision: workflowstest.Approve("maria", GroupManagers), lose: 1, want: 3, answer: `"status":"accepted"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newBuyerRun(t, "standing desk", 3)
			r.supplier.LoseAnswers = tc.lose
			var pending []workflows.Approval
			r.env.LookApprovals(time.Hour, func(list []workflows.Approval) { pending = list })
			r.env.Decide(26*time.Hour, workflowstest.ApprovalID(1), tc.decision)
			task := r.env.RunText("buyer", "3 standing desks for CC-4100")

			// What the manager saw: the tool, the model's arguments, why.
			if len(pending) != 1 || pending[0].State != workflows.ApprovalPending || pending[0].Request.Groups[0] != GroupManagers {
				t.Fatalf("approvals after an hour: %+v, want one pending for managers", pending)
			}
			raw, _ := json.Marshal(pending[0].Request.Action)
			var action llm.ToolCallAction
			_ = json.Unmarshal(raw, &action)
			var args OrderArgs
			_ = json.Unmarshal(action.Arguments, &args)
			if action.Tool != ToolPlaceOrder || args.SKU != "DESK-STAND" || args.Quantity != 3 || action.Reason != "The quote is 1560.00 EUR; ordering." {
				t.Errorf("the manager saw %s", raw)
			}

			orders := r.supplier.Orders()
			switch {
			case tc.want == 0 && len(orders) != 0:
				t.Errorf("rejected, yet the supplier took %+v", orders)
			case tc.want != 0 && (len(orders) != 1 || orders[0].Order.Quantity != tc.want):
				t.Errorf("the supplier took %+v, want one order of %d desks", orders, tc.want)
			case tc.lose != 0 && r.supplier.Requests(orders[0].IdempotencyKey) != 2:
				t.Errorf("the order was sent %d times, want twice with one key", r.supplier.Requests(orders[0].IdempotencyKey))
			}
			if got := workflows.MessageText(task.Status.Message); task.Status.State != a2a.TaskStateCompleted || !strings.Contains(got, tc.answer) {
				t.Errorf("the buyer answered %s %q, want it to have read %q", task.Status.State, got, tc.answer)
			}
		})
	}
}
