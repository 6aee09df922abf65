package server

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/webhook"
)

func TestApprovalWebhooksConfig(t *testing.T) {
	t.Setenv("A2AFLOW_APPROVAL_WEBHOOK_TOKEN_LINE_MANAGERS", "s3cret")
	loopback, err := webhook.ParsePolicy([]string{"loopback"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		spec      string
		inbox     string
		apiURL    string
		policy    *webhook.Policy
		wantHooks map[string]activities.ApprovalWebhook
		wantInbox string
		wantErr   string
	}{
		{name: "none", wantHooks: map[string]activities.ApprovalWebhook{}},
		{
			name: "two groups, a token from the environment, the inbox from the API address",
			spec: " finance=https://hooks.example/finance?k=v , line-managers=https://hooks.example/m ", apiURL: "http://localhost:8080/",
			wantHooks: map[string]activities.ApprovalWebhook{
				"finance":       {URL: "https://hooks.example/finance?k=v"},
				"line-managers": {URL: "https://hooks.example/m", Token: "s3cret"},
			},
			wantInbox: "http://localhost:8080/inbox",
		},
		{
			name: "an explicit inbox wins", spec: "finance=http://127.0.0.1:9/x", inbox: "https://inbox.example/inbox",
			apiURL: "http://localhost:8080", policy: loopback,
			wantHooks: map[string]activities.ApprovalWebhook{"finance": {URL: "http://127.0.0.1:9/x"}},
			wantInbox: "https://inbox.example/inbox",
		},
		{name: "no URL", spec: "finance", wantErr: `entry "finance": want group=https://...`},
		{name: "no group", spec: "=https://hooks.example", wantErr: "want group=https://"},
		{name: "not http", spec: "finance=ftp://hooks.example", wantErr: "the scheme must be http or https"},
		{name: "twice", spec: "finance=https://a.example,finance=https://b.example", wantErr: "group finance has two webhooks"},
		{name: "loopback without the allow-list", spec: "finance=http://127.0.0.1:9/x", wantErr: "see --push-allow-hosts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := approvalWebhooksConfig{Spec: tt.spec, InboxURL: tt.inbox}
			err := c.build(tt.policy, tt.apiURL, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantHooks, c.hooks); diff != "" {
				t.Errorf("hooks (-want +got):\n%s", diff)
			}
			if c.InboxURL != tt.wantInbox {
				t.Errorf("inbox = %q, want %q", c.InboxURL, tt.wantInbox)
			}
		})
	}
}
