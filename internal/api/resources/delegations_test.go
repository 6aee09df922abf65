package resources

import (
	"strings"
	"testing"
	"time"
)

// TestCheckDelegation: a delegation request is refused with a reason for
// each fault, and a good one is recorded as the caller's, from now.
func TestCheckDelegation(t *testing.T) {
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	later := now.Add(time.Hour)
	for _, tc := range []struct {
		name string
		req  DelegationRequest
		want string // "" accepted
	}{
		{"good", DelegationRequest{To: "dana", End: later}, ""},
		{"no one", DelegationRequest{End: later}, "to names who"},
		{"oneself", DelegationRequest{To: "carl", End: later}, "to themselves"},
		{"no end", DelegationRequest{To: "dana"}, "end is required"},
		{"ended", DelegationRequest{To: "dana", End: now.Add(-time.Minute), Start: ptrTime(now.Add(-time.Hour))}, "in the past"},
		{"backwards", DelegationRequest{To: "dana", End: later, Start: ptrTime(later.Add(time.Hour))}, "after start"},
		{"too long", DelegationRequest{To: "dana", End: now.Add(400 * 24 * time.Hour)}, "366 days"},
		{"a NUL", DelegationRequest{To: "da\x00na", End: later}, "without NUL"},
		{"not UTF-8", DelegationRequest{To: "dana", End: later, Reason: "\xff"}, "UTF-8"},
	} {
		d, err := checkDelegation(tc.req, "carl", now)
		switch {
		case tc.want == "" && (err != nil || d.From != "carl" || d.CreatedBy != "carl" || !d.Start.Equal(now)):
			t.Errorf("%s: %+v, %v", tc.name, d, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

func ptrTime(t time.Time) *time.Time { return &t }
