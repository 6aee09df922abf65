// Package fakesupplier is a supplier's ordering API, small enough to read
// in one go, for the approval-pipeline example: it takes orders over HTTP
// and deduplicates them by their Idempotency-Key header, as real ordering
// APIs (Stripe, Adyen, most ERPs) do. cmd/fake-supplier serves it; the tests
// run it in process.
//
//	POST /orders   Idempotency-Key: KEY, body an Order
//	               201 with the Confirmation of a new order;
//	               200 with the same Confirmation when KEY was seen with the same order;
//	               409 when KEY was seen with another order;
//	               400 without a key or with a malformed body, 422 for an invalid order.
//	GET  /orders   {"orders": [...]}: every order taken, oldest first.
//
// Errors are JSON: {"error": "what is wrong"}.
package fakesupplier

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"
)

// IdempotencyKeyHeader carries the key that makes an order request safe to
// send again.
const IdempotencyKeyHeader = "Idempotency-Key"

// Order is the body of POST /orders.
type Order struct {
	// Reference is the buyer's purchase-order number.
	Reference   string  `json:"reference"`
	SKU         string  `json:"sku"`
	Description string  `json:"description"`
	Quantity    int     `json:"quantity"`
	UnitPrice   float64 `json:"unitPrice"`
	Currency    string  `json:"currency"`
	CostCentre  string  `json:"costCentre"`
	QuoteID     string  `json:"quoteId,omitempty"`
}

// Confirmation is the supplier's answer to an order.
type Confirmation struct {
	OrderID        string    `json:"orderId"`
	Status         string    `json:"status"`
	IdempotencyKey string    `json:"idempotencyKey"`
	Received       time.Time `json:"received"`
	Order          Order     `json:"order"`
}

// Server is the fake supplier. The zero value is ready; it is safe for
// concurrent use.
type Server struct {
	// LoseAnswers makes the first LoseAnswers new orders get lost on the
	// way back: the order is taken, but the answer is a 503, as when the
	// network fails after the supplier committed. The buyer retries with the
	// same key and gets the order it placed, not a second one.
	LoseAnswers int
	// Logger, when set, logs every request.
	Logger *slog.Logger

	mu       sync.Mutex
	orders   []Confirmation
	byKey    map[string]int // index in orders
	requests map[string]int // POST /orders per key, duplicates included
	lost     int
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/orders" && r.Method == http.MethodPost:
		s.placeOrder(w, r)
	case r.URL.Path == "/orders" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"orders": s.Orders()})
	case r.URL.Path == "/orders":
		w.Header().Set("Allow", "GET, POST")
		writeError(w, http.StatusMethodNotAllowed, "use GET or POST on /orders")
	case r.URL.Path == "/healthz":
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	default:
		writeError(w, http.StatusNotFound, "no such endpoint: try POST /orders or GET /orders")
	}
}

func (s *Server) placeOrder(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSpace(r.Header.Get(IdempotencyKeyHeader))
	if key == "" || len(key) > 255 {
		writeError(w, http.StatusBadRequest, "an order needs an "+IdempotencyKeyHeader+" header of 1 to 255 characters")
		return
	}
	var o Order
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		writeError(w, http.StatusBadRequest, "the body must be an order as JSON: "+err.Error())
		return
	}
	if err := validate(o); err != nil {
		writeError(w, http.StatusUnprocessableEntity, err.Error())
		return
	}

	s.mu.Lock()
	if s.byKey == nil {
		s.byKey, s.requests = map[string]int{}, map[string]int{}
	}
	s.requests[key]++
	if i, seen := s.byKey[key]; seen {
		c := s.orders[i]
		s.mu.Unlock()
		if !reflect.DeepEqual(c.Order, o) {
			s.log("order refused: key reused for another order", "key", key)
			writeError(w, http.StatusConflict, fmt.Sprintf("%s %q was used for order %s with other contents", IdempotencyKeyHeader, key, c.OrderID))
			return
		}
		s.log("order request repeated: answered with the order already taken", "key", key, "order", c.OrderID)
		w.Header().Set("Idempotent-Replayed", "true")
		writeJSON(w, http.StatusOK, c)
		return
	}
	c := Confirmation{
		OrderID: fmt.Sprintf("SUP-%06d", len(s.orders)+1), Status: "accepted",
		IdempotencyKey: key, Received: time.Now().UTC(), Order: o,
	}
	s.byKey[key] = len(s.orders)
	s.orders = append(s.orders, c)
	lose := s.lost < s.LoseAnswers
	if lose {
		s.lost++
	}
	s.mu.Unlock()

	if lose {
		s.log("order taken, answer lost on purpose (LoseAnswers)", "key", key, "order", c.OrderID)
		writeError(w, http.StatusServiceUnavailable, "the answer got lost on its way back (fake-supplier -lose-answers); send the order again with the same key")
		return
	}
	s.log("order taken", "key", key, "order", c.OrderID, "reference", o.Reference, "sku", o.SKU, "quantity", o.Quantity)
	writeJSON(w, http.StatusCreated, c)
}

func validate(o Order) error {
	var problems []string
	if strings.TrimSpace(o.Reference) == "" {
		problems = append(problems, "reference is required")
	}
	if strings.TrimSpace(o.SKU) == "" {
		problems = append(problems, "sku is required")
	}
	if o.Quantity < 1 || o.Quantity > 10000 {
		problems = append(problems, fmt.Sprintf("quantity %d is not between 1 and 10000", o.Quantity))
	}
	if o.UnitPrice <= 0 {
		problems = append(problems, "unitPrice must be positive")
	}
	if len(o.Currency) != 3 {
		problems = append(problems, fmt.Sprintf("currency %q is not a three-letter code", o.Currency))
	}
	if strings.TrimSpace(o.CostCentre) == "" {
		problems = append(problems, "costCentre is required")
	}
	if len(problems) > 0 {
		return fmt.Errorf("invalid order: %s", strings.Join(problems, "; "))
	}
	return nil
}

// Orders returns every order taken, oldest first.
func (s *Server) Orders() []Confirmation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Confirmation{}, s.orders...)
}

// Requests returns how many order requests came with key, repeated ones
// included.
func (s *Server) Requests(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[key]
}

func (s *Server) log(msg string, args ...any) {
	if s.Logger != nil {
		s.Logger.Info(msg, args...)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
