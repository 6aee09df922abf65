package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/metrics"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/pushtoken"
	"github.com/a2aflow/a2aflow/internal/webhook"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// Application error types of DeliverPushNotification failures that are not
// retried: retrying would get the same answer.
const (
	// ErrTypeWebhookForbidden: the webhook's address is refused by the policy.
	ErrTypeWebhookForbidden = "WebhookForbidden"
	// ErrTypeWebhookRejected: the webhook answered a 4xx other than 408 and 429.
	ErrTypeWebhookRejected = "WebhookRejected"
	// ErrTypeWebhookConfig: the stored config cannot be used (bad URL,
	// credentials that do not open with the secrets key).
	ErrTypeWebhookConfig = "WebhookConfig"
)

// Header names a webhook receives besides Authorization and Content-Type.
const (
	// HeaderNotificationToken carries the config's token. A2A does not name
	// the header; a2a-go reads this spelling...
	HeaderNotificationToken = "A2A-Notification-Token"
	// HeaderNotificationTokenX ...and the Python SDK this one; both are sent.
	HeaderNotificationTokenX = "X-A2A-Notification-Token"
	// HeaderIdempotencyKey is "{taskId}:{seq}": the same for every attempt to
	// deliver one event, so a receiver can drop a repeat.
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderNotificationJWT carries the delivery's signed token when the
	// worker has a signing key (Webhooks.Signer; package pushverify checks
	// it).
	HeaderNotificationJWT = pushtoken.Header
)

// MetadataEventSeq is the key, in the metadata of the pushed status or
// artifact update, of the event's number within its task: 1, 2, 3... in the
// order the task emitted them. It matches the API's task snapshots.
const MetadataEventSeq = "a2aflowEventSeq"

// maxRetryAfter caps how long a webhook's Retry-After may delay a retry.
const maxRetryAfter = 10 * time.Minute

// Webhooks delivers A2A push notifications. Register it with
// worker.RegisterActivity(&activities.Webhooks{...}); the task workflow calls
// DeliverPushNotification by its name, wire.ActivityDeliverPush.
type Webhooks struct {
	// Policy decides which addresses webhooks may reach; nil allows public
	// addresses only. Every dialed address is checked, including redirects,
	// which are followed only to the same host (outbound.Client). Unused
	// when Outbound is set.
	Policy *webhook.Policy
	// Outbound makes the deliveries; nil makes one from Policy.
	Outbound *outbound.Client
	// Sealer opens the sealed token and credentials of a config; nil reads
	// them as stored (and fails on sealed ones).
	Sealer *webhook.Sealer
	// Timeout bounds one HTTP attempt; default 10 seconds (outbound.Webhook).
	Timeout time.Duration
	// Signer, when set, signs every delivery attempt: a JWT minted here, in
	// the worker (never in workflow code, so neither the key nor a token
	// reaches history), naming the task, the event's number, the webhook
	// and the SHA-256 of the exact body, valid for pushtoken.Lifetime. It
	// goes in the A2A-Notification-JWT header, and in Authorization: Bearer
	// when the config asks for the Bearer scheme without credentials of its
	// own. Nil sends no token.
	Signer *cardsign.Signer
	// Issuer is the tokens' iss: the server's public base URL, below which
	// /.well-known/jwks.json serves Signer's public key. Required with
	// Signer.
	Issuer string

	once   sync.Once
	client *http.Client
}

func (w *Webhooks) httpClient() *http.Client {
	w.once.Do(func() {
		out := w.Outbound
		if out == nil {
			out = outbound.New(outbound.Options{Policy: w.Policy})
		}
		use := outbound.Webhook
		if w.Timeout > 0 {
			use.Timeout, use.HeaderTimeout = w.Timeout, w.Timeout
		}
		w.client = out.HTTPClient(use)
	})
	return w.client
}

// DeliverPushNotification POSTs one task event to one webhook as an A2A
// StreamResponse, with the config's Authorization and token, and a signed
// token of the delivery when the worker has a Signer. A 2xx answer
// is success. Network errors, timeouts, 408, 429 and 5xx are retried by
// Temporal (honouring Retry-After); other 4xx answers and forbidden
// addresses are not.
func (w *Webhooks) DeliverPushNotification(ctx context.Context, in wire.PushDelivery) error {
	where := webhook.Redact(in.Config.URL)
	if _, err := webhook.ParseURL(in.Config.URL); err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeWebhookConfig, nil)
	}
	sr, err := streamResponse(in.Event)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeWebhookConfig, nil)
	}
	body, err := json.Marshal(sr)
	if err == nil && in.Generation {
		body, err = withGeneration(body, wire.Generation(in.Event.Seq))
	}
	if err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("encode event %d: %v", in.Event.Seq, err), ErrTypeWebhookConfig, nil)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.Config.URL, bytes.NewReader(body))
	if err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("webhook %s: %v", where, err), ErrTypeWebhookConfig, nil)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "a2aflow")
	req.Header.Set(HeaderIdempotencyKey, fmt.Sprintf("%s:%d", taskIDOf(in), in.Event.Seq))
	token, err := w.sign(in, body)
	if err != nil {
		// A key that cannot sign is the worker's configuration, not the
		// webhook's: retried, so that a fixed worker delivers.
		return fmt.Errorf("webhook %s: %w", where, err)
	}
	if err := w.authorize(req, in.Config, token); err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("webhook %s: %v", where, err), ErrTypeWebhookConfig, nil)
	}

	err = post(w.httpClient(), req, in.Config.URL, "webhook "+where)
	metrics.WebhookDelivery(metrics.WebhookPush, err)
	return err
}

// post sends req and classifies the outcome for Temporal's retries: 2xx is
// done; a network error, 408, 429 and 5xx are retried (honouring
// Retry-After); a refused address, a refused redirect (to another host, or
// too many) and any other status are not. what names the webhook in errors,
// and the URL (which may carry a secret in its query) is replaced by it in
// transport errors.
func post(client *http.Client, req *http.Request, url, what string) error {
	resp, err := client.Do(req)
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), url, what)
		switch {
		case errors.Is(err, outbound.ErrForbiddenAddress):
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s refused: %s", what, msg), ErrTypeWebhookForbidden, nil)
		case errors.Is(err, outbound.ErrRedirectRefused):
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: %s", what, msg), ErrTypeWebhookRejected, nil)
		}
		return fmt.Errorf("%s: %s", what, msg)
	}
	defer resp.Body.Close()
	// Read (up to outbound.Webhook's bound) so the connection is reused.
	_, _ = io.Copy(io.Discard, resp.Body)

	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return nil
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		return temporal.NewApplicationErrorWithOptions(
			fmt.Sprintf("%s answered %s", what, resp.Status), "WebhookUnavailable",
			temporal.ApplicationErrorOptions{NextRetryDelay: retryAfter(resp.Header.Get("Retry-After"))})
	default:
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%s answered %s", what, resp.Status), ErrTypeWebhookRejected, nil)
	}
}

// sign returns the signed token of one attempt to deliver in's event with
// body, or "" without a Signer.
func (w *Webhooks) sign(in wire.PushDelivery, body []byte) (string, error) {
	if w.Signer == nil {
		return "", nil
	}
	if w.Issuer == "" {
		return "", errors.New("push notifications are signed but the worker has no public URL (--public-url) to name as their issuer")
	}
	claims := pushtoken.New(strings.TrimSuffix(w.Issuer, "/"), webhook.Redact(in.Config.URL),
		string(taskIDOf(in)), in.Event.Seq, body, time.Now())
	token, err := w.Signer.SignJWT(claims, pushtoken.Type)
	if err != nil {
		return "", fmt.Errorf("sign the notification: %w", err)
	}
	return token, nil
}

// authorize sets the Authorization and token headers from c, opening its
// sealed secrets, and the signed token when there is one. A scheme without
// credentials sends no Authorization, but Bearer with a signed token: A2A's
// push notification guidance has the client ask for the Bearer scheme and
// the server send its JWT there.
func (w *Webhooks) authorize(req *http.Request, c a2a.PushConfig, signed string) error {
	if signed != "" {
		req.Header.Set(HeaderNotificationJWT, signed)
	}
	token, err := w.Sealer.Open(c.Token, c.TaskID, c.ID)
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	if err := webhook.CheckAuth("", "", token); err != nil {
		return err
	}
	if token != "" {
		req.Header.Set(HeaderNotificationToken, token)
		req.Header.Set(HeaderNotificationTokenX, token)
	}
	if c.Auth != nil && c.Auth.Credentials == "" && signed != "" && strings.EqualFold(c.Auth.Scheme, "bearer") {
		req.Header.Set("Authorization", "Bearer "+signed)
		return nil
	}
	if c.Auth == nil || c.Auth.Credentials == "" {
		return nil
	}
	creds, err := w.Sealer.Open(c.Auth.Credentials, c.TaskID, c.ID)
	if err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	if err := webhook.CheckAuth(c.Auth.Scheme, creds, token); err != nil {
		return err
	}
	scheme := c.Auth.Scheme
	if strings.EqualFold(scheme, "bearer") {
		scheme = "Bearer"
	} else if strings.EqualFold(scheme, "basic") {
		scheme = "Basic"
	}
	req.Header.Set("Authorization", scheme+" "+creds)
	return nil
}

// streamResponse returns e as the StreamResponse a webhook receives, its
// number in the event's metadata.
func streamResponse(e wire.Event) (a2a.StreamResponse, error) {
	withSeq := func(m map[string]any) map[string]any {
		out := make(map[string]any, len(m)+1)
		maps.Copy(out, m)
		out[MetadataEventSeq] = e.Seq
		return out
	}
	if e.Artifact != nil {
		a := *e.Artifact
		a.Metadata = withSeq(a.Metadata)
		return a2a.StreamResponse{Event: &a}, nil
	}
	if e.Status == nil {
		return a2a.StreamResponse{}, fmt.Errorf("event %d has neither a status nor an artifact", e.Seq)
	}
	s := *e.Status
	s.Metadata = withSeq(s.Metadata)
	return a2a.StreamResponse{Event: &s}, nil
}

// withGeneration gives the event of body, a StreamResponse's JSON, A2A
// 1.1's generation field, in ProtoJSON's form of an int64 (a string), as
// the API writes it for 1.1 streams (a2abinding/v11.go).
func withGeneration(body []byte, gen int64) ([]byte, error) {
	var sr map[string]json.RawMessage
	if err := json.Unmarshal(body, &sr); err != nil {
		return nil, err
	}
	for _, kind := range []string{"statusUpdate", "artifactUpdate"} {
		raw, ok := sr[kind]
		if !ok {
			continue
		}
		var event map[string]json.RawMessage
		if err := json.Unmarshal(raw, &event); err != nil {
			return nil, err
		}
		event["generation"], _ = json.Marshal(strconv.FormatInt(gen, 10))
		var err error
		if sr[kind], err = json.Marshal(event); err != nil {
			return nil, err
		}
		return json.Marshal(sr)
	}
	return nil, fmt.Errorf("a StreamResponse of no event kind: %s", body)
}

func taskIDOf(in wire.PushDelivery) a2a.TaskID {
	if in.Event.Artifact != nil {
		return in.Event.Artifact.TaskID
	}
	if in.Event.Status != nil {
		return in.Event.Status.TaskID
	}
	return in.Config.TaskID
}

// retryAfter reads a Retry-After header (seconds or an HTTP date) as the
// delay before the next attempt; 0 leaves the retry policy's backoff.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	}
	return max(0, min(d, maxRetryAfter))
}
