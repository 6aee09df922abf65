package resources

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/api/enums/v1"
)

// TestResourceIDs: an ID that can name no approval or waitpoint is refused
// as one that does not exist, before anything asks Temporal; a well-formed
// one names its task.
func TestResourceIDs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		parse  func(string) (string, error)
		id     string
		wantID string // "" wants the not-found refusal
	}{
		{"approval", approvalTask, "task-1-approval-2", "task-1"},
		{"approval without its number", approvalTask, "task-1-approval-x", ""},
		{"approval of no task", approvalTask, "-approval-2", ""},
		{"approval too long", approvalTask, strings.Repeat("t", 300) + "-approval-1", ""},
		{"approval of a task ID Temporal cannot carry", approvalTask, "task\x01-approval-1", ""},
		{"waitpoint", waitpointTask, "task-1-waitpoint-3", "task-1"},
		{"waitpoint of no task", waitpointTask, "waitpoint-3", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.parse(tc.id)
			if tc.wantID == "" {
				if !errors.Is(err, a2a.ErrTaskNotFound) || !strings.Contains(err.Error(), "does not exist") {
					t.Errorf("%q: %q, %v; want not found", tc.id, got, err)
				}
				return
			}
			if err != nil || got != tc.wantID {
				t.Errorf("%q: %q, %v; want task %q", tc.id, got, err, tc.wantID)
			}
		})
	}
}

// TestScheduleChecks: a schedule request's refusals come in the order of
// its fields, the first that is wrong answering; a valid request gets its
// defaults and the options that say when it runs.
func TestScheduleChecks(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	before := start.Add(-time.Hour)
	for _, tc := range []struct {
		name string
		req  ScheduleRequest
		want string // a part of the refusal; "" wants none
	}{
		{"valid", ScheduleRequest{Every: "1h"}, ""},
		{"name first", ScheduleRequest{Name: "-x", ContextID: "\x01", Overlap: "never"}, "name must be"},
		{"then the context", ScheduleRequest{ContextID: "\x01", Overlap: "never"}, "contextId must be"},
		{"then the overlap", ScheduleRequest{Overlap: "never", CatchupWindow: "1s"}, `overlap "never"`},
		{"then the catch-up window", ScheduleRequest{CatchupWindow: "1s"}, `catchupWindow "1s"`},
		{"cron or every", ScheduleRequest{Cron: "@daily", Every: "1h"}, "give one of cron"},
		{"no time zone in the cron", ScheduleRequest{Cron: "TZ=UTC 0 9 * * *"}, "give the time zone as timeZone"},
		{"every at least a second", ScheduleRequest{Every: "10ms"}, `every "10ms"`},
		{"an IANA time zone", ScheduleRequest{Every: "1h", TimeZone: "Mars/Olympus"}, `timeZone "Mars/Olympus"`},
		{"a jitter", ScheduleRequest{Every: "1h", Jitter: "soon"}, `jitter "soon"`},
		{"end after start", ScheduleRequest{Every: "1h", Start: &start, End: &before}, "end must be after start"},
		{"a short note, last", ScheduleRequest{Every: "1h", Note: strings.Repeat("n", 1001)}, "note is longer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			view, err := scheduleViewOf("alice", "echo", &tc.req)
			if err == nil {
				_, err = scheduleTiming(view)
			}
			if tc.want != "" {
				if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("refusal %v, want InvalidParams saying %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"skip", "1m", "ctx-" + view.ID}, []string{view.Overlap, view.CatchupWindow, view.ContextID}); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("a name is the owner's", func(t *testing.T) {
		a, _ := scheduleViewOf("alice", "echo", &ScheduleRequest{Name: "daily"})
		again, _ := scheduleViewOf("alice", "echo", &ScheduleRequest{Name: "daily"})
		bob, _ := scheduleViewOf("bob", "echo", &ScheduleRequest{Name: "daily"})
		if a.ID != again.ID || a.ID == bob.ID || !scheduleIDRe.MatchString(a.ID) {
			t.Errorf("IDs %s, %s (again), %s (bob's): want one per owner and name", a.ID, again.ID, bob.ID)
		}
	})
	t.Run("options", func(t *testing.T) {
		view, err := scheduleViewOf("alice", "echo", &ScheduleRequest{Cron: " 0 9 * * MON ", Overlap: "buffer-one", CatchupWindow: "24h", Jitter: "30s"})
		if err != nil {
			t.Fatal(err)
		}
		opts, err := scheduleTiming(view)
		if err != nil {
			t.Fatal(err)
		}
		if opts.Overlap != enums.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE || opts.CatchupWindow != 24*time.Hour ||
			!cmp.Equal(opts.Spec.CronExpressions, []string{"0 9 * * MON"}) || opts.Spec.Jitter != 30*time.Second {
			t.Errorf("options %+v, want buffer-one, 24h, the cron expression trimmed and a 30s jitter", opts)
		}
	})
}
