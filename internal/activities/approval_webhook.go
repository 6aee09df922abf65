package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/metrics"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/webhook"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// ApprovalWebhook is the webhook of one approver group.
type ApprovalWebhook struct {
	// URL receives the notices, POSTed as JSON.
	URL string
	// Token, when set, is sent as "Authorization: Bearer <Token>".
	Token string
}

// ApprovalWebhookNotice is the JSON body an approval webhook receives: the
// approval that waits for the group, and a link to the group's inbox.
type ApprovalWebhookNotice struct {
	wire.ApprovalNotice
	// InboxURL opens the inbox on the group's pending approvals, when the
	// worker knows where the inbox is.
	InboxURL string `json:"inboxUrl,omitempty"`
}

// ApprovalWebhooks tells approver groups that an approval waits for them.
// Register it with worker.RegisterActivity(&activities.ApprovalWebhooks{...});
// the task workflow calls NotifyApprovalWebhook by its name,
// wire.ActivityNotifyApprovalWebhook, for every group an approval asks.
// The webhooks and their tokens live here, in the worker's configuration,
// never in workflow history. The zero value notifies nobody.
type ApprovalWebhooks struct {
	// Hooks maps an approver group to its webhook; a group without one is
	// not notified.
	Hooks map[string]ApprovalWebhook
	// Policy decides which addresses the webhooks may reach, as for push
	// notifications; nil allows public addresses only. Every dialed address
	// is checked, including redirects, which are followed only to the same
	// host. Unused when Outbound is set.
	Policy *webhook.Policy
	// Outbound makes the deliveries; nil makes one from Policy.
	Outbound *outbound.Client
	// InboxURL is the inbox page, e.g. "https://a2aflow.example/inbox"; each
	// notice links to it with ?group=<group>. Empty sends no link.
	InboxURL string
	// Timeout bounds one HTTP attempt; default 10 seconds.
	Timeout time.Duration

	once     sync.Once
	delivery *Webhooks // its HTTP client: the outbound client's dialer and redirect rules
}

// NotifyApprovalWebhook POSTs the notice to the webhook of its group, as an
// [ApprovalWebhookNotice] with the group's bearer token, and returns nil at
// once for a group without a webhook. A 2xx answer is success. Network
// errors, timeouts, 408, 429 and 5xx are retried by Temporal (honouring
// Retry-After); other 4xx answers and forbidden addresses are not.
func (w *ApprovalWebhooks) NotifyApprovalWebhook(ctx context.Context, in wire.ApprovalNotice) error {
	hook, ok := w.Hooks[in.Group]
	if !ok || hook.URL == "" {
		return nil
	}
	where := webhook.Redact(hook.URL)
	if _, err := webhook.ParseURL(hook.URL); err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("approval webhook of group %s: %v", in.Group, err), ErrTypeWebhookConfig, nil)
	}
	body, err := json.Marshal(ApprovalWebhookNotice{ApprovalNotice: in, InboxURL: w.inboxURL(in.Group)})
	if err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("encode notice of approval %s: %v", in.ApprovalID, err), ErrTypeWebhookConfig, nil)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(body))
	if err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("approval webhook %s: %v", where, err), ErrTypeWebhookConfig, nil)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "a2aflow")
	// The same for every attempt, so a receiver can drop a repeat; an
	// escalation to the same group is a new notice.
	key := in.ApprovalID + ":" + in.Group
	if in.Escalated {
		key += ":escalated"
	}
	req.Header.Set(HeaderIdempotencyKey, key)
	if hook.Token != "" {
		if err := webhook.CheckAuth("Bearer", hook.Token, ""); err != nil {
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("approval webhook of group %s: %v", in.Group, err), ErrTypeWebhookConfig, nil)
		}
		req.Header.Set("Authorization", "Bearer "+hook.Token)
	}

	err = post(w.httpClient(), req, hook.URL, "approval webhook "+where)
	metrics.WebhookDelivery(metrics.WebhookApproval, err)
	return err
}

func (w *ApprovalWebhooks) httpClient() *http.Client {
	w.once.Do(func() { w.delivery = &Webhooks{Policy: w.Policy, Outbound: w.Outbound, Timeout: w.Timeout} })
	return w.delivery.httpClient()
}

// inboxURL links to the inbox filtered by group, or is empty.
func (w *ApprovalWebhooks) inboxURL(group string) string {
	if w.InboxURL == "" {
		return ""
	}
	u, err := url.Parse(w.InboxURL)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("group", group)
	u.RawQuery = q.Encode()
	return u.String()
}
