package activities_test

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/webhook"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// receiver is a webhook endpoint that records what it receives and answers
// with status.
type receiver struct {
	mu       sync.Mutex
	requests []received
	status   int
	header   http.Header
}

type received struct {
	header http.Header
	body   []byte
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.requests = append(rc.requests, received{header: r.Header.Clone(), body: body})
	for k, v := range rc.header {
		w.Header()[k] = v
	}
	if rc.status != 0 {
		w.WriteHeader(rc.status)
	}
}

func (rc *receiver) got() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.requests...)
}

// serveOn starts h on a loopback address such as "127.0.0.2:0".
func serveOn(t *testing.T, addr string, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func mustPolicy(t *testing.T, allow ...string) *webhook.Policy {
	t.Helper()
	p, err := webhook.ParsePolicy(allow)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// deliver runs DeliverPushNotification in a test activity environment.
func deliver(t *testing.T, w *activities.Webhooks, in wire.PushDelivery) error {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(w)
	_, err := env.ExecuteActivity(wire.ActivityDeliverPush, in)
	return err
}

func statusEvent(seq int64, state a2a.TaskState) wire.Event {
	return wire.Event{Seq: seq, Status: &a2a.TaskStatusUpdateEvent{
		TaskID: "task-1", ContextID: "ctx-1",
		Status:   a2a.TaskStatus{State: state, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Where to?"))},
		Metadata: map[string]any{"kept": "yes"},
	}}
}

func TestDeliverPushNotificationSendsStreamResponse(t *testing.T) {
	sealer, err := webhook.NewSealer(webhook.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	rc := &receiver{}
	srv := serveOn(t, "127.0.0.1:0", rc)
	artifact := &a2a.Artifact{ID: "a-1", Name: "booking", Parts: a2a.ContentParts{a2a.NewTextPart("ok")}}

	tests := []struct {
		name     string
		w        *activities.Webhooks
		config   a2a.PushConfig
		event    wire.Event
		wantAuth string
		wantTok  string
		wantKind string // statusUpdate or artifactUpdate
		v11      bool   // an A2A 1.1 config: the event carries its generation
	}{
		{
			name:     "bearer and token",
			w:        &activities.Webhooks{Policy: mustPolicy(t, "loopback")},
			config:   a2a.PushConfig{ID: "c1", URL: srv.URL + "/hook", Token: "tok-1", Auth: &a2a.PushAuthInfo{Scheme: "bearer", Credentials: "s3cret"}},
			event:    statusEvent(3, a2a.TaskStateInputRequired),
			wantAuth: "Bearer s3cret",
			wantTok:  "tok-1",
			wantKind: "statusUpdate",
		},
		{
			name: "sealed secrets are opened",
			w:    &activities.Webhooks{Policy: mustPolicy(t, "loopback"), Sealer: sealer},
			config: a2a.PushConfig{ID: "c1", URL: srv.URL + "/hook", Token: sealer.Seal("tok-2", "", "c1"),
				Auth: &a2a.PushAuthInfo{Scheme: "Basic", Credentials: sealer.Seal("dXNlcjpwYXNz", "", "c1")}},
			event:    statusEvent(4, a2a.TaskStateCompleted),
			wantAuth: "Basic dXNlcjpwYXNz",
			wantTok:  "tok-2",
			wantKind: "statusUpdate",
		},
		{
			name:     "artifact, no auth",
			w:        &activities.Webhooks{Policy: mustPolicy(t, "loopback")},
			config:   a2a.PushConfig{ID: "c1", URL: srv.URL + "/hook"},
			event:    wire.Event{Seq: 5, Artifact: &a2a.TaskArtifactUpdateEvent{TaskID: "task-1", ContextID: "ctx-1", Artifact: artifact, LastChunk: true}},
			wantKind: "artifactUpdate",
		},
		{
			name:     "A2A 1.1 status",
			w:        &activities.Webhooks{Policy: mustPolicy(t, "loopback")},
			config:   a2a.PushConfig{ID: "c1", URL: srv.URL + "/hook"},
			event:    statusEvent(6, a2a.TaskStateWorking),
			wantKind: "statusUpdate",
			v11:      true,
		},
		{
			name:     "A2A 1.1 artifact",
			w:        &activities.Webhooks{Policy: mustPolicy(t, "loopback")},
			config:   a2a.PushConfig{ID: "c1", URL: srv.URL + "/hook"},
			event:    wire.Event{Seq: 7, Artifact: &a2a.TaskArtifactUpdateEvent{TaskID: "task-1", ContextID: "ctx-1", Artifact: artifact, LastChunk: true}},
			wantKind: "artifactUpdate",
			v11:      true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(rc.got())
			if err := deliver(t, tt.w, wire.PushDelivery{Config: tt.config, Event: tt.event, Generation: tt.v11}); err != nil {
				t.Fatalf("deliver: %v", err)
			}
			reqs := rc.got()[before:]
			if len(reqs) != 1 {
				t.Fatalf("webhook got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			gotHeaders := map[string]string{
				"Authorization":            r.header.Get("Authorization"),
				"A2A-Notification-Token":   r.header.Get(activities.HeaderNotificationToken),
				"X-A2A-Notification-Token": r.header.Get(activities.HeaderNotificationTokenX),
				"Content-Type":             r.header.Get("Content-Type"),
				"Idempotency-Key":          r.header.Get(activities.HeaderIdempotencyKey),
			}
			wantHeaders := map[string]string{
				"Authorization":            tt.wantAuth,
				"A2A-Notification-Token":   tt.wantTok,
				"X-A2A-Notification-Token": tt.wantTok,
				"Content-Type":             "application/json",
				"Idempotency-Key":          "task-1:" + itoa(tt.event.Seq),
			}
			if diff := cmp.Diff(wantHeaders, gotHeaders); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}

			// The body is an A2A StreamResponse with the event's number in
			// its metadata.
			var sr a2a.StreamResponse
			if err := json.Unmarshal(r.body, &sr); err != nil {
				t.Fatalf("body %s is not a StreamResponse: %v", r.body, err)
			}
			var raw map[string]map[string]any
			if err := json.Unmarshal(r.body, &raw); err != nil {
				t.Fatal(err)
			}
			if _, ok := raw[tt.wantKind]; !ok || len(raw) != 1 {
				t.Fatalf("body %s, want one %q member", r.body, tt.wantKind)
			}
			// A 1.1 config's event has its generation (the event's
			// number plus one: a task starts at 1), as a string; a 1.0
			// config's has none.
			gen, hasGen := raw[tt.wantKind]["generation"]
			if want := itoa(tt.event.Seq + 1); tt.v11 && gen != want || !tt.v11 && hasGen {
				t.Errorf("generation %v (present: %v), want %q for a 1.1 config and none else", gen, hasGen, want)
			}
			var meta map[string]any
			switch e := sr.Event.(type) {
			case *a2a.TaskStatusUpdateEvent:
				if e.Status.State != tt.event.Status.Status.State || e.TaskID != "task-1" {
					t.Errorf("status update %+v, want %s of task-1", e, tt.event.Status.Status.State)
				}
				meta = e.Metadata
			case *a2a.TaskArtifactUpdateEvent:
				if e.Artifact.ID != "a-1" || !e.LastChunk {
					t.Errorf("artifact update %+v, want artifact a-1, last chunk", e)
				}
				meta = e.Metadata
			}
			if got := meta[activities.MetadataEventSeq]; got != float64(tt.event.Seq) {
				t.Errorf("metadata %v: %s = %v, want %d", meta, activities.MetadataEventSeq, got, tt.event.Seq)
			}
			if tt.event.Status != nil && meta["kept"] != "yes" {
				t.Errorf("metadata %v lost the event's own metadata", meta)
			}
		})
	}
	// The workflow's copy of the event is untouched.
	if e := statusEvent(3, a2a.TaskStateWorking); len(e.Status.Metadata) != 1 {
		t.Errorf("event metadata changed: %v", e.Status.Metadata)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestDeliverPushNotificationRetries(t *testing.T) {
	tests := []struct {
		status     int
		retryAfter string
		wantErr    bool
		retryable  bool
		wantType   string
		wantDelay  time.Duration
	}{
		{status: 200},
		{status: 202},
		{status: 204},
		{status: 500, wantErr: true, retryable: true, wantType: "WebhookUnavailable"},
		{status: 502, wantErr: true, retryable: true, wantType: "WebhookUnavailable"},
		{status: 503, retryAfter: "7", wantErr: true, retryable: true, wantType: "WebhookUnavailable", wantDelay: 7 * time.Second},
		{status: 408, wantErr: true, retryable: true, wantType: "WebhookUnavailable"},
		{status: 429, retryAfter: "3", wantErr: true, retryable: true, wantType: "WebhookUnavailable", wantDelay: 3 * time.Second},
		{status: 429, retryAfter: "86400", wantErr: true, retryable: true, wantType: "WebhookUnavailable", wantDelay: 10 * time.Minute},
		{status: 400, wantErr: true, wantType: activities.ErrTypeWebhookRejected},
		{status: 401, wantErr: true, wantType: activities.ErrTypeWebhookRejected},
		{status: 404, wantErr: true, wantType: activities.ErrTypeWebhookRejected},
		{status: 410, wantErr: true, wantType: activities.ErrTypeWebhookRejected},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status)+" "+tt.retryAfter, func(t *testing.T) {
			rc := &receiver{status: tt.status, header: http.Header{}}
			if tt.retryAfter != "" {
				rc.header.Set("Retry-After", tt.retryAfter)
			}
			srv := serveOn(t, "127.0.0.1:0", rc)
			w := &activities.Webhooks{Policy: mustPolicy(t, "loopback")}
			err := deliver(t, w, wire.PushDelivery{
				Config: a2a.PushConfig{ID: "c1", URL: srv.URL + "/hook?sig=s3cret"},
				Event:  statusEvent(1, a2a.TaskStateWorking),
			})
			checkDeliveryError(t, err, tt.wantErr, tt.retryable, tt.wantType, tt.wantDelay)
		})
	}

	t.Run("connection refused is retried", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String() + "/hook"
		ln.Close()
		err = deliver(t, &activities.Webhooks{Policy: mustPolicy(t, "loopback")}, wire.PushDelivery{
			Config: a2a.PushConfig{ID: "c1", URL: url}, Event: statusEvent(1, a2a.TaskStateWorking),
		})
		if err == nil || isNonRetryable(err) {
			t.Fatalf("err = %v, want a retryable error", err)
		}
	})
	t.Run("sealed secret without a key is not retried", func(t *testing.T) {
		sealer, _ := webhook.NewSealer(webhook.NewKey())
		srv := serveOn(t, "127.0.0.1:0", &receiver{})
		err := deliver(t, &activities.Webhooks{Policy: mustPolicy(t, "loopback")}, wire.PushDelivery{
			Config: a2a.PushConfig{ID: "c1", URL: srv.URL, Token: sealer.Seal("tok", "", "c1")}, Event: statusEvent(1, a2a.TaskStateWorking),
		})
		checkDeliveryError(t, err, true, false, activities.ErrTypeWebhookConfig, 0)
	})
}

func checkDeliveryError(t *testing.T, err error, wantErr, retryable bool, wantType string, wantDelay time.Duration) {
	t.Helper()
	if !wantErr {
		if err != nil {
			t.Fatalf("deliver: %v", err)
		}
		return
	}
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		t.Fatalf("err = %v, want an application error", err)
	}
	got := struct {
		Type         string
		NonRetryable bool
		Delay        time.Duration
	}{appErr.Type(), appErr.NonRetryable(), appErr.NextRetryDelay()}
	want := struct {
		Type         string
		NonRetryable bool
		Delay        time.Duration
	}{wantType, !retryable, wantDelay}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error %v (-want +got):\n%s", err, diff)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %q shows the URL's query", err)
	}
}

func isNonRetryable(err error) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.NonRetryable()
}

func TestDeliverPushNotificationRefusesForbiddenAddresses(t *testing.T) {
	rc := &receiver{}
	srv := serveOn(t, "127.0.0.1:0", rc)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	tests := []struct {
		name   string
		policy *webhook.Policy
		url    string
	}{
		{"loopback IP by default", nil, srv.URL},
		{"a name resolving to 127.0.0.1", nil, "http://localhost:" + itoa(int64(port)) + "/hook"},
		{"loopback outside the allowed CIDR", mustPolicy(t, "10.0.0.0/8"), srv.URL},
		{"private address", mustPolicy(t, "loopback"), "http://10.255.255.1:9/hook"},
		{"metadata address", mustPolicy(t, "loopback", "link-local"), "http://169.254.169.254/latest/meta-data/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := deliver(t, &activities.Webhooks{Policy: tt.policy}, wire.PushDelivery{
				Config: a2a.PushConfig{ID: "c1", URL: tt.url, Token: "tok"}, Event: statusEvent(1, a2a.TaskStateWorking),
			})
			checkDeliveryError(t, err, true, false, activities.ErrTypeWebhookForbidden, 0)
		})
	}
	if n := len(rc.got()); n != 0 {
		t.Errorf("the forbidden webhook got %d requests, want 0", n)
	}
}

// TestDeliverPushNotificationRedirects checks that a delivery follows a
// redirect only to the same host (with its secrets, which stay there), and
// never to another host, whatever the allow-list: the other host gets
// nothing, the delivery fails without retrying.
func TestDeliverPushNotificationRedirects(t *testing.T) {
	target := &receiver{}
	other := serveOn(t, "127.0.0.2:0", target) // the whole of 127/8 is loopback on Linux
	landing := &receiver{}
	redirect := serveOn(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/elsewhere", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/landing", http.StatusTemporaryRedirect)
		default:
			landing.ServeHTTP(w, r)
		}
	}))
	config := func(path string) wire.PushDelivery {
		return wire.PushDelivery{
			Config: a2a.PushConfig{ID: "c1", URL: redirect.URL + path, Token: "tok", Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "s3cret"}},
			Event:  statusEvent(1, a2a.TaskStateWorking),
		}
	}

	for _, policy := range []*webhook.Policy{mustPolicy(t, "127.0.0.1/32"), mustPolicy(t, "loopback"), mustPolicy(t, "all")} {
		err := deliver(t, &activities.Webhooks{Policy: policy}, config("/away"))
		checkDeliveryError(t, err, true, false, activities.ErrTypeWebhookRejected, 0)
	}
	if n := len(target.got()); n != 0 {
		t.Fatalf("redirect target on another host got %d requests, want 0", n)
	}

	// The same host: followed, with the token and credentials.
	if err := deliver(t, &activities.Webhooks{Policy: mustPolicy(t, "loopback")}, config("/moved")); err != nil {
		t.Fatalf("deliver: %v", err)
	}
	reqs := landing.got()
	if len(reqs) != 1 {
		t.Fatalf("same-host redirect target got %d requests, want 1", len(reqs))
	}
	if got := reqs[0].header.Get(activities.HeaderNotificationToken); got != "tok" {
		t.Errorf("same-host redirect target got token %q, want tok", got)
	}
}
