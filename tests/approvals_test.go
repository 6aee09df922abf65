package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// expense files an expense with the expenses agent and returns the task,
// waiting for approval, and the approval ID from its status message.
func expense(t testing.TB, ctx context.Context, c *a2aclient.Client, text string) (*a2a.Task, string) {
	t.Helper()
	task := harness.Send(t, ctx, c, "", text)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("expense task state %s, want input-required (waiting for approval): %q", task.Status.State, harness.StatusText(task))
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
		t.Fatalf("expense task %s with %d artifacts, want completed with a receipt: %q", task.Status.State, len(task.Artifacts), harness.StatusText(task))
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

// noticeReceiver is an approval webhook: it records each notice it gets.
type noticeReceiver struct {
	mu      sync.Mutex
	notices []receivedNotice
}

type receivedNotice struct {
	Path          string
	Authorization string
	Body          map[string]any
}

func (n *noticeReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notices = append(n.notices, receivedNotice{Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), Body: body})
}

// of returns the notices received about one approval.
func (n *noticeReceiver) of(approvalID string) []receivedNotice {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []receivedNotice
	for _, rn := range n.notices {
		if rn.Body["approvalId"] == approvalID {
			out = append(out, rn)
		}
	}
	return out
}

// TestExpenseApprovals drives the expenses agent through every way of
// deciding: five approvals wait for finance, the server is killed (kill -9)
// and restarted, and each is then decided another way (an A2A message, REST,
// the CLI, an ADK ticket, the inbox in Chromium). The finance group's
// webhook hears of every request.
func TestExpenseApprovals(t *testing.T) {
	hooks := &noticeReceiver{}
	hookSrv := httptest.NewServer(hooks)
	t.Cleanup(hookSrv.Close)
	// The token is the worker's configuration, read from its environment.
	t.Setenv("A2AFLOW_APPROVAL_WEBHOOK_TOKEN_FINANCE", "finance-hook-token")
	s := harness.StartServe(t, t.TempDir(), "--approver-groups", "fiona:finance;carol:finance;dave:finance;mo:managers",
		"--approval-webhooks", "finance="+hookSrv.URL+"/finance", "--push-allow-hosts", "loopback")
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")

	t.Run("under the limit is approved by policy", func(t *testing.T) {
		task := harness.Send(t, ctx, c, "", "42 EUR taxi")
		if ok, who, via, _ := lastDecision(t, receiptOf(t, task)); !ok || who != "expenses-agent" || via != "policy" {
			t.Errorf("decision = %v by %s via %s, want approved by the agent's policy", ok, who, via)
		}
	})

	t.Run("missing fields are asked for", func(t *testing.T) {
		task := harness.Send(t, ctx, c, "", "I need to file an expense")
		harness.WantState(t, task, a2a.TaskStateInputRequired, "How much was it?")
		task = harness.Send(t, ctx, c, task.ID, "30")
		harness.WantState(t, task, a2a.TaskStateInputRequired, "In which currency? (e.g. EUR)")
		task = harness.Send(t, ctx, c, task.ID, "usd")
		harness.WantState(t, task, a2a.TaskStateInputRequired, "What was it for?")
		task = harness.Send(t, ctx, c, task.ID, "parking")
		if r := receiptOf(t, task); r["currency"] != "USD" || r["purpose"] != "parking" || r["amount"] != float64(30) {
			t.Errorf("receipt = %v", r)
		}
	})

	t.Run("the finance webhook hears of a waiting expense", func(t *testing.T) {
		task, id := expense(t, ctx, c, "250 EUR training course")
		waitFor(t, 20*time.Second, func() bool { return len(hooks.of(id)) > 0 })
		got := hooks.of(id)[0]
		deadline, _ := got.Body["deadline"].(string)
		if d, err := time.Parse(time.RFC3339, deadline); err != nil || d.Before(time.Now().Add(47*time.Hour)) {
			t.Errorf("notice deadline %q, want in 48 hours (the finance timeout)", deadline)
		}
		delete(got.Body, "deadline")
		want := receivedNotice{
			Path: "/finance", Authorization: "Bearer finance-hook-token",
			Body: map[string]any{
				"group": "finance", "approvalId": id, "taskId": string(task.ID), "agent": "expenses",
				"title":    "Expense of 250.00 EUR: training course",
				"details":  fmt.Sprintf("Filed in task %s. Over the 100.00 auto-approval limit.", task.ID),
				"groups":   []any{"finance"},
				"inboxUrl": s.APIURL + "/inbox?group=finance",
			},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("approval webhook notice (-want +got):\n%s", diff)
		}
	})

	t.Run("pending approvals survive kill -9, then each way decides one", func(t *testing.T) {
		a2aTask, a2aID := expense(t, ctx, c, "260 EUR conference ticket")
		restTask, restID := expense(t, ctx, c, "300 EUR hotel")
		cliTask, cliID := expense(t, ctx, c, "900 EUR laptop")
		// Google ADK's long-running flow: the caller gets the pending ticket
		// (the approval ID) at once and sends the decision with it later.
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("1200 EUR flight")),
			Config:  &a2a.SendMessageConfig{ReturnImmediately: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		adkTask := res.(*a2a.Task)
		ticket := string(adkTask.ID) + "-approval-1"
		waitState(t, ctx, c, adkTask.ID, a2a.TaskStateInputRequired)
		inboxTask, inboxID := expense(t, ctx, c, "640 EUR team offsite")
		pending := []string{a2aID, restID, cliID, ticket, inboxID}
		waitFor(t, 20*time.Second, func() bool {
			listed := map[string]bool{}
			var body struct {
				Approvals []map[string]any `json:"approvals"`
			}
			getJSON(t, s.APIURL+"/approvals?group=finance", &body)
			for _, a := range body.Approvals {
				listed[a["id"].(string)] = true
			}
			for _, id := range pending {
				if !listed[id] {
					return false
				}
			}
			return true
		})
		// Each notice is delivered before the kill (one in flight would be
		// sent again after the restart, as it should).
		waitFor(t, 20*time.Second, func() bool {
			for _, id := range pending {
				if len(hooks.of(id)) == 0 {
					return false
				}
			}
			return true
		})

		s.Proc().Kill()
		s.Restart()
		c, _ = harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
		for _, id := range pending {
			var view map[string]any
			if code := getJSON(t, s.APIURL+"/approvals/"+id, &view); code != http.StatusOK || view["state"] != "pending" {
				t.Fatalf("after the restart GET /approvals/%s = %d %v, want pending", id, code, view)
			}
		}

		// 1. An A2A message on the task with a data part.
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"approvalId": a2aID, "approved": true, "comment": "worth it"}))
		msg.TaskID = a2aTask.ID
		res, err = c.SendMessage(withHeader(ctx, "X-Approver", "fiona"), &a2a.SendMessageRequest{Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		checkReceipt(t, "A2A message", res.(*a2a.Task), true, "fiona", "a2a", "worth it")

		// 2. REST, with the refusals the validator answers.
		decision := map[string]any{"approved": false, "comment": "too expensive"}
		decideREST := func(approver string) int {
			return postJSON(t, s.APIURL+"/approvals/"+restID+"/decision", map[string]string{"X-Approver": approver}, decision, nil)
		}
		if code := decideREST("mo"); code != http.StatusConflict {
			t.Errorf("decision by a manager (not finance): HTTP %d, want 409", code)
		}
		if code := decideREST("eve"); code != http.StatusForbidden {
			t.Errorf("decision by a non-approver: HTTP %d, want 403", code)
		}
		if code := decideREST("carol"); code != http.StatusOK {
			t.Fatalf("decision by carol: HTTP %d", code)
		}
		if code := decideREST("dave"); code != http.StatusConflict {
			t.Errorf("decision after the approval settled: HTTP %d, want 409", code)
		}
		checkReceipt(t, "REST", waitState(t, ctx, c, restTask.ID, a2a.TaskStateCompleted), false, "carol", "rest", "too expensive")
		var view map[string]any
		getJSON(t, s.APIURL+"/approvals/"+restID, &view)
		if ds, _ := view["decisions"].([]any); view["state"] != "rejected" || len(ds) != 1 {
			t.Errorf("GET /approvals/%s after the decision = %v, want rejected with one decision", restID, view)
		}

		// 3. The CLI.
		out, err := harness.Command("approve", cliID, "--api", s.APIURL, "--as", "dave", "--comment", "needed").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "approved") {
			t.Fatalf("a2aflow approve: %v\n%s", err, out)
		}
		checkReceipt(t, "CLI", waitState(t, ctx, c, cliTask.ID, a2a.TaskStateCompleted), true, "dave", "cli", "needed")
		out, err = harness.Command("approvals", "list", "--decided", "--group", "finance", "--api", s.APIURL).CombinedOutput()
		if err != nil || !strings.Contains(string(out), cliID) {
			t.Errorf("a2aflow approvals list --decided: %v\n%s", err, out)
		}
		// approvals alone lists, as approvals list does.
		out, err = harness.Command("approvals", "--decided", "--api", s.APIURL).CombinedOutput()
		if err != nil || !strings.Contains(string(out), cliID) || !strings.HasPrefix(string(out), "ID ") {
			t.Errorf("a2aflow approvals --decided: %v\n%s", err, out)
		}

		// 4. The ADK ticket, sent later as the long-running tool's response.
		answer := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"approvalId": ticket, "approved": true, "comment": "ticket answered"}))
		answer.TaskID = adkTask.ID
		if _, err := c.SendMessage(withHeader(ctx, "X-Approver", "carol"), &a2a.SendMessageRequest{Message: answer}); err != nil {
			t.Fatal(err)
		}
		checkReceipt(t, "ADK ticket", waitState(t, ctx, c, adkTask.ID, a2a.TaskStateCompleted), true, "carol", "a2a", "ticket answered")

		// 5. The inbox page, in headless Chromium.
		if browser := chromiumPath(); browser == "" {
			t.Log("no Chromium on PATH: the inbox way is left to TestInboxApprovesInBrowser's skip (apt-get install chromium)")
		} else {
			approveInInbox(t, ctx, browser, s.APIURL, inboxID, "fiona", "approved in the inbox")
			checkReceipt(t, "inbox", waitState(t, ctx, c, inboxTask.ID, a2a.TaskStateCompleted), true, "fiona", "inbox", "approved in the inbox")
		}

		// Every request was announced to finance's webhook, once.
		for _, id := range pending {
			if n := len(hooks.of(id)); n != 1 {
				t.Errorf("approval %s: finance's webhook got %d notices, want 1", id, n)
			}
		}
	})

	t.Run("ADK long-running flow: a decision sent before the skill asks is kept", func(t *testing.T) {
		// The caller gets the pending ticket (the approval ID) at once...
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("1300 EUR flight"))
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

// approveInInbox opens the finance inbox in headless Chromium as approver
// and approves the approval id with comment, as a person would.
func approveInInbox(t testing.TB, ctx context.Context, browserPath, apiURL, id, approver, comment string) {
	t.Helper()
	page, closeBrowser := openInbox(t, ctx, browserPath, apiURL)
	defer closeBrowser()
	card := chromedp.CSS(`div.approval[data-id="` + id + `"]`)
	err := chromedp.Do(page,
		chromedp.WaitVisible(card),
		chromedp.SetValue(chromedp.CSS("#approver"), approver),
		chromedp.SendKeys(card+" textarea", comment),
		chromedp.Click(card+" button.approve"),
		chromedp.WaitVisible("#decided "+card),
	)
	if err != nil {
		t.Fatalf("approve %s in the inbox: %v", id, err)
	}
}

// checkReceipt checks the last decision on the receipt of a completed
// expenses task.
func checkReceipt(t testing.TB, way string, task *a2a.Task, approved bool, approver, via, comment string) {
	t.Helper()
	type decision struct {
		Approved               bool
		Approver, Via, Comment string
	}
	var got decision
	got.Approved, got.Approver, got.Via, got.Comment = lastDecision(t, receiptOf(t, task))
	if diff := cmp.Diff(decision{approved, approver, via, comment}, got); diff != "" {
		t.Errorf("%s: receipt decision (-want +got):\n%s", way, diff)
	}
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
