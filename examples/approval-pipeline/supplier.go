package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// ActivityPlaceOrder is the name the purchase-order agent calls the
// supplier's PlaceOrder by. It is written into the history of every task
// that ordered: keep it when you rename the Go method.
const ActivityPlaceOrder = "PlaceOrder"

// ErrTypeSupplierRefused is the error type of an order the supplier refused
// (a 4xx answer): sending it again would not help, so it is not retried.
const ErrTypeSupplierRefused = "SupplierRefused"

// DefaultSupplierURL is where cmd/fake-supplier listens by default.
const DefaultSupplierURL = "http://localhost:9090"

// SupplierActivityOptions are those of an order to the supplier: an
// attempt may take 10 s (then it is tried again: the worker may have died
// with it), retried 1 s, 2 s, 4 s... up to a minute apart for a day, unless
// the supplier refused the order.
var SupplierActivityOptions = workflow.ActivityOptions{
	StartToCloseTimeout:    10 * time.Second, // one attempt
	ScheduleToCloseTimeout: 24 * time.Hour,   // all attempts: then the task fails
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:        time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        time.Minute,
		NonRetryableErrorTypes: []string{ErrTypeSupplierRefused},
	},
}

// Supplier calls the supplier's ordering API. Its methods are activities:
// they run on the worker, outside the workflow, and Temporal retries them.
type Supplier struct {
	// BaseURL is the API's address, e.g. http://localhost:9090.
	BaseURL string
	// Client makes the requests; default one with a 10 s timeout.
	Client *http.Client
}

// NewSupplier returns the Supplier at baseURL (DefaultSupplierURL when
// empty), or why baseURL is not usable.
func NewSupplier(baseURL string) (*Supplier, error) {
	if baseURL == "" {
		baseURL = DefaultSupplierURL
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("SUPPLIER_URL %q: want the supplier API's base URL, such as %s", baseURL, DefaultSupplierURL)
	}
	return &Supplier{BaseURL: strings.TrimRight(baseURL, "/")}, nil
}

// PlaceOrderInput is what the workflow asks the supplier to order.
type PlaceOrderInput struct {
	// IdempotencyKey is the same on every attempt (the task's ID and the
	// order's purpose), so a retry after a crash or a lost answer gets the
	// order already placed instead of a second one.
	IdempotencyKey string `json:"idempotencyKey"`
	Order          Order  `json:"order"`
}

// Order is one order line as the supplier's API takes it.
type Order struct {
	Reference   string  `json:"reference"`
	SKU         string  `json:"sku"`
	Description string  `json:"description"`
	Quantity    int     `json:"quantity"`
	UnitPrice   float64 `json:"unitPrice"`
	Currency    string  `json:"currency"`
	CostCentre  string  `json:"costCentre"`
	QuoteID     string  `json:"quoteId,omitempty"`
}

// OrderConfirmation is the supplier's answer.
type OrderConfirmation struct {
	OrderID        string    `json:"orderId"`
	Status         string    `json:"status"`
	IdempotencyKey string    `json:"idempotencyKey"`
	Received       time.Time `json:"received"`
}

// PlaceOrder sends the order to the supplier. Network errors, 429 and 5xx
// answers are returned as they are, so Temporal retries them; a 4xx answer
// is a non-retryable ErrTypeSupplierRefused error with the supplier's reason.
func (s *Supplier) PlaceOrder(ctx context.Context, in PlaceOrderInput) (OrderConfirmation, error) {
	if in.IdempotencyKey == "" {
		return OrderConfirmation{}, temporal.NewNonRetryableApplicationError("an order needs an idempotency key", ErrTypeSupplierRefused, nil)
	}
	body, err := json.Marshal(in.Order)
	if err != nil {
		return OrderConfirmation{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.BaseURL+"/orders", bytes.NewReader(body))
	if err != nil {
		return OrderConfirmation{}, temporal.NewNonRetryableApplicationError("supplier URL: "+err.Error(), ErrTypeSupplierRefused, nil)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", in.IdempotencyKey)
	activity.GetLogger(ctx).Info("placing order", "reference", in.Order.Reference, "key", in.IdempotencyKey, "attempt", activity.GetInfo(ctx).Attempt)

	client := s.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return OrderConfirmation{}, fmt.Errorf("supplier at %s unreachable: %w", s.BaseURL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return OrderConfirmation{}, fmt.Errorf("read the supplier's answer: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated:
		var c OrderConfirmation
		if err := json.Unmarshal(raw, &c); err != nil || c.OrderID == "" {
			return OrderConfirmation{}, fmt.Errorf("the supplier's answer is not an order confirmation: %.200s", raw)
		}
		return c, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return OrderConfirmation{}, fmt.Errorf("supplier answered %s: %s", resp.Status, supplierError(raw))
	default:
		return OrderConfirmation{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the supplier refused the order (%s): %s", resp.Status, supplierError(raw)), ErrTypeSupplierRefused, nil)
	}
}

// supplierError is the reason in a supplier's error answer.
func supplierError(raw []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error != "" {
		return e.Error
	}
	return fmt.Sprintf("%.200s", raw)
}
