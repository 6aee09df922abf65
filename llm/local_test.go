package llm

import (
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// TestLocalActivityOptions: a call made as a local activity keeps its
// activity options' timeouts and retry policy, and its attempts are
// bounded as the retry policy bounds them (the SDK would stop a local
// activity's retries once its first attempt's StartToCloseTimeout passed).
func TestLocalActivityOptions(t *testing.T) {
	lo := localActivityOptions(DefaultActivityOptions, "turn 1: user: hi\nthere")
	if lo.StartToCloseTimeout != 2*time.Minute || lo.RetryPolicy != DefaultActivityOptions.RetryPolicy || lo.Summary != "turn 1: user: hi there" {
		t.Errorf("local activity options %+v, want the default activity options' timeout, retry policy and the summary on one line", lo)
	}
	// Ten attempts of 2 minutes, and the backoffs between them: 2, 4, 8,
	// 16, 32, 64 s, then 2 minutes three times.
	if want := 10*2*time.Minute + (2+4+8+16+32+64+3*120)*time.Second; lo.ScheduleToCloseTimeout != want {
		t.Errorf("ScheduleToCloseTimeout = %v, want %v", lo.ScheduleToCloseTimeout, want)
	}
	for _, tt := range []struct {
		name string
		ao   workflow.ActivityOptions
		want time.Duration
	}{
		{"its own bound", workflow.ActivityOptions{StartToCloseTimeout: time.Minute, ScheduleToCloseTimeout: 5 * time.Minute}, 5 * time.Minute},
		{"unlimited attempts", workflow.ActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{}}, 24 * time.Hour},
		{"no retry policy", workflow.ActivityOptions{StartToCloseTimeout: time.Minute}, 24 * time.Hour},
		{"one attempt", workflow.ActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}}, time.Minute},
		{"huge backoff", workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Hour, BackoffCoefficient: 100, MaximumAttempts: 50}}, 24 * time.Hour},
	} {
		if got := localActivityOptions(tt.ao, "").ScheduleToCloseTimeout; got != tt.want {
			t.Errorf("%s: ScheduleToCloseTimeout = %v, want %v", tt.name, got, tt.want)
		}
	}
}
