package main

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

// Quotes returns the quotes agent: it prices a quantity of an item of its
// catalogue and answers with a JSON "quote" artifact. The purchase-order
// agent calls it over A2A like any remote agent (Task.CallAgent), so it
// could as well run elsewhere, written in another language.
func Quotes() *workflows.Agent {
	return &workflows.Agent{
		Name:        "quotes",
		Description: "Quotes prices for office equipment: " + catalogueNames() + ".",
		Skills: []a2a.AgentSkill{{
			ID:          "quote",
			Name:        "Quote a price",
			Description: "Prices a quantity of a catalogue item; answers with a JSON quote valid for 30 days.",
			Tags:        []string{"procurement", "pricing"},
			Examples:    []string{"3 standing desks", `{"item": "ergonomic chair", "quantity": 12}`},
			OutputModes: []string{"application/json", "text/plain"},
		}},
		Handle: quote,
	}
}

// Quote is the quotes agent's artifact.
type Quote struct {
	QuoteID     string  `json:"quoteId"`
	SKU         string  `json:"sku"`
	Description string  `json:"description"`
	Quantity    int     `json:"quantity"`
	UnitPrice   float64 `json:"unitPrice"`
	Currency    string  `json:"currency"`
	Total       float64 `json:"total"`
	ValidUntil  string  `json:"validUntil"`
}

// catalogueItem is one thing the quotes agent prices.
type catalogueItem struct {
	SKU         string
	Description string
	Keywords    []string // an item matches when its name contains one
	UnitCents   int64    // EUR
}

// catalogue is a slice, not a map: workflow code must not depend on a map's
// iteration order.
var catalogue = []catalogueItem{
	{"CHAIR-ERGO", "Ergonomic chair", []string{"chair"}, 24000},
	{"DESK-STAND", "Standing desk", []string{"desk"}, 52000},
	{"MON-27", "27-inch monitor", []string{"monitor", "screen"}, 31000},
	{"LAPTOP-14", "14-inch laptop", []string{"laptop", "notebook"}, 145000},
	{"KB-MECH", "Mechanical keyboard", []string{"keyboard"}, 8500},
	{"HEADSET", "Headset", []string{"headset", "headphone"}, 12000},
	{"PAPER-A4", "Box of A4 paper (5 reams)", []string{"paper"}, 2850},
}

func findInCatalogue(item string) (catalogueItem, bool) {
	item = strings.ToLower(item)
	for _, c := range catalogue {
		for _, k := range c.Keywords {
			if strings.Contains(item, k) {
				return c, true
			}
		}
	}
	return catalogueItem{}, false
}

func catalogueNames() string {
	var names []string
	for _, c := range catalogue {
		names = append(names, strings.ToLower(c.Description[:1])+c.Description[1:])
	}
	return strings.Join(names, ", ")
}

// quote is the quotes agent's handler. It never waits: a request it cannot
// price is rejected with the reason, which the caller reads.
func quote(ctx workflow.Context, t *workflows.Task) error {
	// workflow.Now, never time.Now: the time of this point in history.
	q, err := priceQuote(parseRequest(t.Message()), t.ID(), workflow.Now(ctx))
	if err != nil {
		return workflows.Reject(err.Error())
	}
	t.Artifact(ctx, workflows.JSONArtifact("quote", q))
	t.Reply(fmt.Sprintf("Quote %s: %d x %s at %.2f EUR = %.2f EUR, valid until %s.",
		q.QuoteID, q.Quantity, q.Description, q.UnitPrice, q.Total, q.ValidUntil))
	return nil
}

// priceQuote prices a request of task id at now, or says why it cannot.
func priceQuote(req request, id a2a.TaskID, now time.Time) (Quote, error) {
	if req.Item == "" {
		return Quote{}, errors.New(`Say what to quote and how many, e.g. "3 standing desks" or {"item": "standing desk", "quantity": 3}.`)
	}
	item, ok := findInCatalogue(req.Item)
	if !ok {
		return Quote{}, fmt.Errorf("No quote for %q: the catalogue has %s.", req.Item, catalogueNames())
	}
	if req.Quantity == "" {
		return Quote{}, fmt.Errorf("How many? Send the quantity with the item, e.g. \"3 %s\".", strings.ToLower(item.Description))
	}
	qty, err := parseQuantity(req.Quantity)
	if err != nil {
		return Quote{}, err
	}
	return Quote{
		QuoteID:     "Q-" + shortID(id),
		SKU:         item.SKU,
		Description: item.Description,
		Quantity:    qty,
		UnitPrice:   euros(item.UnitCents),
		Currency:    "EUR",
		Total:       euros(item.UnitCents * int64(qty)),
		ValidUntil:  now.UTC().AddDate(0, 0, 30).Format(time.DateOnly),
	}, nil
}

func euros(cents int64) float64 { return float64(cents) / 100 }

func cents(euros float64) int64 { return int64(math.Round(euros * 100)) }

// shortID is the first 8 letters and digits of a task ID, upper case: a
// reference people can read out ("PO-1A2B3C4D").
func shortID(id a2a.TaskID) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(string(id)) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			if b.Len() == 8 {
				break
			}
		}
	}
	return b.String()
}
