package fakesupplier

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func post(t *testing.T, h http.Handler, key, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(body))
	if key != "" {
		req.Header.Set(IdempotencyKeyHeader, key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("answer is not JSON: %s", rec.Body)
	}
	return rec.Code, out
}

const order = `{"reference":"PO-1","sku":"DESK-STAND","description":"Standing desk","quantity":3,"unitPrice":520,"currency":"EUR","costCentre":"CC-4100"}`

func TestOrdersAreDeduplicatedByKey(t *testing.T) {
	s := &Server{}
	code, first := post(t, s, "k1", order)
	if code != http.StatusCreated || first["orderId"] != "SUP-000001" {
		t.Fatalf("first order: %d %v", code, first)
	}
	code, again := post(t, s, "k1", order)
	if code != http.StatusOK || again["orderId"] != "SUP-000001" {
		t.Errorf("same key, same order: %d %v, want 200 with the first order", code, again)
	}
	code, other := post(t, s, "k1", strings.Replace(order, `"quantity":3`, `"quantity":4`, 1))
	if code != http.StatusConflict || !strings.Contains(other["error"].(string), "SUP-000001") {
		t.Errorf("same key, other order: %d %v, want 409 naming the first order", code, other)
	}
	if code, second := post(t, s, "k2", order); code != http.StatusCreated || second["orderId"] != "SUP-000002" {
		t.Errorf("another key: %d %v, want a second order", code, second)
	}
	if n, r := len(s.Orders()), s.Requests("k1"); n != 2 || r != 3 {
		t.Errorf("%d orders and %d requests with k1, want 2 and 3", n, r)
	}
}

func TestBadOrdersAreRefused(t *testing.T) {
	s := &Server{}
	tests := []struct {
		name, key, body string
		code            int
		says            string
	}{
		{"no key", "", order, http.StatusBadRequest, "Idempotency-Key"},
		{"not JSON", "k", "{", http.StatusBadRequest, "the body must be an order as JSON"},
		{"unknown field", "k", `{"sku":"X","colour":"red"}`, http.StatusBadRequest, `unknown field "colour"`},
		{"invalid", "k", `{"reference":"PO-1","sku":"X","quantity":0,"unitPrice":1,"currency":"EUR","costCentre":"CC-1"}`, http.StatusUnprocessableEntity, "quantity 0 is not between 1 and 10000"},
	}
	for _, tt := range tests {
		code, out := post(t, s, tt.key, tt.body)
		if code != tt.code || !strings.Contains(out["error"].(string), tt.says) {
			t.Errorf("%s: %d %v, want %d saying %q", tt.name, code, out, tt.code, tt.says)
		}
	}
	if n := len(s.Orders()); n != 0 {
		t.Errorf("%d orders taken from bad requests", n)
	}
}

func TestLostAnswers(t *testing.T) {
	s := &Server{LoseAnswers: 1}
	if code, _ := post(t, s, "k1", order); code != http.StatusServiceUnavailable {
		t.Fatalf("first answer: %d, want 503 (lost)", code)
	}
	if code, out := post(t, s, "k1", order); code != http.StatusOK || out["orderId"] != "SUP-000001" {
		t.Errorf("retry: %d %v, want the order taken the first time", code, out)
	}
	if n := len(s.Orders()); n != 1 {
		t.Errorf("%d orders, want 1", n)
	}
}
