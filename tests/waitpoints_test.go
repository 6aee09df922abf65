package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2aflow/a2aflow/internal/api/resources"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

// waitpointOf returns the waitpoint ID the input-required task's status
// names in its data part.
func waitpointOf(t *testing.T, task *a2a.Task) string {
	t.Helper()
	if task.Status.State != a2a.TaskStateInputRequired || task.Status.Message == nil {
		t.Fatalf("task %s is %s, want input-required with a waitpoint", task.ID, task.Status.State)
	}
	for _, p := range task.Status.Message.Parts {
		if d, ok := p.Data().(map[string]any); ok {
			if id, _ := d["waitpointId"].(string); id != "" {
				if d["schema"] == nil {
					t.Errorf("the waitpoint's data part has no schema: %v", d)
				}
				return id
			}
		}
	}
	t.Fatalf("task %s's status names no waitpoint: %+v", task.ID, task.Status.Message)
	return ""
}

// requestChange starts a changes task and returns it waiting for its ticket.
func requestChange(t *testing.T, ctx context.Context, c *a2aclient.Client, text string, meta map[string]any) *a2a.Task {
	t.Helper()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	msg.Metadata = meta
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("SendMessage(%q): %v", text, err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage returned %T, want a task", res)
	}
	return task
}

// waitpointCall is one request to /waitpoints/{id}.
type waitpointCall struct {
	method, id, apiKey, token string
	body                      any
}

func (w waitpointCall) do(t *testing.T, s *harness.Server, out any) (int, string) {
	t.Helper()
	headers := map[string]string{}
	if w.apiKey != "" {
		headers["X-API-Key"] = w.apiKey
	}
	if w.token != "" {
		headers[resources.WaitpointTokenHeader] = w.token
	}
	var raw map[string]any
	var code int
	if w.method == "" {
		w.method = http.MethodPost
	}
	if w.method == http.MethodGet {
		code = getJSONWith(t, s.APIURL+"/waitpoints/"+w.id, headers, &raw)
	} else {
		code = postJSON(t, s.APIURL+"/waitpoints/"+w.id, headers, w.body, &raw)
	}
	msg, _ := raw["error"].(string)
	if out != nil && code == http.StatusOK {
		b, err := json.Marshal(raw)
		if err == nil {
			err = json.Unmarshal(b, out)
		}
		if err != nil {
			t.Fatalf("%s /waitpoints/%s: %v", w.method, w.id, err)
		}
	}
	return code, msg
}

// getJSONWith is getJSON with request headers.
func getJSONWith(t *testing.T, url string, headers map[string]string, out any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(out)
	return resp.StatusCode
}

// TestWaitpoints runs the changes agent's waitpoint on a real server with
// authentication: alice's task waits for a ticket; the ticket system
// (bob, holding the token alice read) completes it over REST — after
// refusals for a missing or wrong token (403), a payload the schema does
// not take (400), an unknown waitpoint (404) — and sending it again answers
// the same (200), another payload 409, also once the task ended. A second
// task is completed by alice's A2A message (a2a-go's client), a third by
// the CLI after the server was killed and restarted mid-wait (completed
// once), and a fourth passes its deadline and fails. The REST-completed
// task's history replays (A2AFLOW_RECORD_HISTORY=1 records it as
// cmd/a2aflow/internal/demo/testdata/changes-waitpoint-bound.history.json;
// changes-waitpoint.history.json is the same task recorded before tokens
// were bound to their waitpoint).
func TestWaitpoints(t *testing.T) {
	const aliceKey, bobKey = "alice-waitpoint-key", "bob-waitpoint-key"
	t.Setenv("A2AFLOW_API_KEYS", fmt.Sprintf("alice=%s,bob=%s", aliceKey, bobKey))
	dataDir := t.TempDir()
	s := harness.StartServe(t, dataDir)
	ctx := harness.Context(t)
	alice := withHeader(ctx, "X-API-Key", aliceKey)
	c, _ := harness.NewClient(t, alice, s.APIURL+"/agents/changes")

	task := requestChange(t, alice, c, "Restart the payments database", nil)
	id := waitpointOf(t, task)

	// The owner reads the waitpoint and its token; nobody else sees it.
	var view resources.WaitpointView
	if code, msg := (waitpointCall{method: http.MethodGet, id: id, apiKey: aliceKey}).do(t, s, &view); code != 200 || view.Token == "" || view.State != workflows.WaitpointPending {
		t.Fatalf("GET as the owner: %d %s %+v, want 200 with the token", code, msg, view)
	}
	token := view.Token
	for _, c := range []struct {
		name string
		call waitpointCall
		want int
	}{
		{"GET as another tenant", waitpointCall{method: http.MethodGet, id: id, apiKey: bobKey}, 404},
		{"GET unauthenticated", waitpointCall{method: http.MethodGet, id: id, token: token}, 401},
		{"GET with a wrong token", waitpointCall{method: http.MethodGet, id: id, apiKey: bobKey, token: token + "x"}, 404},
	} {
		if code, msg := c.call.do(t, s, nil); code != c.want {
			t.Errorf("%s: HTTP %d (%s), want %d", c.name, code, msg, c.want)
		}
	}
	var byToken resources.WaitpointView
	if code, msg := (waitpointCall{method: http.MethodGet, id: id, apiKey: bobKey, token: token}).do(t, s, &byToken); code != 200 || byToken.ID != id || byToken.Token != "" {
		t.Errorf("GET with the token: %d %s %+v, want 200 without the token echoed", code, msg, byToken)
	}

	// Refusals, none of which touches the task.
	ticket := map[string]any{"ticket_id": "CHG-42", "approved": true, "comment": "go ahead"}
	key, err := os.ReadFile(filepath.Join(dataDir, "secrets.key"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(key)))
	if err != nil {
		t.Fatal(err)
	}
	unknown := strings.TrimSuffix(id, "-1") + "-9"
	unknownToken := wire.NewWaitpointTokens(raw).Token(unknown, view.Created)
	for _, c := range []struct {
		name     string
		call     waitpointCall
		want     int
		contains string
	}{
		{"no token", waitpointCall{id: id, apiKey: bobKey, body: map[string]any{"payload": ticket}}, 403, "token is required"},
		{"a wrong token", waitpointCall{id: id, apiKey: bobKey, token: "bm90LXRoZS10b2tlbg", body: map[string]any{"payload": ticket}}, 403, "does not open"},
		{"another waitpoint's token", waitpointCall{id: id, apiKey: bobKey, token: unknownToken, body: map[string]any{"payload": ticket}}, 403, "does not open"},
		{"unauthenticated", waitpointCall{id: id, token: token, body: map[string]any{"payload": ticket}}, 401, ""},
		{"a payload the schema refuses", waitpointCall{id: id, apiKey: bobKey, token: token, body: map[string]any{"payload": map[string]any{"approved": "yes"}}}, 400, "ticket_id"},
		{"no payload", waitpointCall{id: id, apiKey: bobKey, token: token, body: map[string]any{}}, 400, "payload"},
		{"an unknown waitpoint", waitpointCall{id: unknown, apiKey: bobKey, token: unknownToken, body: map[string]any{"payload": ticket}}, 404, "does not exist"},
		{"an ID that names no waitpoint", waitpointCall{id: "nothing-here", apiKey: bobKey, token: token, body: map[string]any{"payload": ticket}}, 404, "does not exist"},
	} {
		code, msg := c.call.do(t, s, nil)
		if code != c.want || !strings.Contains(msg, c.contains) {
			t.Errorf("%s: HTTP %d %q, want %d containing %q", c.name, code, msg, c.want, c.contains)
		}
	}
	if got := waitState(t, alice, c, task.ID, a2a.TaskStateInputRequired); len(got.Artifacts) != 0 {
		t.Fatalf("a refused completion changed the task: %+v", got)
	}

	// The ticket system completes it; a retry answers the same.
	var done resources.WaitpointView
	complete := waitpointCall{id: id, apiKey: bobKey, token: token, body: map[string]any{"payload": ticket}}
	if code, msg := complete.do(t, s, &done); code != 200 || done.State != workflows.WaitpointCompleted || done.CompletedBy != "bob" || done.Via != "rest" {
		t.Fatalf("POST with the token: %d %s %+v, want completed by bob via rest", code, msg, done)
	}
	final := waitState(t, alice, c, task.ID, a2a.TaskStateCompleted)
	if len(final.Artifacts) != 1 || !strings.Contains(workflows.MessageText(final.Status.Message), "CHG-42") {
		t.Fatalf("task after the ticket: %+v", final)
	}
	reordered := waitpointCall{id: id, apiKey: bobKey, body: map[string]any{"token": token,
		"payload": map[string]any{"comment": "go ahead", "approved": true, "ticket_id": "CHG-42"}}}
	for i := 0; i < 2; i++ { // the second after the workflow surely closed
		var again resources.WaitpointView
		if code, msg := reordered.do(t, s, &again); code != 200 || !again.CompletedAt.Equal(*done.CompletedAt) || again.CompletedBy != "bob" {
			t.Errorf("the same payload again (%d): %d %s %+v, want 200 as completed", i, code, msg, again)
		}
		other := waitpointCall{id: id, apiKey: bobKey, token: token, body: map[string]any{"payload": map[string]any{"ticket_id": "CHG-43", "approved": false}}}
		if code, msg := other.do(t, s, nil); code != 409 || !strings.Contains(msg, "already completed") {
			t.Errorf("another payload (%d): %d %q, want 409 saying it was completed", i, code, msg)
		}
		time.Sleep(time.Second)
	}
	replayAndRecord(t, ctx, s, task.ID, "changes-waitpoint-bound.history.json")

	// By message: alice forwards the ticket with a2a-go's client; a bad
	// payload is InvalidParams.
	second := requestChange(t, alice, c, "Rotate the TLS certificates", nil)
	wp2 := waitpointOf(t, second)
	answer := func(payload map[string]any) (a2a.SendMessageResult, error) {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"waitpointId": wp2, "payload": payload}))
		m.TaskID = second.ID
		return c.SendMessage(alice, &a2a.SendMessageRequest{Message: m})
	}
	if _, err := answer(map[string]any{"ticket_id": ""}); !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "approved") {
		t.Errorf("a message with a bad payload: %v, want InvalidParams naming the missing field", err)
	}
	res, err := answer(map[string]any{"ticket_id": "CHG-7", "approved": false, "comment": "freeze week"})
	if err != nil {
		t.Fatalf("a message completing the waitpoint: %v", err)
	}
	if got, ok := res.(*a2a.Task); !ok || got.Status.State != a2a.TaskStateRejected || !strings.Contains(workflows.MessageText(got.Status.Message), "freeze week") {
		t.Errorf("after the message: %+v, want rejected saying why", res)
	}
	var viaMessage resources.WaitpointView
	if code, _ := (waitpointCall{method: http.MethodGet, id: wp2, apiKey: aliceKey}).do(t, s, &viaMessage); code != 200 || viaMessage.Via != "a2a" || viaMessage.CompletedBy != "alice" {
		t.Errorf("the waitpoint completed by message: %d %+v, want via a2a by alice", code, viaMessage)
	}

	// Kill the server mid-wait and restart it: the CLI completes the
	// waitpoint, twice, and it is applied once.
	third := requestChange(t, alice, c, "Upgrade the kernel", nil)
	wp3 := waitpointOf(t, third)
	var v3 resources.WaitpointView
	(waitpointCall{method: http.MethodGet, id: wp3, apiKey: aliceKey}).do(t, s, &v3)
	s.Proc().Kill()
	s.Restart()
	for i := 0; i < 2; i++ {
		r := runCLI(t, "waitpoint", "complete", wp3, "--api", s.APIURL, "--api-key", bobKey, "--token", v3.Token,
			"--data", `{"ticket_id": "CHG-99", "approved": true}`)
		wantRun(t, r, 0, wp3+": completed by bob via cli")
	}
	r := runCLI(t, "waitpoint", "complete", wp3, "--api", s.APIURL, "--api-key", bobKey, "--token", v3.Token, "--data", `{"ticket_id": 5}`)
	wantRun(t, r, 1, "HTTP 409")
	c3, _ := harness.NewClient(t, alice, s.APIURL+"/agents/changes")
	if got := waitState(t, alice, c3, third.ID, a2a.TaskStateCompleted); len(got.Artifacts) != 1 {
		t.Errorf("after restart and two completions: %d artifacts, want 1", len(got.Artifacts))
	}

	// The deadline passes: the task fails, the waitpoint is expired.
	fourth := requestChange(t, alice, c3, "Reboot the router", map[string]any{"ticketTimeout": "2s"})
	wp4 := waitpointOf(t, fourth)
	failed := waitState(t, alice, c3, fourth.ID, a2a.TaskStateFailed)
	if !strings.Contains(workflows.MessageText(failed.Status.Message), "deadline passed") {
		t.Errorf("failed task says %q, want the deadline", workflows.MessageText(failed.Status.Message))
	}
	var expired resources.WaitpointView
	(waitpointCall{method: http.MethodGet, id: wp4, apiKey: aliceKey}).do(t, s, &expired)
	if code, msg := (waitpointCall{id: wp4, apiKey: bobKey, token: expired.Token, body: map[string]any{"payload": ticket}}).do(t, s, nil); code != 409 || expired.State != workflows.WaitpointExpired {
		t.Errorf("completing an expired waitpoint: %d %q (state %s), want 409", code, msg, expired.State)
	}
}
