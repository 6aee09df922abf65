package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

// Config tunes the purchase-order agent. The zero value works, with the
// supplier at DefaultSupplierURL.
type Config struct {
	// Supplier places the orders; default NewSupplier("").
	Supplier *Supplier
	// QuotesAgent is the A2A agent that prices orders: a name in the agent
	// directory (serve --peer NAME=URL) or a URL; default "quotes".
	QuotesAgent string
	// FinanceThreshold is the total (EUR) above which finance approves
	// after the manager; default 1000.
	FinanceThreshold float64
	// ManagerTimeout and FinanceTimeout are how long each group has to
	// decide before the order is rejected; default 3 and 5 days.
	ManagerTimeout time.Duration
	FinanceTimeout time.Duration
}

// The approver groups, as --approver-groups names them.
const (
	GroupManagers = "managers"
	GroupFinance  = "finance"
)

// PurchaseOrder returns the purchase-order agent: it takes an order (item,
// quantity, cost centre; asking for whatever is missing or invalid), gets a
// quote from the quotes agent over A2A, has it approved by a manager and,
// above the finance threshold, by finance, places it with the supplier (an
// activity, idempotent) and completes with the purchase order as a JSON
// artifact. A rejection ends the task rejected with the reason.
func PurchaseOrder(cfg Config) *workflows.Agent {
	if cfg.Supplier == nil {
		cfg.Supplier, _ = NewSupplier("")
	}
	if cfg.QuotesAgent == "" {
		cfg.QuotesAgent = "quotes"
	}
	if cfg.FinanceThreshold <= 0 {
		cfg.FinanceThreshold = 1000
	}
	if cfg.ManagerTimeout <= 0 {
		cfg.ManagerTimeout = 72 * time.Hour
	}
	if cfg.FinanceTimeout <= 0 {
		cfg.FinanceTimeout = 120 * time.Hour
	}
	return &workflows.Agent{
		Name: "purchase-order",
		Description: fmt.Sprintf("Raises purchase orders: asks for what is missing, gets a quote, has a manager approve "+
			"(and finance above %.2f EUR) and orders from the supplier.", cfg.FinanceThreshold),
		Skills: []a2a.AgentSkill{{
			ID:          "raise-po",
			Name:        "Raise a purchase order",
			Description: "Takes an item, a quantity and a cost centre, gets the order quoted and approved, places it and returns the purchase order.",
			Tags:        []string{"procurement", "approval"},
			Examples:    []string{"Order 3 standing desks for CC-4100", `{"item": "ergonomic chair", "quantity": 4, "costCentre": "CC-4100"}`},
			OutputModes: []string{"application/json", "text/plain"},
		}},
		// The worker registers the activity under this name: the name, not
		// the Go method, is what the history of every task records.
		Activities: []any{workflows.Activity(ActivityPlaceOrder, cfg.Supplier.PlaceOrder)},
		Handle:     func(ctx workflow.Context, t *workflows.Task) error { return raisePurchaseOrder(ctx, t, cfg) },
	}
}

// PurchaseOrderRecord is the agent's artifact, "purchase-order", and also
// the task's state while it waits: what is known so far.
type PurchaseOrderRecord struct {
	Number     string             `json:"number"`
	Status     string             `json:"status"` // draft, approved, ordered, rejected
	Item       string             `json:"item,omitempty"`
	Quantity   int                `json:"quantity,omitempty"`
	CostCentre string             `json:"costCentre,omitempty"`
	Quote      *QuoteRecord       `json:"quote,omitempty"`
	Approvals  []ApprovalRecord   `json:"approvals,omitempty"`
	Order      *OrderConfirmation `json:"order,omitempty"`
}

// QuoteRecord is the quote and the remote task it came from.
type QuoteRecord struct {
	Quote
	Agent  string     `json:"agent"`
	TaskID a2a.TaskID `json:"taskId"`
}

// ApprovalRecord is one approval step and who decided it.
type ApprovalRecord struct {
	Step       string    `json:"step"` // manager, finance
	Group      string    `json:"group"`
	ApprovalID string    `json:"approvalId"`
	Approved   bool      `json:"approved"`
	Approver   string    `json:"approver"`
	Comment    string    `json:"comment,omitempty"`
	Via        string    `json:"via,omitempty"`
	Time       time.Time `json:"time"`
}

// raisePurchaseOrder is the handler: workflow code, deterministic (no
// time.Now, no goroutines, no I/O, no map ranges). Every step records its
// result in po, and skips itself when po already has it: after the task
// continues as new (a wait of weeks), the handler starts again from the top
// with po as it was, and goes on where it stopped.
func raisePurchaseOrder(ctx workflow.Context, t *workflows.Task, cfg Config) error {
	var po PurchaseOrderRecord
	var given request
	if !t.Resume(&po) {
		po = PurchaseOrderRecord{Number: "PO-" + shortID(t.ID()), Status: "draft"}
		given = parseRequest(t.Message())
	}
	var err error

	// 1. The order's fields: from the first message, else asked for.
	if po.Item == "" {
		if po.Item, err = askField(ctx, t, &po, "item", "What should we order?", given.Item, "", parseItem); err != nil {
			return err
		}
	}
	if po.Quantity == 0 {
		if po.Quantity, err = askField(ctx, t, &po, "quantity", fmt.Sprintf("How many of %q?", po.Item), given.Quantity, "", parseQuantity); err != nil {
			return err
		}
	}
	if po.CostCentre == "" {
		if po.CostCentre, err = askField(ctx, t, &po, "cost-centre", "Which cost centre pays? (e.g. CC-4100)", given.CostCentre, "", parseCostCentre); err != nil {
			return err
		}
	}

	// 2. A quote, from the quotes agent over A2A. An item it cannot price is
	// asked again, with its reason.
	for po.Quote == nil {
		q, err := requestQuote(ctx, t, cfg.QuotesAgent, po.Item, po.Quantity)
		var remote *workflows.RemoteTaskError
		if errors.As(err, &remote) && remote.State == a2a.TaskStateRejected {
			if po.Item, err = askField(ctx, t, &po, "item", "What should we order instead?", "", remote.Reason, parseItem); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("no quote for %s: %w", po.Number, err)
		}
		po.Quote = q
	}

	// 3. Approvals: the manager, then finance above the threshold.
	summary := fmt.Sprintf("%s: %d x %s, %.2f EUR, %s", po.Number, po.Quantity, po.Quote.Description, po.Quote.Total, po.CostCentre)
	if err := approve(ctx, t, &po, "manager", GroupManagers, cfg.ManagerTimeout, summary,
		fmt.Sprintf("Quote %s from the %s agent. Finance approves too above %.2f EUR.", po.Quote.QuoteID, po.Quote.Agent, cfg.FinanceThreshold)); err != nil {
		return err
	}
	if cents(po.Quote.Total) > cents(cfg.FinanceThreshold) {
		m := po.Approvals[0]
		if err := approve(ctx, t, &po, "finance", GroupFinance, cfg.FinanceTimeout, summary,
			fmt.Sprintf("Over %.2f EUR. Approved by %s (%s): %s.", cfg.FinanceThreshold, m.Approver, m.Group, orNone(m.Comment))); err != nil {
			return err
		}
	}
	po.Status = "approved"

	// 4. The order, placed with the supplier by an activity. The key is the
	// same on every attempt, so a retry never orders twice.
	if po.Order == nil {
		t.Progress(ctx, fmt.Sprintf("Approved. Ordering %d x %s from the supplier...", po.Quantity, po.Quote.SKU))
		ao := SupplierActivityOptions
		ao.Summary = fmt.Sprintf("order %s: %d x %s", po.Number, po.Quantity, po.Quote.SKU)
		actx := workflow.WithActivityOptions(ctx, ao)
		var confirmation OrderConfirmation
		err := workflow.ExecuteActivity(actx, ActivityPlaceOrder, PlaceOrderInput{
			IdempotencyKey: string(t.ID()) + "/place-order",
			Order: Order{
				Reference: po.Number, SKU: po.Quote.SKU, Description: po.Quote.Description, Quantity: po.Quantity,
				UnitPrice: po.Quote.UnitPrice, Currency: po.Quote.Currency, CostCentre: po.CostCentre, QuoteID: po.Quote.QuoteID,
			},
		}).Get(ctx, &confirmation)
		if err != nil {
			t.Artifact(ctx, workflows.JSONArtifact("purchase-order", po)) // approved, not ordered
			return fmt.Errorf("%s was approved but not ordered: %w", po.Number, err)
		}
		po.Order = &confirmation
	}
	po.Status = "ordered"

	t.Artifact(ctx, workflows.JSONArtifact("purchase-order", po))
	var approvers []string
	for _, a := range po.Approvals {
		approvers = append(approvers, fmt.Sprintf("%s (%s)", a.Approver, a.Group))
	}
	t.Reply(fmt.Sprintf("%s ordered: %d x %s for %.2f %s, supplier order %s. Approved by %s.",
		po.Number, po.Quantity, po.Quote.Description, po.Quote.Total, po.Quote.Currency, po.Order.OrderID, strings.Join(approvers, " and ")))
	return nil
}

// askField returns the field given in the first message when parse takes
// it; otherwise it asks prompt (after problem, when set) until parse takes
// the answer, saying each time what was wrong. The wait is resumable with
// po: however long it lasts, the task may continue as new meanwhile.
func askField[T any](ctx workflow.Context, t *workflows.Task, po *PurchaseOrderRecord, slot, prompt, given, problem string, parse func(string) (T, error)) (T, error) {
	if given != "" {
		v, err := parse(given)
		if err == nil {
			return v, nil
		}
		problem = err.Error()
	}
	for {
		question := prompt
		if problem != "" {
			question = problem + " " + prompt
		}
		answer, err := t.Ask(ctx, slot, question, workflows.Resumable(po))
		if err != nil {
			var zero T
			return zero, err // canceled, or continuing as new: return it as is
		}
		v, perr := parse(strings.TrimSpace(workflows.MessageText(answer)))
		if perr == nil {
			return v, nil
		}
		problem = perr.Error()
	}
}

// requestQuote asks the quotes agent for a quote, over A2A, and reads it
// from the remote task's "quote" artifact.
func requestQuote(ctx workflow.Context, t *workflows.Task, agent, item string, quantity int) (*QuoteRecord, error) {
	t.Progress(ctx, fmt.Sprintf("Asking the %s agent to quote %d x %s...", agent, quantity, item))
	res, err := t.CallAgent(ctx, workflows.CallRequest{
		Agent: agent,
		Parts: a2a.ContentParts{
			a2a.NewTextPart(fmt.Sprintf("Quote %d x %s", quantity, item)),
			a2a.NewDataPart(map[string]any{"item": item, "quantity": quantity}),
		},
		NoArtifacts: true, // the purchase order carries the quote
	})
	if err != nil {
		return nil, err
	}
	for _, a := range res.Artifacts {
		if a == nil || a.Name != "quote" {
			continue
		}
		for _, p := range a.Parts {
			if data, ok := p.Data().(map[string]any); ok {
				raw, err := json.Marshal(data) //workflowcheck:ignore encoding/json sorts map keys: the same text on every replay
				if err != nil {
					return nil, err
				}
				q := &QuoteRecord{Agent: agent, TaskID: res.TaskID}
				err = json.Unmarshal(raw, &q.Quote) //workflowcheck:ignore decoding JSON is deterministic
				if err != nil || q.QuoteID == "" || q.Total <= 0 || q.SKU == "" {
					return nil, fmt.Errorf("the %s agent's quote is not one: %s", agent, raw)
				}
				return q, nil
			}
		}
	}
	return nil, fmt.Errorf("the %s agent answered without a quote artifact: %q", agent, res.Text())
}

// approve runs one approval step unless an earlier run of the task already
// did. A rejection (or no decision by the deadline) ends the task rejected
// with the reason, the purchase order as it stands attached.
func approve(ctx workflow.Context, t *workflows.Task, po *PurchaseOrderRecord, step, group string, timeout time.Duration, title, details string) error {
	for _, a := range po.Approvals {
		if a.Step == step {
			return nil
		}
	}
	a, err := t.Approve(ctx, workflows.ApprovalRequest{
		Title:   fmt.Sprintf("Purchase order %s", title),
		Details: details,
		Action: map[string]any{
			"number": po.Number, "item": po.Item, "sku": po.Quote.SKU, "quantity": po.Quantity,
			"total": po.Quote.Total, "currency": po.Quote.Currency, "costCentre": po.CostCentre,
		},
		Groups:    []string{group},
		Timeout:   timeout,
		OnTimeout: workflows.RejectAtDeadline,
	}, workflows.Resumable(po))
	if err != nil {
		return err
	}
	d := a.Decisions[len(a.Decisions)-1]
	po.Approvals = append(po.Approvals, ApprovalRecord{
		Step: step, Group: group, ApprovalID: a.ID, Approved: a.Approved(),
		Approver: d.Approver, Comment: d.Comment, Via: d.Via, Time: d.Time,
	})
	if a.Approved() {
		return nil
	}
	po.Status = "rejected"
	t.Artifact(ctx, workflows.JSONArtifact("purchase-order", po))
	if d.Via == "deadline" {
		return workflows.Reject(fmt.Sprintf("%s rejected: no decision by %s before the deadline.", po.Number, group))
	}
	return workflows.Reject(fmt.Sprintf("%s rejected by %s (%s): %s.", po.Number, d.Approver, group, orNone(d.Comment)))
}

func orNone(s string) string {
	if s = strings.TrimRight(strings.TrimSpace(s), "."); s == "" {
		return "no comment"
	}
	return s
}
