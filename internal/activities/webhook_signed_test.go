package activities_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/pushtoken"
	"github.com/a2aflow/a2aflow/internal/webhook"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/pushverify"
)

// verifyingReceiver is a webhook that checks every notification with
// pushverify against the key set it fetches over HTTP: 204 when it
// verifies, 401 when not. It records each request and the outcome.
type verifyingReceiver struct {
	v     *pushverify.Verifier
	mu    sync.Mutex
	calls []verified
}

type verified struct {
	header http.Header
	body   []byte
	claims *pushverify.Claims
	err    error
}

func (rc *verifyingReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	claims, err := rc.v.Verify(r.Context(), r, body)
	rc.mu.Lock()
	rc.calls = append(rc.calls, verified{header: r.Header.Clone(), body: body, claims: claims, err: err})
	rc.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rc *verifyingReceiver) last(t *testing.T) verified {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.calls) == 0 {
		t.Fatal("the webhook got nothing")
	}
	return rc.calls[len(rc.calls)-1]
}

// serveJWKS serves s's key set as the API does at /.well-known/jwks.json.
func serveJWKS(t *testing.T, s *cardsign.Signer) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != pushverify.JWKSPath {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.JWKS())
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newCardSigner(t *testing.T) *cardsign.Signer {
	t.Helper()
	pemKey, err := cardsign.GenerateKey(cardsign.EdDSA)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cardsign.NewSigner(pemKey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDeliverPushNotificationSigned: with a Signer, every attempt carries a
// token minted for it that a receiver verifies against the key set it
// fetches over HTTP: the task, the event's number, the webhook without its
// secret query, the body's SHA-256. The config's own Authorization and
// token are unchanged. A captured delivery played again, an edited body, a
// stale token, a token for another webhook and one by another key are
// refused.
func TestDeliverPushNotificationSigned(t *testing.T) {
	ctx := t.Context()
	signer := newCardSigner(t)
	keys := serveJWKS(t, signer)
	issuer := keys.URL // the server's public URL, where the JWKS is
	var clockSkew atomic.Int64
	v, err := pushverify.New(ctx, keys.URL+pushverify.JWKSPath, pushverify.Options{
		Replay: pushverify.NewMemoryReplayCache(),
		Now:    func() time.Time { return time.Now().Add(time.Duration(clockSkew.Load())) },
	})
	if err != nil {
		t.Fatal(err)
	}
	rc := &verifyingReceiver{v: v}
	hook := serveOn(t, "127.0.0.1:0", rc)
	sealer, err := webhook.NewSealer(webhook.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	w := &activities.Webhooks{Policy: mustPolicy(t, "loopback"), Sealer: sealer, Signer: signer, Issuer: issuer + "/"}
	config := a2a.PushConfig{ID: "c1", TaskID: "task-1", URL: hook.URL + "/hook?sig=s3cret",
		Token: sealer.Seal("tok", "task-1", "c1"),
		Auth:  &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: sealer.Seal("webhook-secret", "task-1", "c1")}}
	in := wire.PushDelivery{Config: config, Event: statusEvent(3, a2a.TaskStateWorking)}

	if err := deliver(t, w, in); err != nil {
		t.Fatalf("signed delivery: %v", err)
	}
	first := rc.last(t)
	if first.err != nil {
		t.Fatalf("the receiver refused the delivery: %v", first.err)
	}
	wantClaims := &pushverify.Claims{Issuer: issuer, Audience: hook.URL + "/hook", TaskID: "task-1", Seq: 3,
		BodySHA256: pushtoken.BodySHA256(first.body), KeyID: signer.KeyID()}
	ignore := cmp.FilterPath(func(p cmp.Path) bool {
		switch p.Last().String() {
		case ".ID", ".IssuedAt", ".ExpiresAt":
			return true
		}
		return false
	}, cmp.Ignore())
	if diff := cmp.Diff(wantClaims, first.claims, ignore); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	if got := first.claims.ExpiresAt.Sub(first.claims.IssuedAt); got != pushtoken.Lifetime {
		t.Errorf("token lifetime %s, want %s", got, pushtoken.Lifetime)
	}
	gotH := []string{first.header.Get("Authorization"), first.header.Get("A2A-Notification-Token"), first.header.Get("Idempotency-Key")}
	if diff := cmp.Diff([]string{"Bearer webhook-secret", "tok", "task-1:3"}, gotH); diff != "" {
		t.Errorf("Authorization, token, Idempotency-Key (-want +got):\n%s", diff)
	}
	token := first.header.Get(activities.HeaderNotificationJWT)
	payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[1])
	if bytes.Contains(payload, []byte("s3cret")) || bytes.Contains(payload, []byte("webhook-secret")) {
		t.Errorf("the token's claims hold a secret: %s", payload)
	}

	// A retry of the same event is a new token: not a replay.
	if err := deliver(t, w, in); err != nil {
		t.Fatalf("second attempt: %v", err)
	}
	second := rc.last(t)
	if second.err != nil || second.claims.ID == first.claims.ID || second.claims.Seq != 3 {
		t.Errorf("second attempt: err %v, jti %q after %q, seq %d; want verified, a new jti, seq 3", second.err, second.claims.ID, first.claims.ID, second.claims.Seq)
	}

	// Requests an attacker sends, built from the captured first delivery.
	resend := func(url string, body []byte) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		req.Header = first.header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return rc.last(t).err
	}
	if err := resend(config.URL, first.body); !errors.Is(err, pushverify.ErrReplayed) {
		t.Errorf("the captured delivery played again: %v, want ErrReplayed", err)
	}
	edited := bytes.Replace(first.body, []byte("TASK_STATE_WORKING"), []byte("TASK_STATE_FAILED"), 1)
	if bytes.Equal(edited, first.body) {
		t.Fatalf("the edit did not apply to %s", first.body)
	}
	if err := resend(config.URL, edited); !errors.Is(err, pushverify.ErrBodyMismatch) {
		t.Errorf("an edited body: %v, want ErrBodyMismatch", err)
	}
	if err := resend(hook.URL+"/other-hook", first.body); !errors.Is(err, pushverify.ErrWrongAudience) {
		t.Errorf("the token sent to another webhook: %v, want ErrWrongAudience", err)
	}
	clockSkew.Store(int64(pushtoken.Lifetime + time.Minute))
	if err := resend(config.URL, first.body); !errors.Is(err, pushverify.ErrExpired) {
		t.Errorf("the delivery played again after its token expired: %v, want ErrExpired", err)
	}
	clockSkew.Store(0)

	// A server with another key: refused, and the activity reads the 401
	// as the webhook's final answer.
	forger := &activities.Webhooks{Policy: mustPolicy(t, "loopback"), Sealer: sealer, Signer: newCardSigner(t), Issuer: issuer}
	err = deliver(t, forger, in)
	if got := rc.last(t).err; !errors.Is(got, pushverify.ErrBadSignature) {
		t.Errorf("a delivery signed by another key: %v, want ErrBadSignature", got)
	}
	checkDeliveryError(t, err, true, false, activities.ErrTypeWebhookRejected, 0)
}

// TestDeliverPushNotificationSignedBearer: a config that asks for the
// Bearer scheme without credentials gets the token in Authorization too
// (A2A's JWT + JWKS example flow); without a Signer, no token is sent; a
// Signer without an issuer is a worker misconfiguration, retried.
func TestDeliverPushNotificationSignedBearer(t *testing.T) {
	signer := newCardSigner(t)
	rc := &receiver{}
	srv := serveOn(t, "127.0.0.1:0", rc)
	in := wire.PushDelivery{
		Config: a2a.PushConfig{ID: "c1", URL: srv.URL + "/hook", Auth: &a2a.PushAuthInfo{Scheme: "bearer"}},
		Event:  statusEvent(1, a2a.TaskStateWorking),
	}
	if err := deliver(t, &activities.Webhooks{Policy: mustPolicy(t, "loopback"), Signer: signer, Issuer: "https://agents.example"}, in); err != nil {
		t.Fatal(err)
	}
	h := rc.got()[0].header
	if tok := h.Get(activities.HeaderNotificationJWT); tok == "" || h.Get("Authorization") != "Bearer "+tok {
		t.Errorf("Authorization %q, token header %q: want Bearer and the token", h.Get("Authorization"), tok)
	}

	if err := deliver(t, &activities.Webhooks{Policy: mustPolicy(t, "loopback")}, in); err != nil {
		t.Fatal(err)
	}
	h = rc.got()[1].header
	if h.Get(activities.HeaderNotificationJWT) != "" || h.Get("Authorization") != "" {
		t.Errorf("unsigned delivery sent Authorization %q and a token %q", h.Get("Authorization"), h.Get(activities.HeaderNotificationJWT))
	}

	err := deliver(t, &activities.Webhooks{Policy: mustPolicy(t, "loopback"), Signer: signer}, in)
	if err == nil || isNonRetryable(err) || !strings.Contains(err.Error(), "--public-url") {
		t.Errorf("a Signer without an issuer: %v, want a retryable error naming --public-url", err)
	}
	if len(rc.got()) != 2 {
		t.Errorf("the webhook got %d requests, want 2: nothing unsigned when the token cannot be made", len(rc.got()))
	}
}
