package demo

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

// ExpensesConfig tunes the expenses agent. The zero value works.
type ExpensesConfig struct {
	// AutoApproveBelow approves expenses under this amount without asking
	// anyone; default 100.
	AutoApproveBelow float64
	// FinanceTimeout is how long the finance group has before the request
	// escalates to managers; default 48 hours.
	FinanceTimeout time.Duration
	// ManagersTimeout is how long managers have before the request is
	// rejected; default 24 hours.
	ManagersTimeout time.Duration
}

// Expenses returns the expenses agent: it takes an expense (amount,
// currency, purpose; asking for whatever is missing), approves it itself
// under a threshold, otherwise asks the finance group, escalates to managers
// when finance does not decide in time, and completes with a receipt
// artifact that records the decision.
func Expenses(cfg ExpensesConfig) *workflows.Agent {
	if cfg.AutoApproveBelow <= 0 {
		cfg.AutoApproveBelow = 100
	}
	if cfg.FinanceTimeout <= 0 {
		cfg.FinanceTimeout = 48 * time.Hour
	}
	if cfg.ManagersTimeout <= 0 {
		cfg.ManagersTimeout = 24 * time.Hour
	}
	return &workflows.Agent{
		Name:        "expenses",
		Description: fmt.Sprintf("Files expense claims. Claims under %.2f are approved at once; larger ones go to the finance group, then to managers.", cfg.AutoApproveBelow),
		Skills: []a2a.AgentSkill{{
			ID:          "file-expense",
			Name:        "File an expense",
			Description: "Takes an amount, a currency and a purpose, gets the claim approved and returns a receipt.",
			Tags:        []string{"expenses", "approval"},
			Examples:    []string{"120 EUR team lunch", `{"amount": 80, "currency": "USD", "purpose": "taxi"}`},
			OutputModes: []string{"application/json", "text/plain"},
		}},
		Handle: func(ctx workflow.Context, t *workflows.Task) error { return fileExpense(ctx, t, cfg) },
	}
}

// Expense is what the expenses agent files.
type Expense struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
	Purpose  string  `json:"purpose"`
}

// Receipt is the expenses agent's artifact: the claim and how it was decided.
type Receipt struct {
	Expense
	Approved  bool                         `json:"approved"`
	Approval  string                       `json:"approvalId,omitempty"`
	Decisions []workflows.ApprovalDecision `json:"decisions"`
}

var (
	amountPattern   = regexp.MustCompile(`(\d+(?:[.,]\d{1,2})?)`)
	currencyPattern = regexp.MustCompile(`\b([A-Za-z]{3})\b`)
	currencyCode    = regexp.MustCompile(`^[A-Za-z]{3}$`)
)

// parseExpense takes what it can from a message: a data part with the
// fields, or free text such as "120 EUR team lunch".
func parseExpense(m *a2a.Message) Expense {
	var e Expense
	for _, p := range m.Parts {
		if data, ok := p.Data().(map[string]any); ok {
			if v, ok := data["amount"].(float64); ok {
				e.Amount = v
			}
			if v, ok := data["currency"].(string); ok {
				e.Currency = strings.ToUpper(v)
			}
			if v, ok := data["purpose"].(string); ok {
				e.Purpose = v
			}
		}
	}
	text := workflows.MessageText(m)
	if e.Amount == 0 {
		if s := amountPattern.FindString(text); s != "" {
			e.Amount, _ = strconv.ParseFloat(strings.ReplaceAll(s, ",", "."), 64)
			text = strings.Replace(text, s, " ", 1)
		}
	}
	if e.Currency == "" {
		if s := currencyPattern.FindString(text); s != "" && strings.ToUpper(s) == s {
			e.Currency = s
			text = strings.Replace(text, s, " ", 1)
		}
	}
	if e.Purpose == "" && e.Amount > 0 {
		e.Purpose = strings.Join(strings.Fields(strings.TrimSpace(strings.Trim(text, " .,:-"))), " ")
	}
	return e
}

func fileExpense(ctx workflow.Context, t *workflows.Task, cfg ExpensesConfig) error {
	// The claim so far is the state the task continues as new with, while it
	// asks or waits for an approval for weeks.
	var st slotState[Expense]
	if !t.Resume(&st) {
		st.Slots = parseExpense(t.Message())
	}
	e := &st.Slots
	var err error
	if e.Amount <= 0 {
		if e.Amount, err = askUntil(ctx, t, &st, "amount", "How much was it?", func(s string) (float64, error) {
			v, perr := strconv.ParseFloat(strings.ReplaceAll(strings.Fields(s + " x")[0], ",", "."), 64)
			if perr != nil || v <= 0 {
				return 0, fmt.Errorf("%q is not an amount.", s)
			}
			return v, nil
		}); err != nil {
			return err
		}
	}
	if e.Currency == "" {
		if e.Currency, err = askUntil(ctx, t, &st, "currency", "In which currency? (e.g. EUR)", func(s string) (string, error) {
			if !currencyCode.MatchString(s) {
				return "", fmt.Errorf("%q is not a three-letter currency code.", s)
			}
			return strings.ToUpper(s), nil
		}); err != nil {
			return err
		}
	}
	if e.Purpose == "" {
		if e.Purpose, err = askUntil(ctx, t, &st, "purpose", "What was it for?", func(s string) (string, error) {
			if s == "" {
				return "", fmt.Errorf("Please say what the expense was for.")
			}
			return s, nil
		}); err != nil {
			return err
		}
	}

	receipt := Receipt{Expense: *e}
	if e.Amount < cfg.AutoApproveBelow {
		receipt.Approved = true
		receipt.Decisions = []workflows.ApprovalDecision{{
			Approved: true, Approver: "expenses-agent", Time: workflow.Now(ctx).UTC(), Via: "policy",
			Comment: fmt.Sprintf("under the %.2f auto-approval limit", cfg.AutoApproveBelow),
		}}
	} else {
		approval, err := t.Approve(ctx, workflows.ApprovalRequest{
			Title:           fmt.Sprintf("Expense of %.2f %s: %s", e.Amount, e.Currency, e.Purpose),
			Details:         fmt.Sprintf("Filed in task %s. Over the %.2f auto-approval limit.", t.ID(), cfg.AutoApproveBelow),
			Action:          *e,
			Groups:          []string{"finance"},
			Timeout:         cfg.FinanceTimeout,
			OnTimeout:       workflows.EscalateAtDeadline,
			EscalateTo:      []string{"managers"},
			EscalateTimeout: cfg.ManagersTimeout,
		}, workflows.Resumable(&st))
		if err != nil {
			return err
		}
		receipt.Approved, receipt.Approval, receipt.Decisions = approval.Approved(), approval.ID, approval.Decisions
	}

	t.Artifact(ctx, workflows.JSONArtifact("receipt", receipt))
	// Either way the claim was handled: the task completes, and the receipt
	// says how it was decided.
	last := receipt.Decisions[len(receipt.Decisions)-1]
	if !receipt.Approved {
		t.Reply(fmt.Sprintf("Expense of %.2f %s for %s rejected by %s: %s.", e.Amount, e.Currency, e.Purpose, last.Approver, orNone(last.Comment)))
		return nil
	}
	t.Reply(fmt.Sprintf("Expense of %.2f %s for %s approved by %s.", e.Amount, e.Currency, e.Purpose, last.Approver))
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "no comment"
	}
	return s
}
