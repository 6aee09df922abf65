package tests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/pushtoken"
	"github.com/a2aflow/a2aflow/pushverify"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// verifiedPush is one request the signed-push receiver got.
type verifiedPush struct {
	header http.Header
	url    string
	body   []byte
	claims *pushverify.Claims
	err    error
}

// signedPushReceiver is a webhook that verifies every notification with
// pushverify, against the key set it fetches from a2aflow's API over HTTP,
// with a replay cache: 200 when it verifies, 401 when not. It answers 503
// to the first failFirst genuine notifications, to make a2aflow retry.
type signedPushReceiver struct {
	*httptest.Server
	v *pushverify.Verifier

	mu        sync.Mutex
	failFirst int
	got       []verifiedPush
}

func (rc *signedPushReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	claims, err := rc.v.Verify(r.Context(), r, body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.got = append(rc.got, verifiedPush{header: r.Header.Clone(), url: r.URL.String(), body: body, claims: claims, err: err})
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusUnauthorized)
	case rc.failFirst > 0:
		rc.failFirst--
		http.Error(w, "not now", http.StatusServiceUnavailable)
	}
}

func (rc *signedPushReceiver) requests() []verifiedPush {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]verifiedPush(nil), rc.got...)
}

// TestSignedPushNotifications: `serve --card-key` signs every push
// notification. A receiver verifies each against /.well-known/jwks.json,
// fetched from a2aflow's API: the task, the event's number (as in the body
// and Idempotency-Key), the webhook, the body's SHA-256; a retried event
// carries a new token, which the replay cache accepts, while the captured
// delivery played again, or with an edited body, is refused. The config's
// own credentials go as before, no token reaches the task's history, a key
// retired with --card-previous-keys still verifies, and `a2aflow push
// verify` accepts a captured notification.
func TestSignedPushNotifications(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "card-key.pem")
	wantRun(t, runCLI(t, "keys", "generate", "--out", keyFile), 0, "EdDSA key ")
	retiredFile := filepath.Join(dir, "retired-key.pem")
	wantRun(t, runCLI(t, "keys", "generate", "--alg", "ES256", "--out", retiredFile), 0, "ES256 key ")
	s := harness.StartServe(t, filepath.Join(dir, "data"), "--card-key", keyFile, "--card-previous-keys", retiredFile,
		"--push-allow-hosts", "loopback", "--push-max-retry-interval", "1s")
	ctx := harness.Context(t)

	v, err := pushverify.New(ctx, s.APIURL+pushverify.JWKSPath, pushverify.Options{Replay: pushverify.NewMemoryReplayCache()})
	if err != nil {
		t.Fatalf("the receiver cannot fetch a2aflow's key set: %v", err)
	}
	rc := &signedPushReceiver{v: v, failFirst: 1}
	rc.Server = httptest.NewServer(rc)
	defer rc.Close()

	c, _ := harness.NewClient(t, ctx, s.APIURL)
	task := sendWithPush(t, ctx, c, &a2a.PushConfig{
		URL: rc.URL + "/hook?sig=in-the-url", Token: "tok-signed",
		Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "webhook-secret"},
	})
	answerTravel(t, ctx, c, task.ID)

	want := travelPushes()
	var accepted []verifiedPush
	deadline := time.Now().Add(30 * time.Second)
	for {
		accepted = accepted[:0]
		for _, p := range rc.requests() {
			if p.err != nil {
				t.Fatalf("a2aflow's notification %s does not verify: %v", p.header.Get("Idempotency-Key"), p.err)
			}
			accepted = append(accepted, p)
		}
		if len(accepted) >= len(want)+1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(accepted) != len(want)+1 {
		t.Fatalf("the receiver verified %d requests, want %d notifications and one retry", len(accepted), len(want)+1)
	}
	// The first event came twice (503, then a retry), each with a token of
	// its own.
	first, retry := accepted[0], accepted[1]
	if first.claims.Seq != 1 || retry.claims.Seq != 1 || first.claims.ID == retry.claims.ID {
		t.Errorf("the first event and its retry: seq %d and %d, jti %s and %s; want seq 1 twice, two tokens",
			first.claims.Seq, retry.claims.Seq, first.claims.ID, retry.claims.ID)
	}
	var seqs []int64
	for _, p := range accepted[1:] {
		seqs = append(seqs, p.claims.Seq)
		wantClaims := pushverify.Claims{Issuer: s.APIURL, Audience: rc.URL + "/hook", TaskID: string(task.ID), Seq: p.claims.Seq,
			BodySHA256: pushtoken.BodySHA256(p.body), ID: p.claims.ID, KeyID: p.claims.KeyID, IssuedAt: p.claims.IssuedAt, ExpiresAt: p.claims.ExpiresAt}
		if diff := cmp.Diff(wantClaims, *p.claims); diff != "" {
			t.Errorf("claims of event %d (-want +got):\n%s", p.claims.Seq, diff)
		}
		if !bytes.Contains(p.body, fmt.Appendf(nil, `"a2aflowEventSeq":%d`, p.claims.Seq)) {
			t.Errorf("the body of event %d does not carry its number: %s", p.claims.Seq, p.body)
		}
		gotH := []string{p.header.Get("Authorization"), p.header.Get("A2A-Notification-Token"), p.header.Get("Idempotency-Key")}
		wantH := []string{"Bearer webhook-secret", "tok-signed", fmt.Sprintf("%s:%d", task.ID, p.claims.Seq)}
		if diff := cmp.Diff(wantH, gotH); diff != "" {
			t.Errorf("event %d: Authorization, token, Idempotency-Key (-want +got):\n%s", p.claims.Seq, diff)
		}
	}
	if diff := cmp.Diff([]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, seqs); diff != "" {
		t.Errorf("verified events (-want +got):\n%s", diff)
	}
	cur, err := cardsign.NewSigner(mustRead(t, keyFile))
	if err != nil {
		t.Fatal(err)
	}
	if first.claims.KeyID != cur.KeyID() {
		t.Errorf("signed by key %s, want the card key %s", first.claims.KeyID, cur.KeyID())
	}

	// An attacker replays the last delivery as captured, then with an
	// edited body.
	last := accepted[len(accepted)-1]
	resend := func(body []byte) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rc.URL+last.url, bytes.NewReader(body))
		req.Header = last.header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := rc.requests()
		return got[len(got)-1].err
	}
	if err := resend(last.body); !errors.Is(err, pushverify.ErrReplayed) {
		t.Errorf("the captured delivery played again: %v, want ErrReplayed", err)
	}
	edited := bytes.Replace(last.body, []byte("TASK_STATE_COMPLETED"), []byte("TASK_STATE_FAILED"), 1)
	if bytes.Equal(edited, last.body) {
		t.Fatalf("the edit did not apply to %s", last.body)
	}
	if err := resend(edited); !errors.Is(err, pushverify.ErrBodyMismatch) {
		t.Errorf("the captured delivery with an edited body: %v, want ErrBodyMismatch", err)
	}

	// Neither a token nor the key is in the task's history.
	hist := historyBytes(t, ctx, s.TemporalAddr, task.ID)
	for _, p := range accepted {
		if tok := p.header.Get(pushverify.Header); bytes.Contains(hist, []byte(tok)) {
			t.Errorf("the task's Temporal history holds the token of event %d", p.claims.Seq)
		}
	}

	// A token by the retired key verifies against the served key set.
	retired, err := cardsign.NewSigner(mustRead(t, retiredFile))
	if err != nil {
		t.Fatal(err)
	}
	old, err := retired.SignJWT(pushtoken.New(s.APIURL, rc.URL+"/hook", string(task.ID), 1, first.body, time.Now()), pushtoken.Type)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := v.VerifyToken(ctx, old, first.body, rc.URL+"/hook"); err != nil || c.KeyID != retired.KeyID() {
		t.Errorf("a token by the key retired with --card-previous-keys: %v, want it verified", err)
	}

	// `a2aflow push verify` accepts the first notification as captured.
	raw := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\n", first.url, strings.TrimPrefix(rc.URL, "http://"))
	for _, name := range []string{"Content-Type", "Idempotency-Key", pushverify.Header} {
		raw += name + ": " + first.header.Get(name) + "\r\n"
	}
	raw += fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(first.body), first.body)
	captured := filepath.Join(dir, "captured.http")
	if err := os.WriteFile(captured, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	wantRun(t, runCLI(t, "push", "verify", "--issuer", s.APIURL, "--audience", rc.URL+"/hook?sig=in-the-url", "--request", captured),
		0, fmt.Sprintf("Verified: task %s, event 1, signed by key %s", task.ID, cur.KeyID()))
}
