package activities_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// notifyApprovers runs NotifyApprovalWebhook in a test activity environment.
func notifyApprovers(t *testing.T, w *activities.ApprovalWebhooks, in wire.ApprovalNotice) error {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(w)
	_, err := env.ExecuteActivity(wire.ActivityNotifyApprovalWebhook, in)
	return err
}

func approvalNotice(group string) wire.ApprovalNotice {
	deadline := time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)
	return wire.ApprovalNotice{
		Group: group, ApprovalID: "task-1-approval-1", TaskID: "task-1", Agent: "expenses",
		Title: "Expense of 250.00 EUR: conference", Details: "Over the limit.",
		Groups: []string{"finance"}, Deadline: &deadline,
	}
}

func TestNotifyApprovalWebhookPostsTheNotice(t *testing.T) {
	rc := &receiver{}
	srv := serveOn(t, "127.0.0.1:0", rc)
	escalated := approvalNotice("managers")
	escalated.Groups, escalated.Escalated = []string{"managers"}, true

	tests := []struct {
		name     string
		w        *activities.ApprovalWebhooks
		notice   wire.ApprovalNotice
		wantBody map[string]any
		wantAuth string
		wantKey  string
	}{
		{
			name: "with a token and the inbox",
			w: &activities.ApprovalWebhooks{
				Policy:   mustPolicy(t, "loopback"),
				Hooks:    map[string]activities.ApprovalWebhook{"finance": {URL: srv.URL + "/finance?k=v", Token: "s3cret"}},
				InboxURL: "https://a2aflow.example/inbox",
			},
			notice: approvalNotice("finance"),
			wantBody: map[string]any{
				"group": "finance", "approvalId": "task-1-approval-1", "taskId": "task-1", "agent": "expenses",
				"title": "Expense of 250.00 EUR: conference", "details": "Over the limit.",
				"groups": []any{"finance"}, "deadline": "2026-03-04T09:00:00Z",
				"inboxUrl": "https://a2aflow.example/inbox?group=finance",
			},
			wantAuth: "Bearer s3cret",
			wantKey:  "task-1-approval-1:finance",
		},
		{
			name: "escalated, without token or inbox",
			w: &activities.ApprovalWebhooks{
				Policy: mustPolicy(t, "loopback"),
				Hooks:  map[string]activities.ApprovalWebhook{"managers": {URL: srv.URL + "/managers"}},
			},
			notice: escalated,
			wantBody: map[string]any{
				"group": "managers", "approvalId": "task-1-approval-1", "taskId": "task-1", "agent": "expenses",
				"title": "Expense of 250.00 EUR: conference", "details": "Over the limit.",
				"groups": []any{"managers"}, "deadline": "2026-03-04T09:00:00Z", "escalated": true,
			},
			wantKey: "task-1-approval-1:managers:escalated",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(rc.got())
			if err := notifyApprovers(t, tt.w, tt.notice); err != nil {
				t.Fatal(err)
			}
			got := rc.got()
			if len(got) != before+1 {
				t.Fatalf("webhook got %d requests, want 1", len(got)-before)
			}
			req := got[len(got)-1]
			var body map[string]any
			if err := json.Unmarshal(req.body, &body); err != nil {
				t.Fatalf("body %q: %v", req.body, err)
			}
			if diff := cmp.Diff(tt.wantBody, body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			gotHeaders := map[string]string{
				"Authorization":   req.header.Get("Authorization"),
				"Content-Type":    req.header.Get("Content-Type"),
				"Idempotency-Key": req.header.Get("Idempotency-Key"),
			}
			wantHeaders := map[string]string{"Authorization": tt.wantAuth, "Content-Type": "application/json", "Idempotency-Key": tt.wantKey}
			if diff := cmp.Diff(wantHeaders, gotHeaders); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNotifyApprovalWebhookWithoutWebhookSendsNothing(t *testing.T) {
	rc := &receiver{}
	srv := serveOn(t, "127.0.0.1:0", rc)
	for _, w := range []*activities.ApprovalWebhooks{
		{},
		{Policy: mustPolicy(t, "loopback"), Hooks: map[string]activities.ApprovalWebhook{"finance": {URL: srv.URL}}},
	} {
		if err := notifyApprovers(t, w, approvalNotice("managers")); err != nil {
			t.Errorf("group without a webhook: %v, want nil", err)
		}
	}
	if n := len(rc.got()); n != 0 {
		t.Errorf("webhook got %d requests, want none", n)
	}
}

func TestNotifyApprovalWebhookFailures(t *testing.T) {
	tests := []struct {
		name          string
		status        int
		allow         []string
		wantType      string
		wantRetryable bool
		wantRequests  int
	}{
		{name: "500 is retried", status: http.StatusInternalServerError, allow: []string{"loopback"}, wantType: "WebhookUnavailable", wantRetryable: true, wantRequests: 1},
		{name: "503 is retried", status: http.StatusServiceUnavailable, allow: []string{"loopback"}, wantType: "WebhookUnavailable", wantRetryable: true, wantRequests: 1},
		{name: "408 is retried", status: http.StatusRequestTimeout, allow: []string{"loopback"}, wantType: "WebhookUnavailable", wantRetryable: true, wantRequests: 1},
		{name: "429 is retried", status: http.StatusTooManyRequests, allow: []string{"loopback"}, wantType: "WebhookUnavailable", wantRetryable: true, wantRequests: 1},
		{name: "400 is final", status: http.StatusBadRequest, allow: []string{"loopback"}, wantType: activities.ErrTypeWebhookRejected, wantRequests: 1},
		{name: "404 is final", status: http.StatusNotFound, allow: []string{"loopback"}, wantType: activities.ErrTypeWebhookRejected, wantRequests: 1},
		{name: "a loopback webhook without the allow-list is refused", status: http.StatusOK, wantType: activities.ErrTypeWebhookForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &receiver{status: tt.status}
			srv := serveOn(t, "127.0.0.1:0", rc)
			w := &activities.ApprovalWebhooks{
				Policy: mustPolicy(t, tt.allow...),
				Hooks:  map[string]activities.ApprovalWebhook{"finance": {URL: srv.URL, Token: "s3cret"}},
			}
			err := notifyApprovers(t, w, approvalNotice("finance"))
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) {
				t.Fatalf("error = %v, want an application error", err)
			}
			type outcome struct {
				Type      string
				Retryable bool
				Requests  int
			}
			want := outcome{tt.wantType, tt.wantRetryable, tt.wantRequests}
			got := outcome{appErr.Type(), !appErr.NonRetryable(), len(rc.got())}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}
