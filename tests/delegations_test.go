package tests

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestApprovalDelegation: an approver out of office lends their authority
// for a period, on a real serve. carl (finance) lends his to dana (ops
// only) with the CLI; within the period dana approves a finance expense
// for carl (`approve --for carl`), recorded as "dana for carl"; after it,
// and after a revocation, her decision for carl is refused with 403 saying
// why, and the approval stays pending. Nobody lends another's authority
// but an operator, and a stranger neither reads nor revokes the record.
func TestApprovalDelegation(t *testing.T) {
	s := harness.StartServe(t, t.TempDir(), "--approver-groups", "carl:finance;dana:ops;erin:ops",
		"--policy-admins", "root:*")
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
	cli := func(args ...string) (string, error) {
		out, err := harness.Command(append(args, "--api", s.APIURL)...).CombinedOutput()
		return string(out), err
	}
	decide := func(approver, id, onBehalfOf string) (int, string) {
		var body map[string]any
		code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": approver},
			map[string]any{"approved": true, "comment": "for the boss", "onBehalfOf": onBehalfOf}, &body)
		raw, _ := json.Marshal(body)
		return code, string(raw)
	}

	// Lending: one's own authority, or as an operator anyone's.
	out, err := cli("delegations", "add", "--as", "carl", "--to", "dana", "--until", "40s", "--reason", "holiday")
	m := regexp.MustCompile(`delegation (\d+): dana decides for carl from (\S+) until (\S+)`).FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("a2aflow delegations add: %v\n%s", err, out)
	}
	id, end := m[1], m[3]
	if out, err := cli("delegations", "add", "--as", "dana", "--from", "carl", "--to", "erin", "--until", "1h"); err == nil || !strings.Contains(out, "HTTP 403") {
		t.Errorf("dana lending carl's authority: %v\n%s; want refused with 403", err, out)
	}
	if out, err := cli("delegations", "add", "--as", "root", "--from", "erin", "--to", "dana", "--until", "1h"); err != nil {
		t.Errorf("an operator lending erin's authority: %v\n%s", err, out)
	}
	if out, err := cli("delegations", "list", "--as", "carl"); err != nil || !strings.Contains(out, "carl  dana") || !strings.Contains(out, "active") || !strings.Contains(out, "holiday") {
		t.Errorf("carl's delegations: %v\n%s", err, out)
	}
	for who, want := range map[string]int{"carl": http.StatusOK, "dana": http.StatusOK, "root": http.StatusOK, "erin": http.StatusNotFound} {
		if code := getAs(t, s.APIURL+"/delegations/"+id, who); code != want {
			t.Errorf("GET /delegations/%s as %s: HTTP %d, want %d", id, who, code, want)
		}
	}

	// Within the period: dana decides for carl, not as herself.
	task, approvalID := expense(t, ctx, c, "300 EUR hotel")
	if code, body := decide("dana", approvalID, ""); code != http.StatusConflict || !strings.Contains(body, "not in the groups") {
		t.Errorf("dana deciding as herself: HTTP %d %s; want 409", code, body)
	}
	if code, body := decide("erin", approvalID, "carl"); code != http.StatusForbidden || !strings.Contains(body, "holds no delegation from carl now: there is none") {
		t.Errorf("erin deciding for carl without a delegation: HTTP %d %s; want 403", code, body)
	}
	if code := getAs(t, s.APIURL+"/approvals/"+approvalID+"?onBehalfOf=carl", "dana"); code != http.StatusOK {
		t.Errorf("dana reading carl's approval for him: HTTP %d", code)
	}
	if out, err := cli("approve", approvalID, "--as", "dana", "--for", "carl", "--comment", "carl is away"); err != nil || !strings.Contains(out, "approved") {
		t.Fatalf("a2aflow approve --for carl: %v\n%s", err, out)
	}
	checkReceipt(t, "delegate", waitState(t, ctx, c, task.ID, a2a.TaskStateCompleted), true, "dana for carl", "cli", "carl is away")
	var view struct {
		Decisions []struct {
			Approver   string `json:"approver"`
			OnBehalfOf string `json:"onBehalfOf"`
		} `json:"decisions"`
	}
	getJSON(t, s.APIURL+"/approvals/"+approvalID, &view)
	if len(view.Decisions) != 1 || view.Decisions[0].Approver != "dana for carl" || view.Decisions[0].OnBehalfOf != "carl" {
		t.Errorf("the approval's decisions: %+v; want dana for carl", view.Decisions)
	}

	// By an A2A message's decision part, as well.
	task3, approvalID3 := expense(t, ctx, c, "320 EUR taxi")
	if _, err := c.SendMessage(withHeader(ctx, "X-Approver", "dana"), &a2a.SendMessageRequest{Message: decisionFor(task3.ID, approvalID3, "carl")}); err != nil {
		t.Fatalf("dana's decision part for carl: %v", err)
	}
	checkReceipt(t, "delegate by message", waitState(t, ctx, c, task3.ID, a2a.TaskStateCompleted), true, "dana for carl", "a2a", "by message")

	// Time to decision, per group and outcome, on /metrics.
	if n := decisionCount(t, s.APIURL, "finance", "approved"); n != 2 {
		t.Errorf("a2aflow_approval_decision_seconds_count{group=finance,outcome=approved} = %d after two approvals, want 2", n)
	}

	// After the period: refused, saying when it ended; the approval waits.
	task2, approvalID2 := expense(t, ctx, c, "310 EUR train")
	ends, err := time.Parse(time.RFC3339, end)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(ends) + time.Second)
	code, body := decide("dana", approvalID2, "carl")
	if code != http.StatusForbidden || !strings.Contains(body, "dana holds no delegation from carl now: the latest ("+id+") ended at") {
		t.Errorf("dana deciding for carl after the period: HTTP %d %s; want 403 saying it ended", code, body)
	}
	if out, err := cli("approve", approvalID2, "--as", "dana", "--for", "carl"); err == nil || !strings.Contains(out, "HTTP 403") {
		t.Errorf("a2aflow approve --for carl after the period: %v\n%s; want refused", err, out)
	}
	if _, err := c.SendMessage(withHeader(ctx, "X-Approver", "dana"), &a2a.SendMessageRequest{Message: decisionFor(task2.ID, approvalID2, "carl")}); err == nil ||
		!strings.Contains(err.Error(), "holds no delegation from carl now") {
		t.Errorf("dana's decision part for carl after the period: %v; want refused", err)
	}
	if out, _ := cli("delegations", "--as", "dana"); !strings.Contains(out, "ended") {
		t.Errorf("dana's delegations after the period:\n%s", out)
	}

	// Revoked: a new delegation, revoked by carl, holds no more.
	out, err = cli("delegations", "add", "--as", "carl", "--to", "dana", "--until", "2h")
	m = regexp.MustCompile(`delegation (\d+):`).FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("a2aflow delegations add: %v\n%s", err, out)
	}
	if out, err := cli("delegations", "revoke", m[1], "--as", "erin"); err == nil || !strings.Contains(out, "HTTP 404") {
		t.Errorf("erin revoking carl's delegation: %v\n%s; want 404", err, out)
	}
	if out, err := cli("delegations", "revoke", m[1], "--as", "carl"); err != nil || !strings.Contains(out, "revoked by carl") {
		t.Fatalf("a2aflow delegations revoke: %v\n%s", err, out)
	}
	if code, body := decide("dana", approvalID2, "carl"); code != http.StatusForbidden || !strings.Contains(body, "was revoked by carl") {
		t.Errorf("dana deciding for carl after the revocation: HTTP %d %s; want 403", code, body)
	}
	task2 = waitState(t, ctx, c, task2.ID, a2a.TaskStateInputRequired)
	view.Decisions = nil
	getJSON(t, s.APIURL+"/approvals/"+approvalID2, &view)
	if len(view.Decisions) != 0 {
		t.Errorf("refused decisions reached the approval: %+v", view.Decisions)
	}
	// carl, back, decides himself.
	if code, body := decide("carl", approvalID2, ""); code != http.StatusOK {
		t.Errorf("carl deciding: HTTP %d %s", code, body)
	}
	checkReceipt(t, "carl", waitState(t, ctx, c, task2.ID, a2a.TaskStateCompleted), true, "carl", "rest", "for the boss")
	if n := decisionCount(t, s.APIURL, "finance", "approved"); n != 3 {
		t.Errorf("a2aflow_approval_decision_seconds_count{group=finance,outcome=approved} = %d after three approvals, want 3", n)
	}
}

// decisionFor is a message to task whose data part approves approvalID for
// the approver onBehalfOf.
func decisionFor(task a2a.TaskID, approvalID, onBehalfOf string) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"approvalId": approvalID, "approved": true,
		"comment": "by message", "onBehalfOf": onBehalfOf}))
	m.TaskID = task
	return m
}

// decisionCount reads the count of a2aflow_approval_decision_seconds of the
// expenses agent, group and outcome from /metrics.
func decisionCount(t *testing.T, apiURL, group, outcome string) uint64 {
	t.Helper()
	families, _ := scrapeMetrics(t, apiURL+"/metrics")
	f := families["a2aflow_approval_decision_seconds"]
	if f == nil {
		return 0
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["agent"] == "expenses" && labels["group"] == group && labels["outcome"] == outcome {
			if h := m.GetHistogram(); h.GetSampleSum() <= 0 {
				t.Errorf("a2aflow_approval_decision_seconds{group=%s,outcome=%s}: sum %g, want above 0", group, outcome, h.GetSampleSum())
			}
			return m.GetHistogram().GetSampleCount()
		}
	}
	return 0
}

// getAs GETs url as the X-Approver who and returns the status.
func getAs(t testing.TB, url, who string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("X-Approver", who)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
