package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// expense files an expense with the expenses agent and returns the task,
// waiting for approval, and the approval ID from its status message.
func expense(t testing.TB, ctx context.Context, c *a2aclient.Client, text string) (*a2a.Task, string) {
	t.Helper()
	task := send(t, ctx, c, "", text)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("expense task state %s, want input-required (waiting for approval): %q", task.Status.State, statusText(task))
	}
	for _, p := range task.Status.Message.Parts {
		if data, ok := p.Data().(map[string]any); ok {
			if id, _ := data["approvalId"].(string); id != "" {
				return task, id
			}
		}
	}
	t.Fatalf("status message of the waiting expense has no approvalId data part: %+v", task.Status.Message.Parts)
	return nil, ""
}

// receiptOf returns the receipt artifact of a completed expenses task.
func receiptOf(t testing.TB, task *a2a.Task) map[string]any {
	t.Helper()
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("expense task %s with %d artifacts, want completed with a receipt: %q", task.Status.State, len(task.Artifacts), statusText(task))
	}
	data, _ := task.Artifacts[0].Parts[0].Data().(map[string]any)
	return data
}

// lastDecision returns approver and via of the receipt's last decision.
func lastDecision(t testing.TB, receipt map[string]any) (approved bool, approver, via, comment string) {
	t.Helper()
	ds, _ := receipt["decisions"].([]any)
	if len(ds) == 0 {
		t.Fatalf("receipt has no decisions: %v", receipt)
	}
	d := ds[len(ds)-1].(map[string]any)
	approved, _ = d["approved"].(bool)
	approver, _ = d["approver"].(string)
	via, _ = d["via"].(string)
	comment, _ = d["comment"].(string)
	return
}

// postJSON posts body to url with headers and decodes the JSON answer.
func postJSON(t testing.TB, url string, headers map[string]string, body any, out any) int {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

func getJSON(t testing.TB, url string, out any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(out)
	return resp.StatusCode
}

// TestExpenseApprovals drives the expenses agent through every way of
// deciding, with a kill -9 of the server while an approval waits.
func TestExpenseApprovals(t *testing.T) {
	s := startServe(t, t.TempDir(), "--approver-groups", "fiona:finance;carol:finance;dave:finance;mo:managers")
	ctx := testContext(t)
	c, _ := newClient(t, ctx, s.APIURL+"/agents/expenses")

	t.Run("under the limit is approved by policy", func(t *testing.T) {
		task := send(t, ctx, c, "", "42 EUR taxi")
		if ok, who, via, _ := lastDecision(t, receiptOf(t, task)); !ok || who != "expenses-agent" || via != "policy" {
			t.Errorf("decision = %v by %s via %s, want approved by the agent's policy", ok, who, via)
		}
	})

	t.Run("missing fields are asked for", func(t *testing.T) {
		task := send(t, ctx, c, "", "I need to file an expense")
		wantState(t, task, a2a.TaskStateInputRequired, "How much was it?")
		task = send(t, ctx, c, task.ID, "30")
		wantState(t, task, a2a.TaskStateInputRequired, "In which currency? (e.g. EUR)")
		task = send(t, ctx, c, task.ID, "usd")
		wantState(t, task, a2a.TaskStateInputRequired, "What was it for?")
		task = send(t, ctx, c, task.ID, "parking")
		if r := receiptOf(t, task); r["currency"] != "USD" || r["purpose"] != "parking" || r["amount"] != float64(30) {
			t.Errorf("receipt = %v", r)
		}
	})

	t.Run("A2A message with a data part", func(t *testing.T) {
		task, id := expense(t, ctx, c, "250 EUR conference ticket")
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"approvalId": id, "approved": true, "comment": "worth it"}))
		msg.TaskID = task.ID
		res, err := c.SendMessage(withHeader(ctx, "X-Approver", "fiona"), &a2a.SendMessageRequest{Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		ok, who, via, comment := lastDecision(t, receiptOf(t, res.(*a2a.Task)))
		if !ok || who != "fiona" || via != "a2a" || comment != "worth it" {
			t.Errorf("decision = %v by %s via %s (%q), want approved by fiona via a2a", ok, who, via, comment)
		}
	})

	t.Run("REST, with refusals", func(t *testing.T) {
		task, id := expense(t, ctx, c, "300 EUR hotel")
		var view map[string]any
		if code := getJSON(t, s.APIURL+"/approvals/"+id, &view); code != 200 || view["state"] != "pending" {
			t.Fatalf("GET /approvals/%s = %d %v", id, code, view)
		}
		var listed struct {
			Approvals []map[string]any `json:"approvals"`
		}
		waitFor(t, 20*time.Second, func() bool {
			getJSON(t, s.APIURL+"/approvals?group=finance", &listed)
			for _, a := range listed.Approvals {
				if a["id"] == id {
					return true
				}
			}
			return false
		})
		decision := map[string]any{"approved": false, "comment": "too expensive"}
		if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": "mo"}, decision, nil); code != http.StatusConflict {
			t.Errorf("decision by a manager (not finance): HTTP %d, want 409", code)
		}
		if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": "eve"}, decision, nil); code != http.StatusForbidden {
			t.Errorf("decision by a non-approver: HTTP %d, want 403", code)
		}
		if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": "carol"}, decision, nil); code != 200 {
			t.Fatalf("decision by carol: HTTP %d", code)
		}
		if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": "dave"}, decision, nil); code != http.StatusConflict {
			t.Errorf("decision after the approval settled: HTTP %d, want 409", code)
		}
		got := waitState(t, ctx, c, task.ID, a2a.TaskStateCompleted)
		ok, who, via, comment := lastDecision(t, receiptOf(t, got))
		if ok || who != "carol" || via != "rest" || comment != "too expensive" {
			t.Errorf("decision = %v by %s via %s (%q), want rejected by carol via rest", ok, who, via, comment)
		}
		getJSON(t, s.APIURL+"/approvals/"+id, &view)
		if ds, _ := view["decisions"].([]any); view["state"] != "rejected" || len(ds) != 1 {
			t.Errorf("GET /approvals/%s after the decision = %v, want rejected with one decision", id, view)
		}
	})

	t.Run("kill -9 while waiting, then the CLI decides", func(t *testing.T) {
		task, id := expense(t, ctx, c, "900 EUR laptop")
		s.proc().kill()
		s.restart()
		c, _ = newClient(t, ctx, s.APIURL+"/agents/expenses")
		out, err := exec.Command(binary, "approve", id, "--api", s.APIURL, "--as", "dave", "--comment", "needed").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "approved") {
			t.Fatalf("a2aflow approve: %v\n%s", err, out)
		}
		got := waitState(t, ctx, c, task.ID, a2a.TaskStateCompleted)
		if ok, who, via, _ := lastDecision(t, receiptOf(t, got)); !ok || who != "dave" || via != "cli" {
			t.Errorf("decision = %v by %s via %s, want approved by dave via cli", ok, who, via)
		}
		out, err = exec.Command(binary, "approvals", "list", "--decided", "--group", "finance", "--api", s.APIURL).CombinedOutput()
		if err != nil || !strings.Contains(string(out), id) {
			t.Errorf("a2aflow approvals list --decided: %v\n%s", err, out)
		}
	})

	t.Run("ADK long-running flow: a ticket now, the decision later", func(t *testing.T) {
		// The caller gets the pending ticket (the approval ID) at once...
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("1200 EUR flight"))
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		ticket := string(task.ID) + "-approval-1"
		// ...and sends the decision with the ticket, here even before the
		// skill reached its Approve call: the decision is kept, not lost.
		decision := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"approvalId": ticket, "approved": true}))
		decision.TaskID = task.ID
		if _, err := c.SendMessage(withHeader(ctx, "X-Approver", "fiona"), &a2a.SendMessageRequest{Message: decision}); err != nil {
			t.Fatal(err)
		}
		got := waitState(t, ctx, c, task.ID, a2a.TaskStateCompleted)
		if ok, who, _, _ := lastDecision(t, receiptOf(t, got)); !ok || who != "fiona" {
			t.Errorf("decision = %v by %s, want approved by fiona", ok, who)
		}
	})
}

// waitState polls GetTask until the task is in state.
func waitState(t testing.TB, ctx context.Context, c *a2aclient.Client, id a2a.TaskID, state a2a.TaskState) *a2a.Task {
	t.Helper()
	var task *a2a.Task
	waitFor(t, 30*time.Second, func() bool {
		var err error
		task, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		return err == nil && task.Status.State == state
	})
	return task
}

func waitFor(t testing.TB, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// withHeader adds an HTTP header to the a2a-go client's calls made with ctx.
func withHeader(ctx context.Context, key, value string) context.Context {
	return a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{key: {value}})
}
