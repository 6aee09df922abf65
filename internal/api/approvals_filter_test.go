package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestApprovalFiltersRefuseWhatTemporalCannotCarry: GET /approvals refuses
// a filter value with invalid UTF-8 or a NUL with 400 before asking
// Temporal, whose gRPC client fails on the first (a 500) and stalls on the
// second until the deadline (a 500 after 10 seconds). Found by
// schemathesis (tests/schemathesis_test.go).
func TestApprovalFiltersRefuseWhatTemporalCannotCarry(t *testing.T) {
	srv := New(&canaryTemporal{}, testRegistry(t), Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"agent=%00", http.StatusBadRequest},
		{"context=a%00b", http.StatusBadRequest},
		{"group=%C3", http.StatusBadRequest},
	} {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/approvals?"+tc.query, nil))
		if rec.Code != tc.want {
			t.Errorf("GET /approvals?%s: %d %s, want %d", tc.query, rec.Code, rec.Body, tc.want)
		}
	}
}
