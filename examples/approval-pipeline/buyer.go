package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
)

// The buyer's tools, by the names the model calls them. A tool's name is
// also its activity's name ("tool:place_order"), written into the history
// of every task that called it: keep it when you rename the Go function.
const (
	ToolGetQuote   = "get_quote"
	ToolPlaceOrder = "place_order"
)

// BuyerApprovalThreshold is the order total (EUR) above which a manager
// approves a place_order call before it runs.
const BuyerApprovalThreshold = 500

// QuoteArgs are get_quote's arguments, as the model sends them. The
// validate tags are checked before the tool runs: a call that breaks them
// is answered to the model with the reason, which it corrects.
type QuoteArgs struct {
	Item     string `json:"item" jsonschema:"description=What to buy, in a few words (standing desk, ergonomic chair...)." validate:"required"`
	Quantity int    `json:"quantity" jsonschema:"description=How many." validate:"gt=0,lte=1000"`
}

// OrderArgs are place_order's arguments. The price is not one of them: the
// tool (and the approval's condition) take it from the catalogue, not from
// the model.
type OrderArgs struct {
	SKU        string `json:"sku" jsonschema:"description=The SKU of the quote." validate:"required"`
	Quantity   int    `json:"quantity" jsonschema:"description=How many." validate:"gt=0,lte=1000"`
	CostCentre string `json:"costCentre" jsonschema:"description=The cost centre that pays, like CC-4100." validate:"required,startswith=CC-"`
	QuoteID    string `json:"quoteId,omitempty" jsonschema:"description=The quote's ID, when there is one."`
}

// Buyer returns the buyer agent: an LLM agent for people who would rather
// say what they need than fill in a purchase order. It has two tools of its
// own: get_quote asks the quotes agent over A2A (a workflow tool: the call
// is a durable step of the task), and place_order orders from the supplier
// (an activity, retried, with the call's idempotency key). place_order
// runs without leave only up to BuyerApprovalThreshold: above it, the call
// waits for a manager, who sees the order the model wants to place, may
// change it (fewer desks, another cost centre) or reject it, and the model
// reads the outcome as the tool's result. The task survives restarts while
// it waits, for days if need be.
//
// It needs an LLM: serve with OPENAI_API_KEY or ANTHROPIC_API_KEY (or
// A2AFLOW_LLM_PROVIDER and its settings).
func Buyer(cfg Config) *workflows.Agent {
	if cfg.Supplier == nil {
		cfg.Supplier, _ = NewSupplier("")
	}
	if cfg.QuotesAgent == "" {
		cfg.QuotesAgent = "quotes"
	}
	if cfg.ManagerTimeout <= 0 {
		cfg.ManagerTimeout = 72 * time.Hour
	}
	getQuote := llm.WorkflowTool(ToolGetQuote, "Gets a price for a quantity of an item from the quotes agent.",
		func(ctx workflow.Context, in QuoteArgs) (Quote, error) {
			t, _ := workflows.TaskFrom(ctx)
			q, err := requestQuote(ctx, t, cfg.QuotesAgent, in.Item, in.Quantity)
			if err != nil {
				return Quote{}, err
			}
			return q.Quote, nil
		})
	placeOrder := llm.NewTool(ToolPlaceOrder, "Orders a quoted item from the supplier. Orders above "+
		fmt.Sprint(BuyerApprovalThreshold)+" EUR wait for a manager's approval.",
		func(ctx context.Context, in OrderArgs) (OrderConfirmation, error) {
			item, ok := findSKU(in.SKU)
			if !ok { // the model reads why, and gets a quote first
				return OrderConfirmation{}, temporal.NewNonRetryableApplicationError(
					fmt.Sprintf("no item with SKU %q: get a quote first", in.SKU), ErrTypeSupplierRefused, nil)
			}
			return cfg.Supplier.PlaceOrder(ctx, PlaceOrderInput{
				// The same key on every attempt of this call, whoever
				// approved it and however often it runs: one order.
				IdempotencyKey: llm.CallKey(ctx),
				Order: Order{
					Reference:   "BUY-" + shortID(a2a.TaskID(activity.GetInfo(ctx).WorkflowExecution.ID)),
					SKU:         item.SKU,
					Description: item.Description,
					Quantity:    in.Quantity,
					UnitPrice:   euros(item.UnitCents),
					Currency:    "EUR",
					CostCentre:  in.CostCentre,
					QuoteID:     in.QuoteID,
				},
			})
		},
		llm.ToolActivity(SupplierActivityOptions),
		llm.RequireApproval(llm.Gate{
			Request: workflows.ApprovalRequest{Groups: []string{GroupManagers}, Timeout: cfg.ManagerTimeout},
			// Workflow code, deterministic: the catalogue's price, not one
			// the model could state. An unknown SKU is refused by the tool.
			When: llm.If(func(in OrderArgs) bool {
				item, ok := findSKU(in.SKU)
				return ok && item.UnitCents*int64(in.Quantity) > BuyerApprovalThreshold*100
			}),
		}))
	return &workflows.Agent{
		Name:        "buyer",
		Description: "Buys office equipment for you: prices it with the quotes agent and orders it; a manager approves orders above " + fmt.Sprint(BuyerApprovalThreshold) + " EUR.",
		Skills: []a2a.AgentSkill{{
			ID:          "buy",
			Name:        "Buy office equipment",
			Description: "Says what things cost and orders them on a cost centre.",
			Tags:        []string{"procurement", "llm"},
			Examples:    []string{"Two standing desks for CC-4100, please", "What does a 27-inch monitor cost?"},
		}},
		// The tools' activities, registered by the worker like any other.
		Activities: []any{getQuote, placeOrder},
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			answer, err := llm.Worker(getQuote, placeOrder, llm.AskUser(t)).Run(ctx, t.Thread(),
				llm.WithSystem(buyerPrompt), llm.WithUsage(t))
			if err != nil {
				return err
			}
			t.Reply(answer)
			return nil
		},
	}
}

const buyerPrompt = `You buy office equipment for the user. Get a quote with get_quote before ordering, ` +
	`and order with place_order the quote's SKU and quantity on the user's cost centre (ask for it with ask_user ` +
	`when the user did not give it). Say what you ordered, the supplier's order ID and the total, or why nothing was ordered.`

// findSKU is the catalogue's item with the SKU.
func findSKU(sku string) (catalogueItem, bool) {
	for _, c := range catalogue {
		if strings.EqualFold(c.SKU, sku) {
			return c, true
		}
	}
	return catalogueItem{}, false
}
