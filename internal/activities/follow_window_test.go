package activities

import (
	"testing"
	"time"
)

func TestFollowFor(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		window   time.Duration
		deadline time.Time
		want     time.Duration
	}{
		{"no deadline", time.Hour, time.Time{}, time.Hour},
		{"unset window", 0, time.Time{}, time.Hour},
		{"deadline far", time.Hour, now.Add(61 * time.Minute), time.Hour},
		// A follow scheduled with a ScheduleToClose timeout and retried
		// 50 minutes in: it ends before Temporal would time it out.
		{"deadline near", time.Hour, now.Add(10 * time.Minute), 10*time.Minute - followMargin},
		{"deadline within the margin", time.Hour, now.Add(5 * time.Second), 0},
		{"deadline passed", time.Hour, now.Add(-time.Minute), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := followFor(tt.window, tt.deadline, now); got != tt.want {
				t.Errorf("followFor(%s, %v) = %s, want %s", tt.window, tt.deadline, got, tt.want)
			}
		})
	}
}
