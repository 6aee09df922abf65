package workflows

import (
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/internal/link"
)

func TestBudgetAttempts(t *testing.T) {
	tests := []struct {
		budget time.Duration
		want   int32
	}{
		{0, 1},
		{999 * time.Millisecond, 1},
		{time.Second, 2},     // 0, 1 s
		{6 * time.Second, 3}, // 0, 1, 3 s; the next (7 s) would pass 6 s
		{7 * time.Second, 4}, // 0, 1, 3, 7 s
		{31 * time.Second, 6},
		{link.DefaultRetryBudget, 14}, // 0, 1, 3, 7, 15, 31, then every 30 s to 271 s
		{time.Hour, 1 + 5 + (3600-31)/30},
	}
	for _, tt := range tests {
		if got := budgetAttempts(tt.budget); got != tt.want {
			t.Errorf("budgetAttempts(%s) = %d, want %d", tt.budget, got, tt.want)
		}
	}
}
