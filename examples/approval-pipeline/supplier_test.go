package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// TestPlaceOrderErrors checks which supplier answers Temporal retries.
func TestPlaceOrderErrors(t *testing.T) {
	tests := []struct {
		status    int
		body      string
		retryable bool
		says      string
	}{
		{http.StatusServiceUnavailable, `{"error":"down for maintenance"}`, true, "down for maintenance"},
		{http.StatusTooManyRequests, `{"error":"slow down"}`, true, "slow down"},
		{http.StatusUnprocessableEntity, `{"error":"HEADSET is out of stock"}`, false, "the supplier refused the order (422 Unprocessable Entity): HEADSET is out of stock"},
		{http.StatusCreated, `not json`, true, "not an order confirmation"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Idempotency-Key") != "task-1/place-order" {
					t.Errorf("Idempotency-Key = %q", r.Header.Get("Idempotency-Key"))
				}
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			s := &Supplier{BaseURL: srv.URL}
			env.RegisterActivity(s.PlaceOrder)
			_, err := env.ExecuteActivity(s.PlaceOrder, PlaceOrderInput{IdempotencyKey: "task-1/place-order", Order: Order{Reference: "PO-1"}})
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("error %v, want one saying %q", err, tt.says)
			}
			var app *temporal.ApplicationError
			nonRetryable := errors.As(err, &app) && app.NonRetryable()
			if nonRetryable == tt.retryable {
				t.Errorf("error %v: retryable %v, want %v", err, !nonRetryable, tt.retryable)
			}
		})
	}
}

func TestNewSupplier(t *testing.T) {
	if s, err := NewSupplier(""); err != nil || s.BaseURL != DefaultSupplierURL {
		t.Errorf("NewSupplier(\"\") = %+v, %v; want the default", s, err)
	}
	if s, err := NewSupplier("http://erp.example:8443/api/"); err != nil || s.BaseURL != "http://erp.example:8443/api" {
		t.Errorf("NewSupplier = %+v, %v", s, err)
	}
	for _, bad := range []string{"localhost:9090", "ftp://x", "http://"} {
		if _, err := NewSupplier(bad); err == nil || !strings.Contains(err.Error(), "SUPPLIER_URL") {
			t.Errorf("NewSupplier(%q) error %v, want one naming SUPPLIER_URL", bad, err)
		}
	}
}
