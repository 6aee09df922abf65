package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/a2aflow/a2aflow/internal/webhook"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// pushed is one push notification a webhook accepted, as the tests compare it.
type pushed struct {
	Seq  int64
	Kind string // the status state, or "artifact:<name>"
}

// webhookReceiver is a webhook endpoint in the test process. It answers 503
// while down or while failFirst attempts remain, else 200, and records what
// it accepted with the headers a2aflow sends.
type webhookReceiver struct {
	*httptest.Server
	t *testing.T

	mu        sync.Mutex
	down      bool
	failFirst int
	attempts  int
	accepted  []pushed
	headers   []http.Header
	taskIDs   []a2a.TaskID
	bad       []string // requests that were not a StreamResponse
}

func newWebhookReceiver(t *testing.T) *webhookReceiver {
	w := &webhookReceiver{t: t}
	w.Server = httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(w.Close)
	return w
}

func (w *webhookReceiver) serve(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.attempts++
	if w.down || w.failFirst > 0 {
		if w.failFirst > 0 {
			w.failFirst--
		}
		http.Error(rw, "not now", http.StatusServiceUnavailable)
		return
	}
	var sr a2a.StreamResponse
	if err := json.Unmarshal(body, &sr); err != nil {
		w.bad = append(w.bad, fmt.Sprintf("%s: %v", body, err))
		http.Error(rw, "not a StreamResponse", http.StatusBadRequest)
		return
	}
	p, taskID, meta := pushed{}, a2a.TaskID(""), map[string]any(nil)
	switch e := sr.Event.(type) {
	case *a2a.TaskStatusUpdateEvent:
		p.Kind, taskID, meta = string(e.Status.State), e.TaskID, e.Metadata
	case *a2a.TaskArtifactUpdateEvent:
		p.Kind, taskID, meta = "artifact:"+e.Artifact.Name, e.TaskID, e.Metadata
	default:
		w.bad = append(w.bad, fmt.Sprintf("unexpected event %T", e))
	}
	seq, _ := meta["a2aflowEventSeq"].(float64)
	p.Seq = int64(seq)
	w.accepted = append(w.accepted, p)
	w.headers = append(w.headers, r.Header.Clone())
	w.taskIDs = append(w.taskIDs, taskID)
}

func (w *webhookReceiver) setDown(down bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.down = down
}

// received returns the headers and task IDs of the accepted notifications.
func (w *webhookReceiver) received() ([]http.Header, []a2a.TaskID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]http.Header(nil), w.headers...), append([]a2a.TaskID(nil), w.taskIDs...)
}

func (w *webhookReceiver) attemptCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.attempts
}

// waitFor waits until the webhook accepted n notifications and returns them.
func (w *webhookReceiver) waitFor(n int, timeout time.Duration) []pushed {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		w.mu.Lock()
		got := append([]pushed(nil), w.accepted...)
		bad := append([]string(nil), w.bad...)
		w.mu.Unlock()
		if len(bad) > 0 {
			w.t.Fatalf("webhook got malformed notifications: %v", bad)
		}
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) < n {
				w.t.Fatalf("webhook accepted %d notifications within %s, want %d: %v", len(got), timeout, n, got)
			}
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// travelPushes are the notifications of a whole travel booking: three
// questions, the booking progress, the artifact and the completion.
func travelPushes() []pushed {
	working, input := string(a2a.TaskStateWorking), string(a2a.TaskStateInputRequired)
	kinds := []string{working, input, working, input, working, input, working, working, "artifact:booking", string(a2a.TaskStateCompleted)}
	var out []pushed
	for i, k := range kinds {
		out = append(out, pushed{Seq: int64(i + 1), Kind: k})
	}
	return out
}

// sendWithPush starts a travel task whose SendMessage registers config.
func sendWithPush(t *testing.T, ctx context.Context, c *a2aclient.Client, config *a2a.PushConfig) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Book a flight")),
		Config:  &a2a.SendMessageConfig{PushConfig: config},
	})
	if err != nil {
		t.Fatalf("SendMessage with a push config: %v", err)
	}
	task := res.(*a2a.Task)
	harness.WantState(t, task, a2a.TaskStateInputRequired, "Where to?")
	return task
}

func answerTravel(t *testing.T, ctx context.Context, c *a2aclient.Client, id a2a.TaskID) {
	t.Helper()
	harness.Send(t, ctx, c, id, "Lisbon")
	harness.Send(t, ctx, c, id, "2026-12-24")
	harness.WantState(t, harness.Send(t, ctx, c, id, "2"), a2a.TaskStateCompleted, "")
}

// historyBytes returns the task's whole Temporal history as protobuf, in
// which payloads appear verbatim.
func historyBytes(t *testing.T, ctx context.Context, temporalAddr string, taskID a2a.TaskID) []byte {
	t.Helper()
	tc, err := client.Dial(client.Options{HostPort: temporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	var all []byte
	it := tc.GetWorkflowHistory(ctx, string(taskID), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := proto.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, raw...)
	}
	return all
}

func TestPushNotifications(t *testing.T) {
	s := harness.StartServe(t, t.TempDir(), "--push-allow-hosts", "loopback", "--push-max-retry-interval", "1s")
	ctx := harness.Context(t)
	c, card := harness.NewClient(t, ctx, s.APIURL)
	if !card.Capabilities.PushNotifications {
		t.Errorf("card capabilities %+v, want pushNotifications", card.Capabilities)
	}

	t.Run("every state change in order with token and auth", func(t *testing.T) {
		hook := newWebhookReceiver(t)
		task := sendWithPush(t, ctx, c, &a2a.PushConfig{
			URL: hook.URL + "/a2a?sig=in-the-url", Token: "tok-1",
			Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "webhook-secret"},
		})
		answerTravel(t, ctx, c, task.ID)
		done := time.Now()

		want := travelPushes()
		got := hook.waitFor(len(want), 30*time.Second)
		t.Logf("the last notification arrived %s after the completing SendMessage returned", time.Since(done).Round(time.Millisecond))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("notifications (-want +got):\n%s", diff)
		}
		headers, taskIDs := hook.received()
		for i, h := range headers {
			gotH := []string{h.Get("Authorization"), h.Get("A2A-Notification-Token"), h.Get("X-A2A-Notification-Token"), h.Get("Idempotency-Key"), h.Get("Content-Type"), string(taskIDs[i])}
			wantH := []string{"Bearer webhook-secret", "tok-1", "tok-1", fmt.Sprintf("%s:%d", task.ID, i+1), "application/json", string(task.ID)}
			if diff := cmp.Diff(wantH, gotH); diff != "" {
				t.Errorf("notification %d: Authorization, tokens, Idempotency-Key, Content-Type, taskId (-want +got):\n%s", i+1, diff)
			}
		}

		// The config is readable, its secrets redacted (they go to the
		// webhook only); the task's history carries them only sealed.
		list, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
		if err != nil {
			t.Fatalf("ListTaskPushConfigs: %v", err)
		}
		if len(list) != 1 || list[0].ID == "" {
			t.Fatalf("ListTaskPushConfigs = %+v, want one config with an id", list)
		}
		got1, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: list[0].ID})
		if err != nil {
			t.Fatalf("GetTaskPushConfig: %v", err)
		}
		if got1.Token != webhook.Redacted || got1.Auth == nil || got1.Auth.Scheme != "Bearer" || got1.Auth.Credentials != webhook.Redacted || got1.TaskID != task.ID {
			t.Errorf("GetTaskPushConfig = %+v (auth %+v), want the token and credentials redacted", got1, got1.Auth)
		}
		hist := historyBytes(t, ctx, s.TemporalAddr, task.ID)
		for _, secret := range []string{"webhook-secret", "tok-1"} {
			if bytes.Contains(hist, []byte(secret)) {
				t.Errorf("the task's Temporal history holds %q in the clear", secret)
			}
		}
		if !bytes.Contains(hist, []byte("a2aflow-sealed:v2:")) {
			t.Error("the task's Temporal history holds no sealed secret")
		}
	})

	t.Run("a webhook failing twice still gets every event once, in order", func(t *testing.T) {
		hook := newWebhookReceiver(t)
		hook.failFirst = 2
		task := sendWithPush(t, ctx, c, &a2a.PushConfig{URL: hook.URL, Token: "tok-2"})
		answerTravel(t, ctx, c, task.ID)
		want := travelPushes()
		hook.waitFor(len(want), 30*time.Second)
		time.Sleep(time.Second) // a duplicate would come now
		got := hook.waitFor(len(want), 0)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("notifications (-want +got):\n%s", diff)
		}
		if n := hook.attemptCount(); n != len(want)+2 {
			t.Errorf("webhook saw %d requests, want %d (two refused, then each event once)", n, len(want)+2)
		}
	})

	t.Run("forbidden addresses are InvalidParams", func(t *testing.T) {
		task := harness.Send(t, ctx, c, "", "Book a flight")
		for _, url := range []string{
			"http://10.0.0.1/",
			"http://169.254.169.254/latest/meta-data/",
			"http://[fd00:ec2::254]/",
			"http://100.64.0.1/",
			"http://0.0.0.0/",
			"ftp://127.0.0.1/",
		} {
			t.Run(url, func(t *testing.T) {
				params := fmt.Sprintf(`{"taskId":%q,"url":%q}`, task.ID, url)
				_, resp := rpc(t, s.APIURL, `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":`+params+`}`)
				if resp.Error == nil || resp.Error.Code != -32602 {
					t.Errorf("CreateTaskPushNotificationConfig(%s) = %+v, want error -32602", url, resp)
				} else if !strings.Contains(resp.Error.Message, "url") {
					t.Errorf("error message %q does not say what is wrong", resp.Error.Message)
				}

				send := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":"Book a flight"}]},"configuration":{"taskPushNotificationConfig":{"url":%q}}}}`,
					a2a.NewMessageID(), url)
				if _, resp := rpc(t, s.APIURL, send); resp.Error == nil || resp.Error.Code != -32602 {
					t.Errorf("SendMessage with push config %s = %+v, want error -32602", url, resp)
				}

				req, _ := http.NewRequest(http.MethodPost, s.APIURL+"/tasks/"+string(task.ID)+"/pushNotificationConfigs", strings.NewReader(fmt.Sprintf(`{"url":%q}`, url)))
				req.Header.Set("A2A-Version", "1.0")
				req.Header.Set("Content-Type", "application/json")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != http.StatusBadRequest {
					t.Errorf("REST create with %s: status %d, want 400", url, res.StatusCode)
				}
			})
		}
		list, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
		if err != nil || len(list) != 0 {
			t.Errorf("configs after refused creates: %+v, %v; want none", list, err)
		}
	})

	t.Run("create, get, list, delete over JSON-RPC and HTTP+JSON", func(t *testing.T) {
		hook := newWebhookReceiver(t)
		task := harness.Send(t, ctx, c, "", "Book a flight")
		rest := func(method, path, body string) (int, string) {
			req, _ := http.NewRequest(method, s.APIURL+"/tasks/"+string(task.ID)+"/pushNotificationConfigs"+path, strings.NewReader(body))
			req.Header.Set("A2A-Version", "1.0")
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(raw)
		}
		if code, body := rest(http.MethodPost, "", fmt.Sprintf(`{"id":"rest-1","url":%q,"token":"t1"}`, hook.URL)); code != http.StatusOK || !strings.Contains(body, `"rest-1"`) {
			t.Fatalf("REST create: %d %s", code, body)
		}
		created, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "rpc-1", URL: hook.URL + "/rpc"})
		if err != nil || created.ID != "rpc-1" || created.TaskID != task.ID {
			t.Fatalf("JSON-RPC create: %+v, %v", created, err)
		}
		// Creating an existing ID replaces that config.
		if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "rpc-1", URL: hook.URL + "/rpc2"}); err != nil {
			t.Fatalf("JSON-RPC replace: %v", err)
		}
		list, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		var ids, urls []string
		for _, cfg := range list {
			ids, urls = append(ids, cfg.ID), append(urls, cfg.URL)
		}
		if diff := cmp.Diff([]string{"rest-1", "rpc-1"}, ids); diff != "" {
			t.Errorf("listed config ids (-want +got):\n%s", diff)
		}
		if urls[1] != hook.URL+"/rpc2" {
			t.Errorf("replaced config url = %s, want %s", urls[1], hook.URL+"/rpc2")
		}
		if code, body := rest(http.MethodGet, "/rest-1", ""); code != http.StatusOK || !strings.Contains(body, `"[sealed]"`) || strings.Contains(body, `"t1"`) {
			t.Errorf("REST get: %d %s", code, body)
		}
		if code, body := rest(http.MethodGet, "", ""); code != http.StatusOK || strings.Count(body, `"url"`) != 2 {
			t.Errorf("REST list: %d %s", code, body)
		}
		// google.protobuf.Empty's JSON, which a2a-sdk's REST client decodes.
		if code, body := rest(http.MethodDelete, "/rest-1", ""); code != http.StatusOK || strings.TrimSpace(body) != "{}" {
			t.Errorf("REST delete: %d %q, want 200 {}", code, body)
		}
		if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "rpc-1"}); err != nil {
			t.Errorf("JSON-RPC delete: %v", err)
		}
		if _, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "rpc-1"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("JSON-RPC get of a deleted config: %v, want TaskNotFound", err)
		}
		if code, _ := rest(http.MethodGet, "/rest-1", ""); code != http.StatusNotFound {
			t.Errorf("REST get of a deleted config: %d, want 404", code)
		}
		// Deleting is idempotent (A2A §3.1.10, the TCK's PUSH-DEL-002): a
		// config deleted already, or never created, is deleted.
		if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "rpc-1"}); err != nil {
			t.Errorf("JSON-RPC delete of rpc-1 again: %v, want success", err)
		}
		if code, body := rest(http.MethodDelete, "/nope", ""); code != http.StatusOK || strings.TrimSpace(body) != "{}" {
			t.Errorf("REST delete of an unknown config: %d %q, want 200 {}", code, body)
		}
		if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: "no-such-task", ID: "rpc-1"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("delete on an unknown task: %v, want TaskNotFound", err)
		}
		if _, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("list of an unknown task: %v, want TaskNotFound", err)
		}
	})

	// A2A §3.1.7 has no terminal-task exception: a config on an ended task
	// is created, read, listed, replaced and deleted like any (the TCK's
	// PUSH-CREATE-001 and the tests built on it), kept beside the closed
	// workflow, and gets no notification: the task has no more events.
	t.Run("configs on an ended task", func(t *testing.T) {
		hook, late := newWebhookReceiver(t), newWebhookReceiver(t)
		task := sendWithPush(t, ctx, c, &a2a.PushConfig{ID: "own", URL: hook.URL})
		answerTravel(t, ctx, c, task.ID)
		hook.waitFor(len(travelPushes()), 30*time.Second)
		rest := func(method, path, body string) (int, string) {
			req, _ := http.NewRequest(method, s.APIURL+"/tasks/"+string(task.ID)+"/pushNotificationConfigs"+path, strings.NewReader(body))
			req.Header.Set("A2A-Version", "1.0")
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(raw)
		}
		listed := func() string {
			t.Helper()
			list, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
			if err != nil {
				t.Fatalf("ListTaskPushConfigs: %v", err)
			}
			var out []string
			for _, cfg := range list {
				out = append(out, cfg.ID+" "+strings.TrimPrefix(cfg.URL, late.URL))
			}
			return strings.Join(out, ", ")
		}

		created, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "late-1", URL: late.URL + "/1", Token: "tok-late"})
		if err != nil || created.ID != "late-1" || created.TaskID != task.ID || created.Token != webhook.Redacted {
			t.Fatalf("JSON-RPC create on the completed task: %+v, %v; want it stored, its token redacted", created, err)
		}
		if code, body := rest(http.MethodPost, "", fmt.Sprintf(`{"id":"late-2","url":%q}`, late.URL+"/2")); code != http.StatusOK || !strings.Contains(body, `"late-2"`) {
			t.Fatalf("REST create on the completed task: %d %s", code, body)
		}
		if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "late-1", URL: late.URL + "/1b"}); err != nil {
			t.Fatalf("JSON-RPC replace on the completed task: %v", err)
		}
		if got, want := listed(), "own "+hook.URL+", late-1 /1b, late-2 /2"; got != want {
			t.Errorf("listed %q, want %q", got, want)
		}
		if got, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "late-1"}); err != nil || got.URL != late.URL+"/1b" {
			t.Errorf("GetTaskPushConfig late-1: %+v, %v", got, err)
		}
		// The task's own config, from before the end, can be deleted too.
		if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "own"}); err != nil {
			t.Errorf("delete the task's own config: %v", err)
		}
		if _, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "own"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("get of the deleted own config: %v, want TaskNotFound", err)
		}
		if code, body := rest(http.MethodDelete, "/late-2", ""); code != http.StatusOK || strings.TrimSpace(body) != "{}" {
			t.Errorf("REST delete late-2: %d %q, want 200 {}", code, body)
		}
		if code, body := rest(http.MethodDelete, "/late-2", ""); code != http.StatusOK || strings.TrimSpace(body) != "{}" {
			t.Errorf("REST delete of late-2 again: %d %q, want 200 {} (idempotent)", code, body)
		}
		if got, want := listed(), "late-1 /1b"; got != want {
			t.Errorf("listed after the deletes %q, want %q", got, want)
		}
		// An unknown task stays unknown.
		if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: "no-such-task", URL: late.URL}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("create on an unknown task: %v, want TaskNotFound", err)
		}
		// Nothing is delivered: the task has no more events.
		time.Sleep(2 * time.Second)
		if n := late.attemptCount(); n != 0 {
			t.Errorf("the configs created after the end got %d requests, want none", n)
		}
		if n := hook.attemptCount(); n != len(travelPushes()) {
			t.Errorf("the task's own webhook got %d requests, want the %d of the task", n, len(travelPushes()))
		}
		// The task's history is as it was: the configs are kept beside it.
		if hist := historyBytes(t, ctx, s.TemporalAddr, task.ID); bytes.Contains(hist, []byte("late-1")) {
			t.Error("the completed task's history holds a config created after its end")
		}
	})
}

// TestPushSurvivesKill kills `a2aflow serve` with SIGKILL while the webhook
// is down and a notification is being retried, starts it again, and the
// notification still arrives, followed by the later ones in order.
func TestPushSurvivesKill(t *testing.T) {
	s := harness.StartServe(t, t.TempDir(), "--push-allow-hosts", "loopback", "--push-max-retry-interval", "2s")
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)
	hook := newWebhookReceiver(t)
	hook.setDown(true)

	task := sendWithPush(t, ctx, c, &a2a.PushConfig{URL: hook.URL, Token: "tok-k"})
	for deadline := time.Now().Add(30 * time.Second); hook.attemptCount() == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no delivery attempt within 30s")
		}
	}
	s.Proc().Kill()
	s.Restart()
	hook.setDown(false)
	up := time.Now()

	working, input := string(a2a.TaskStateWorking), string(a2a.TaskStateInputRequired)
	want := []pushed{{1, working}, {2, input}}
	if diff := cmp.Diff(want, hook.waitFor(2, 90*time.Second)); diff != "" {
		t.Errorf("notifications after the restart (-want +got):\n%s", diff)
	}
	t.Logf("after the restart, both notifications arrived %s after the webhook came back (%d attempts in all)",
		time.Since(up).Round(time.Millisecond), hook.attemptCount())
	c, _ = harness.NewClient(t, ctx, s.APIURL)
	harness.Send(t, ctx, c, task.ID, "Oslo")
	want = append(want, pushed{3, working}, pushed{4, input})
	if diff := cmp.Diff(want, hook.waitFor(4, 30*time.Second)); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
	headers, _ := hook.received()
	for _, h := range headers {
		if h.Get("A2A-Notification-Token") != "tok-k" {
			t.Errorf("token header %q, want tok-k", h.Get("A2A-Notification-Token"))
		}
	}
}
