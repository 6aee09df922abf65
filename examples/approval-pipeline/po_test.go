package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/examples/approval-pipeline/internal/fakesupplier"
	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// The tests run the agents' handlers in Temporal's test environment, whose
// clock jumps over waits: an approval decided three days later takes
// milliseconds. The supplier is the real Supplier activity talking HTTP to
// the fake supplier; the quotes agent is reached through fakes of a2aflow's
// delegation activities that price with the quotes agent's own code.

// taskID is the workflow ID (= task ID) of every test task.
const taskID = string(workflowstest.TaskID)

// run is one task under test.
type run struct {
	t        *testing.T
	env      *workflowstest.Env
	supplier *fakesupplier.Server

	mu     sync.Mutex
	seen   []string // the task's status at each look(), "STATE: text"
	quoted []string // the items the quotes agent was asked to price
}

// newRun prepares a task of the purchase-order agent with cfg (its Supplier
// set to a fresh fake supplier unless given), in a2aflow's test environment
// (workflows/workflowstest): the agent's activities registered as the
// worker registers them.
func newRun(t *testing.T, cfg Config) *run {
	t.Helper()
	return newAgentRun(t, cfg, PurchaseOrder)
}

// newAgentRun is newRun for the agent made by agent (PurchaseOrder, Buyer).
func newAgentRun(t *testing.T, cfg Config, agent func(Config) *workflows.Agent) *run {
	t.Helper()
	r := &run{t: t, supplier: &fakesupplier.Server{}}
	if cfg.Supplier == nil {
		srv := httptest.NewServer(r.supplier)
		t.Cleanup(srv.Close)
		cfg.Supplier = &Supplier{BaseURL: srv.URL}
	}
	r.env = workflowstest.New(t, agent(cfg), Quotes())
	// The quotes agent, over A2A: the remote task as the quotes agent would
	// end it.
	r.env.RemoteAgent("quotes", func(m *a2a.Message) *a2a.Task {
		req := parseRequest(m)
		r.mu.Lock()
		r.quoted = append(r.quoted, req.Item)
		remoteID := a2a.TaskID(fmt.Sprintf("quote-task-%d", len(r.quoted)))
		r.mu.Unlock()
		q, err := priceQuote(req, remoteID, time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
		if err != nil {
			return &a2a.Task{ID: remoteID, ContextID: "quotes-ctx", Status: a2a.TaskStatus{
				State: a2a.TaskStateRejected, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(err.Error()))}}
		}
		return &a2a.Task{ID: remoteID, ContextID: "quotes-ctx",
			Status:    a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("quoted"))},
			Artifacts: []*a2a.Artifact{workflows.JSONArtifact("quote", q)}}
	})
	return r
}

// answer sends the user's text to the task at workflow time at.
func (r *run) answer(at time.Duration, text string) { r.env.Answer(at, text) }

// decide decides the task's n-th approval at workflow time at, as the
// approvals API does for approver of group.
func (r *run) decide(at time.Duration, n int, approver, group string, approved bool, comment string) {
	r.env.Decide(at, workflowstest.ApprovalID(n), workflowstest.Decision{
		Approver: approver, Groups: []string{group}, Approved: approved, Comment: comment})
}

// look records the task's status at workflow time at.
func (r *run) look(at time.Duration) {
	r.env.Look(at, func(task *a2a.Task) {
		r.mu.Lock()
		r.seen = append(r.seen, fmt.Sprintf("%s: %s", task.Status.State, workflows.MessageText(task.Status.Message)))
		r.mu.Unlock()
	})
}

// start runs the task from the user's first message to its end.
func (r *run) start(first *a2a.Message) *a2a.Task {
	r.t.Helper()
	return r.env.Run("purchase-order", first)
}

func (r *run) startText(text string) *a2a.Task {
	return r.start(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text)))
}

// wantSeen checks the statuses look() recorded.
func (r *run) wantSeen(want ...string) {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.Join(r.seen, "\n") != strings.Join(want, "\n") {
		r.t.Errorf("statuses seen:\n  %s\nwant:\n  %s", strings.Join(r.seen, "\n  "), strings.Join(want, "\n  "))
	}
}

// wantEnd checks the task's end state and status message.
func wantEnd(t *testing.T, task *a2a.Task, state a2a.TaskState, text string) {
	t.Helper()
	if task.Status.State != state || workflows.MessageText(task.Status.Message) != text {
		t.Fatalf("task ended %s %q,\nwant %s %q", task.Status.State, workflows.MessageText(task.Status.Message), state, text)
	}
}

// poOf returns the purchase-order artifact of a task.
func poOf(t *testing.T, task *a2a.Task) PurchaseOrderRecord {
	t.Helper()
	if len(task.Artifacts) != 1 || task.Artifacts[0].Name != "purchase-order" {
		t.Fatalf("artifacts %v, want one purchase-order", task.Artifacts)
	}
	raw, err := json.Marshal(task.Artifacts[0].Parts[0].Data())
	if err != nil {
		t.Fatal(err)
	}
	var po PurchaseOrderRecord
	if err := json.Unmarshal(raw, &po); err != nil {
		t.Fatal(err)
	}
	return po
}

// steps lists the approval steps of a purchase order: "manager:maria:true".
func steps(po PurchaseOrderRecord) []string {
	var out []string
	for _, a := range po.Approvals {
		out = append(out, fmt.Sprintf("%s:%s:%s:%v", a.Step, a.Group, a.Approver, a.Approved))
	}
	return out
}

func TestAsksForMissingFields(t *testing.T) {
	r := newRun(t, Config{})
	r.look(time.Minute)
	r.answer(time.Hour, "mechanical keyboard")
	r.look(2 * time.Hour)
	r.answer(3*time.Hour, "lots")
	r.look(4 * time.Hour)
	r.answer(5*time.Hour, "2")
	r.look(6 * time.Hour)
	r.answer(7*time.Hour, "marketing")
	r.look(8 * time.Hour)
	r.answer(9*time.Hour, "cc4100")
	r.look(10 * time.Hour)
	r.decide(11*time.Hour, 1, "maria", GroupManagers, true, "ok")
	task := r.startText("I need a purchase order")

	r.wantSeen(
		"TASK_STATE_INPUT_REQUIRED: What should we order?",
		"TASK_STATE_INPUT_REQUIRED: How many of \"mechanical keyboard\"?",
		`TASK_STATE_INPUT_REQUIRED: "lots" is not a quantity from 1 to 10000. How many of "mechanical keyboard"?`,
		"TASK_STATE_INPUT_REQUIRED: Which cost centre pays? (e.g. CC-4100)",
		`TASK_STATE_INPUT_REQUIRED: "marketing" is not a cost centre like CC-4100. Which cost centre pays? (e.g. CC-4100)`,
		`TASK_STATE_INPUT_REQUIRED: Waiting for approval: "Purchase order PO-TASK1: 2 x Mechanical keyboard, 170.00 EUR, CC-4100" by managers.`,
	)
	wantEnd(t, task, a2a.TaskStateCompleted, "PO-TASK1 ordered: 2 x Mechanical keyboard for 170.00 EUR, supplier order SUP-000001. Approved by maria (managers).")
	po := poOf(t, task)
	if po.Item != "mechanical keyboard" || po.Quantity != 2 || po.CostCentre != "CC-4100" || po.Status != "ordered" {
		t.Errorf("purchase order %+v", po)
	}
}

func TestFirstMessageFieldsAreValidated(t *testing.T) {
	r := newRun(t, Config{})
	r.look(time.Minute)
	r.answer(time.Hour, "4")
	r.look(2 * time.Hour)
	r.decide(3*time.Hour, 1, "maria", GroupManagers, true, "")
	task := r.start(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{
		"item": "ergonomic chair", "quantity": 2.5, "costCentre": "CC-4100",
	})))
	r.wantSeen(
		`TASK_STATE_INPUT_REQUIRED: "2.5" is not a quantity from 1 to 10000. How many of "ergonomic chair"?`,
		`TASK_STATE_INPUT_REQUIRED: Waiting for approval: "Purchase order PO-TASK1: 4 x Ergonomic chair, 960.00 EUR, CC-4100" by managers.`,
	)
	if po := poOf(t, task); po.Quantity != 4 || po.Quote.Total != 960 {
		t.Errorf("purchase order %+v", po)
	}
}

func TestThresholdDecidesTheApprovals(t *testing.T) {
	tests := []struct {
		name      string
		threshold float64
		order     string
		want      []string
	}{
		{"under the threshold: the manager alone", 0, "Order 4 ergonomic chairs for CC-4100", []string{"manager:managers:maria:true"}},
		{"at the threshold: the manager alone", 960, "Order 4 ergonomic chairs for CC-4100", []string{"manager:managers:maria:true"}},
		{"over the threshold: the manager, then finance", 0, "Order 3 standing desks for CC-4100", []string{"manager:managers:maria:true", "finance:finance:frank:true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRun(t, Config{FinanceThreshold: tt.threshold})
			r.look(time.Minute)
			r.decide(time.Hour, 1, "maria", GroupManagers, true, "needed")
			r.look(2 * time.Hour)
			r.decide(3*time.Hour, 2, "frank", GroupFinance, true, "in budget")
			task := r.startText(tt.order)
			po := poOf(t, task)
			if got := steps(po); strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("approvals %v, want %v", got, tt.want)
			}
			if task.Status.State != a2a.TaskStateCompleted || po.Status != "ordered" || po.Order == nil || po.Order.OrderID != "SUP-000001" {
				t.Errorf("task %s, purchase order %+v: want completed and ordered", task.Status.State, po)
			}
			if len(tt.want) == 2 {
				r.wantSeen(
					`TASK_STATE_INPUT_REQUIRED: Waiting for approval: "Purchase order PO-TASK1: 3 x Standing desk, 1560.00 EUR, CC-4100" by managers.`,
					`TASK_STATE_INPUT_REQUIRED: Waiting for approval: "Purchase order PO-TASK1: 3 x Standing desk, 1560.00 EUR, CC-4100" by finance.`,
				)
			}
		})
	}
}

func TestRejection(t *testing.T) {
	tests := []struct {
		name   string
		decide func(r *run)
		want   string
		steps  []string
	}{
		{"by the manager", func(r *run) {
			r.decide(time.Hour, 1, "maria", GroupManagers, false, "Not this quarter.")
		}, "PO-TASK1 rejected by maria (managers): Not this quarter.", []string{"manager:managers:maria:false"}},
		{"by finance after the manager", func(r *run) {
			r.decide(time.Hour, 1, "maria", GroupManagers, true, "")
			r.decide(2*time.Hour, 2, "frank", GroupFinance, false, "")
		}, "PO-TASK1 rejected by frank (finance): no comment.", []string{"manager:managers:maria:true", "finance:finance:frank:false"}},
		{"by nobody before the deadline", func(r *run) {}, "PO-TASK1 rejected: no decision by managers before the deadline.",
			[]string{"manager:managers:deadline:false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRun(t, Config{})
			tt.decide(r)
			task := r.startText("Order 3 standing desks for CC-4100")
			wantEnd(t, task, a2a.TaskStateRejected, tt.want)
			po := poOf(t, task)
			if got := steps(po); strings.Join(got, " ") != strings.Join(tt.steps, " ") || po.Status != "rejected" || po.Order != nil {
				t.Errorf("purchase order %+v, approvals %v; want rejected, not ordered, approvals %v", po, got, tt.steps)
			}
			if n := len(r.supplier.Orders()); n != 0 {
				t.Errorf("the supplier got %d orders for a rejected purchase order", n)
			}
		})
	}
}

func TestSupplierOrdersOnce(t *testing.T) {
	for _, lose := range []int{0, 1} {
		t.Run(fmt.Sprintf("answers lost: %d", lose), func(t *testing.T) {
			r := newRun(t, Config{})
			r.supplier.LoseAnswers = lose
			r.decide(time.Hour, 1, "maria", GroupManagers, true, "")
			task := r.startText("Order 2 headsets for CC-4100")
			po := poOf(t, task)
			orders := r.supplier.Orders()
			if len(orders) != 1 || po.Order == nil || po.Order.OrderID != orders[0].OrderID {
				t.Fatalf("supplier orders %+v, purchase order %+v: want one order, the one on the purchase order", orders, po.Order)
			}
			key := taskID + "/place-order"
			if got := r.supplier.Requests(key); got != lose+1 {
				t.Errorf("the supplier got %d requests with key %s, want %d (the retries of lost answers)", got, key, lose+1)
			}
			want := fakesupplier.Order{Reference: "PO-TASK1", SKU: "HEADSET", Description: "Headset", Quantity: 2, UnitPrice: 120, Currency: "EUR", CostCentre: "CC-4100", QuoteID: "Q-QUOTETAS"}
			if orders[0].Order != want || orders[0].IdempotencyKey != key {
				t.Errorf("order %+v, want %+v with key %s", orders[0], want, key)
			}
		})
	}
}

func TestSupplierRefusalFailsTheTask(t *testing.T) {
	var calls int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnprocessableEntity)
		fmt.Fprint(w, `{"error": "HEADSET is out of stock"}`)
	}))
	t.Cleanup(srv.Close)
	r := newRun(t, Config{Supplier: &Supplier{BaseURL: srv.URL}})
	r.decide(time.Hour, 1, "maria", GroupManagers, true, "")
	task := r.startText("Order 2 headsets for CC-4100")
	if task.Status.State != a2a.TaskStateFailed ||
		!strings.Contains(workflows.MessageText(task.Status.Message), "PO-TASK1 was approved but not ordered") ||
		!strings.Contains(workflows.MessageText(task.Status.Message), "HEADSET is out of stock") {
		t.Errorf("task %s %q, want failed saying the supplier's reason", task.Status.State, workflows.MessageText(task.Status.Message))
	}
	if calls != 1 {
		t.Errorf("the supplier was called %d times; a refusal is not retried", calls)
	}
	if po := poOf(t, task); po.Status != "approved" || po.Order != nil || len(po.Approvals) != 1 {
		t.Errorf("purchase order %+v, want approved and not ordered", po)
	}
}

func TestItemWithoutQuoteIsAskedAgain(t *testing.T) {
	r := newRun(t, Config{})
	r.look(time.Minute)
	r.answer(time.Hour, "27-inch monitor")
	r.decide(2*time.Hour, 1, "maria", GroupManagers, true, "")
	task := r.startText("Order 2 unicorns for CC-4100")
	r.wantSeen(`TASK_STATE_INPUT_REQUIRED: No quote for "unicorns": the catalogue has ` + catalogueNames() + `. What should we order instead?`)
	po := poOf(t, task)
	if po.Item != "27-inch monitor" || po.Quote.SKU != "MON-27" || po.Quote.Total != 620 || po.Quote.Agent != "quotes" || po.Quote.TaskID != "quote-task-2" {
		t.Errorf("purchase order %+v, quote %+v", po, po.Quote)
	}
	if strings.Join(r.quoted, "|") != "unicorns|27-inch monitor" {
		t.Errorf("quotes asked for %q", r.quoted)
	}
}

func TestParseRequest(t *testing.T) {
	tests := []struct {
		text string
		want request
	}{
		{"Order 3 standing desks for CC-4100", request{"standing desks", "3", "CC-4100"}},
		{"3 x ergonomic chair, cost centre cc-4100", request{"ergonomic chair", "3", "cc-4100"}},
		{"We need 12 monitors please", request{"monitors", "12", ""}},
		{"5 boxes of A4 paper", request{"boxes of A4 paper", "5", ""}},
		{"I need a purchase order", request{}},
		{"for CC-12", request{CostCentre: "CC-12"}},
	}
	for _, tt := range tests {
		if got := parseRequest(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(tt.text))); got != tt.want {
			t.Errorf("parseRequest(%q) = %+v, want %+v", tt.text, got, tt.want)
		}
	}
	if _, err := parseCostCentre("CC-12"); err == nil || err.Error() != `"CC-12" is not a cost centre like CC-4100.` {
		t.Errorf("parseCostCentre(CC-12) error = %v", err)
	}
}

func TestQuotesAgent(t *testing.T) {
	tests := []struct {
		text  string
		state a2a.TaskState
		reply string
	}{
		{"3 standing desks", a2a.TaskStateCompleted, "Quote Q-TASK1: 3 x Standing desk at 520.00 EUR = 1560.00 EUR, valid until 2026-12-24."},
		{"2 unicorns", a2a.TaskStateRejected, `No quote for "unicorns": the catalogue has ` + catalogueNames() + "."},
		{`standing desk`, a2a.TaskStateRejected, `Say what to quote and how many, e.g. "3 standing desks" or {"item": "standing desk", "quantity": 3}.`},
		{"0 chairs", a2a.TaskStateRejected, `"0" is not a quantity from 1 to 10000.`},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			env := workflowstest.New(t, Quotes())
			env.SetStartTime(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
			task := env.RunText("quotes", tt.text)
			wantEnd(t, task, tt.state, tt.reply)
			if tt.state == a2a.TaskStateCompleted {
				raw, _ := json.Marshal(task.Artifacts[0].Parts[0].Data())
				want := `{"currency":"EUR","description":"Standing desk","quantity":3,"quoteId":"Q-TASK1","sku":"DESK-STAND","total":1560,"unitPrice":520,"validUntil":"2026-12-24"}`
				if task.Artifacts[0].Name != "quote" || string(raw) != want {
					t.Errorf("artifact %s: %s\nwant quote: %s", task.Artifacts[0].Name, raw, want)
				}
			}
		})
	}
}
