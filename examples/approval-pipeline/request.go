package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/workflows"
)

// request is what a first message says, each field as written (possibly
// invalid, possibly empty): a data part {"item": ..., "quantity": ...,
// "costCentre": ...} or free text such as "Order 3 standing desks for
// CC-4100". The fields are validated later, each with its parse function,
// so that a bad value is asked again with the reason.
type request struct {
	Item       string
	Quantity   string
	CostCentre string
}

var (
	costCentreInText = regexp.MustCompile(`(?i)\bcc-?(\d+)\b`)
	quantityInText   = regexp.MustCompile(`(?i)\b(\d+)\s*(?:x\b|×)?`)
	costCentreCode   = regexp.MustCompile(`(?i)^cc-?(\d{4})$`)
)

// Words around the item in free text, dropped from its ends.
var (
	leadingFiller  = []string{"please", "order", "buy", "purchase", "get", "i", "we", "need", "want", "would", "like", "to", "a", "an", "some", "x", "of"}
	trailingFiller = []string{"please", "for", "on", "cost", "centre", "center", "the"}
)

// parseRequest takes what it can from a message. A data part wins over the
// text; from text the item is taken only next to a quantity, so that "I need
// a purchase order" asks what to order rather than ordering "purchase order".
func parseRequest(m *a2a.Message) request {
	var r request
	if m == nil {
		return r
	}
	for _, p := range m.Parts {
		data, ok := p.Data().(map[string]any)
		if !ok {
			continue
		}
		r.Item = firstNonEmpty(r.Item, valueText(data["item"]))
		r.Quantity = firstNonEmpty(r.Quantity, valueText(data["quantity"]))
		r.CostCentre = firstNonEmpty(r.CostCentre, valueText(data["costCentre"]), valueText(data["costCenter"]))
	}
	text := workflows.MessageText(m)
	if r.CostCentre == "" {
		if loc := costCentreInText.FindStringIndex(text); loc != nil {
			r.CostCentre = text[loc[0]:loc[1]]
			text = text[:loc[0]] + " " + text[loc[1]:]
		}
	}
	if r.Quantity == "" {
		if loc := quantityInText.FindStringSubmatchIndex(text); loc != nil {
			r.Quantity = text[loc[2]:loc[3]]
			text = text[:loc[0]] + " " + text[loc[1]:]
			if r.Item == "" {
				r.Item = itemIn(text)
			}
		}
	}
	return r
}

// itemIn is the item named in free text once the quantity and the cost
// centre are taken out: the words left, without filler at either end.
func itemIn(text string) string {
	words := strings.Fields(strings.Map(func(r rune) rune {
		if strings.ContainsRune(".,;:!?\"'()", r) {
			return ' '
		}
		return r
	}, text))
	for len(words) > 0 && isOneOf(words[0], leadingFiller) {
		words = words[1:]
	}
	for len(words) > 0 && isOneOf(words[len(words)-1], trailingFiller) {
		words = words[:len(words)-1]
	}
	return strings.Join(words, " ")
}

func isOneOf(word string, list []string) bool {
	for _, w := range list {
		if strings.EqualFold(word, w) {
			return true
		}
	}
	return false
}

// valueText is a data part's value as the user would have typed it.
func valueText(v any) string {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// parseItem validates what to order.
func parseItem(s string) (string, error) {
	s = strings.Join(strings.Fields(s), " ")
	switch {
	case s == "":
		return "", fmt.Errorf("Please name the item.")
	case len(s) > 200:
		return "", fmt.Errorf("That item name is %d characters long; please keep it under 200.", len(s))
	}
	return s, nil
}

// parseQuantity validates a quantity: a whole number from 1 to 10,000,
// optionally followed by words ("3 desks").
func parseQuantity(s string) (int, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return 0, fmt.Errorf("Please give a number.")
	}
	n, err := strconv.Atoi(fields[0])
	if err != nil || n < 1 || n > 10000 {
		return 0, fmt.Errorf("%q is not a quantity from 1 to 10000.", s)
	}
	return n, nil
}

// parseCostCentre validates a cost centre: CC- and four digits ("cc4100"
// is taken as CC-4100).
func parseCostCentre(s string) (string, error) {
	m := costCentreCode.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", fmt.Errorf("%q is not a cost centre like CC-4100.", s)
	}
	return "CC-" + m[1], nil
}
