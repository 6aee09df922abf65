package tests

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/mcptest"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// timelineEntry is an entry of GET /tasks/{id}/timeline, as a client reads
// it.
type timelineEntry struct {
	Seq     int64  `json:"seq"`
	Time    string `json:"time"`
	Kind    string `json:"kind"`
	RunID   string `json:"runId"`
	EventID int64  `json:"eventId"`
	Message *struct {
		MessageID    string `json:"messageId"`
		Role         string `json:"role"`
		MessageIndex int    `json:"messageIndex"`
		Parts        []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"message"`
	Status *struct {
		State string `json:"state"`
		Text  string `json:"text"`
	} `json:"status"`
	Artifact *struct {
		ArtifactID string `json:"artifactId"`
		Name       string `json:"name"`
	} `json:"artifact"`
	Model *struct {
		Provider     string  `json:"provider"`
		Model        string  `json:"model"`
		Turn         int     `json:"turn"`
		InputTokens  int64   `json:"inputTokens"`
		OutputTokens int64   `json:"outputTokens"`
		CostUSD      float64 `json:"costUsd"`
		DurationMs   int64   `json:"durationMs"`
	} `json:"model"`
	Tool *struct {
		Name            string          `json:"name"`
		Arguments       json.RawMessage `json:"arguments"`
		Result          json.RawMessage `json:"result"`
		Error           string          `json:"error"`
		ApprovalID      string          `json:"approvalId"`
		EditedArguments json.RawMessage `json:"editedArguments"`
	} `json:"tool"`
	Approval *struct {
		ID        string   `json:"id"`
		Title     string   `json:"title"`
		Groups    []string `json:"groups"`
		Quorum    int      `json:"quorum"`
		State     string   `json:"state"`
		Decisions []struct {
			By       string `json:"by"`
			Decision string `json:"decision"`
			Comment  string `json:"comment"`
		} `json:"decisions"`
	} `json:"approval"`
}

// timelinePage is a page of GET /tasks/{id}/timeline.
type timelinePage struct {
	TaskID     string `json:"taskId"`
	Agent      string `json:"agent"`
	ContextID  string `json:"contextId"`
	State      string `json:"state"`
	Summary    string `json:"summary"`
	WaitingFor *struct {
		Kind       string `json:"kind"`
		Text       string `json:"text"`
		ApprovalID string `json:"approvalId"`
	} `json:"waitingFor"`
	CostUSD       *float64        `json:"costUsd"`
	TemporalURL   string          `json:"temporalUrl"`
	Entries       []timelineEntry `json:"entries"`
	NextPageToken string          `json:"nextPageToken"`
}

// getTimeline reads a page of a task's timeline at agentPath ("" the
// default agent), with query parameters q, as headers say.
func getTimeline(t *testing.T, apiURL, agentPath, taskID string, q url.Values, headers map[string]string) (int, timelinePage, string) {
	t.Helper()
	u := apiURL + agentPath + "/tasks/" + taskID + "/timeline"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&raw)
	var page timelinePage
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, &page); err != nil {
			t.Fatalf("timeline of %s: %v\n%s", taskID, err, raw)
		}
	}
	return resp.StatusCode, page, string(raw)
}

// timelineConfig is gatedToolsConfig with a price for the fake model.
const timelineConfig = gatedToolsConfig + `
[[llm-prices]]
provider = "openai"
model = "gpt-4o-mini"
input = 2.0
output = 10
`

// kinds lists the entries' kinds, a message's with its index and role.
func kinds(entries []timelineEntry) []string {
	var out []string
	for _, e := range entries {
		k := e.Kind
		switch {
		case e.Message != nil:
			k = fmt.Sprintf("message #%d %s", e.Message.MessageIndex, strings.TrimPrefix(e.Message.Role, "ROLE_"))
		case e.Status != nil:
			k = "status " + strings.TrimPrefix(e.Status.State, "TASK_STATE_")
		}
		out = append(out, k)
	}
	return out
}

// allTimeline reads a task's whole timeline in pages of size.
func allTimeline(t *testing.T, apiURL, agentPath, taskID string, size int) []json.RawMessage {
	t.Helper()
	var all []json.RawMessage
	token := ""
	for range 1000 {
		q := url.Values{"pageSize": {fmt.Sprint(size)}}
		if token != "" {
			q.Set("pageToken", token)
		}
		code, _, raw := getTimeline(t, apiURL, agentPath, taskID, q, nil)
		if code != http.StatusOK {
			t.Fatalf("timeline page of %d: HTTP %d %s", size, code, raw)
		}
		var page struct {
			Entries       []json.RawMessage `json:"entries"`
			NextPageToken string            `json:"nextPageToken"`
		}
		if err := json.Unmarshal([]byte(raw), &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) > size {
			t.Fatalf("a page of %d entries, more than its size %d", len(page.Entries), size)
		}
		all = append(all, page.Entries...)
		if page.NextPageToken == "" {
			return all
		}
		token = page.NextPageToken
	}
	t.Fatal("the timeline's pages never end")
	return nil
}

// TestTimeline reads the timelines of three tasks of a real serve: the
// travel conversation (its messages at their places, forked at message 2
// through POST :fork), an expense decided by finance (its approval with
// the decision), and an LLM agent's gated tool call approved with edited
// arguments (its model calls with their tokens and costs, the approval,
// the call with both arguments and its result). Pages of any size make up
// the whole timeline; bad requests get 400, unknown tasks 404.
func TestTimeline(t *testing.T) {
	model := newFakeToolLLM(t)
	payments := &mcptest.Payments{Ledger: filepath.Join(t.TempDir(), "ledger")}
	mcpSrv := httptest.NewServer(payments.Handler())
	t.Cleanup(mcpSrv.Close)
	config := filepath.Join(t.TempDir(), "a2aflow.toml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(timelineConfig, mcpSrv.URL+"/mcp")), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPENAI_BASE_URL=" + model.URL + "/v1", "OPENAI_API_KEY=sk-test", "ANTHROPIC_BASE_URL=" + model.URL, "ANTHROPIC_API_KEY=sk-ant-test"}
	s := harness.StartServeEnv(t, t.TempDir(), env, "--config", config, "--approver-groups", "fiona:finance")
	ctx := harness.Context(t)
	fiona := map[string]string{"X-Approver": "fiona"}

	t.Run("travel", func(t *testing.T) {
		c, _ := harness.NewClient(t, ctx, s.APIURL)
		task := harness.TravelBooking(t, ctx, c)
		code, page, raw := getTimeline(t, s.APIURL, "", string(task.ID), nil, nil)
		if code != http.StatusOK {
			t.Fatalf("timeline: HTTP %d %s", code, raw)
		}
		want := []string{
			"message #1 USER", "status WORKING", "message #2 AGENT", "status INPUT_REQUIRED",
			"message #3 USER", "message #4 AGENT", "message #5 USER", "message #6 AGENT", "message #7 USER",
			"status WORKING", "message #8 AGENT", "message #9 AGENT", "artifact", "status COMPLETED",
		}
		if diff := cmp.Diff(want, kinds(page.Entries)); diff != "" {
			t.Errorf("travel timeline (-want +got):\n%s\n%s", diff, raw)
		}
		if page.Summary != "travel · Book a flight" || page.State != "TASK_STATE_COMPLETED" || page.WaitingFor != nil ||
			page.Agent != "travel" || page.ContextID != task.ContextID || page.NextPageToken != "" {
			t.Errorf("timeline header: %+v", page)
		}
		if !strings.HasSuffix(page.TemporalURL, "/namespaces/default/workflows/"+string(task.ID)) {
			t.Errorf("temporalUrl %q", page.TemporalURL)
		}
		for i, e := range page.Entries {
			if e.Seq != int64(i+1) || e.RunID == "" || e.Time == "" {
				t.Errorf("entry %d: seq %d, run %q, time %q", i, e.Seq, e.RunID, e.Time)
			}
		}
		// Message 2 is "Where to?": a fork there asks it again.
		var second string
		for _, e := range page.Entries {
			if e.Message != nil && e.Message.MessageIndex == 2 {
				second = e.Message.Parts[0].Text
			}
		}
		if second != "Where to?" {
			t.Errorf("message #2 is %q, want Where to?", second)
		}
		fork := harness.ForkREST(t, s.APIURL, task.ID, 2)
		harness.WantState(t, fork, a2a.TaskStateInputRequired, "Where to?")
		_, forked, raw := getTimeline(t, s.APIURL, "", string(fork.ID), nil, nil)
		if diff := cmp.Diff([]string{"fork", "message #1 USER", "status WORKING", "message #2 AGENT", "status INPUT_REQUIRED"}, kinds(forked.Entries)); diff != "" {
			t.Errorf("the fork's timeline (-want +got):\n%s\n%s", diff, raw)
		}
		// Pages of any size are the whole timeline.
		whole := allTimeline(t, s.APIURL, "", string(task.ID), 1000)
		for _, size := range []int{1, 2, 5} {
			if diff := cmp.Diff(whole, allTimeline(t, s.APIURL, "", string(task.ID), size), cmp.Comparer(func(a, b json.RawMessage) bool {
				return string(a) == string(b)
			})); diff != "" {
				t.Errorf("in pages of %d (-whole +pages):\n%s", size, diff)
			}
		}
	})

	t.Run("expense approval", func(t *testing.T) {
		c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
		task, id := expense(t, ctx, c, "250 EUR training course")
		_, waiting, raw := getTimeline(t, s.APIURL, "/agents/expenses", string(task.ID), nil, nil)
		if w := waiting.WaitingFor; w == nil || w.Kind != "approval" || w.ApprovalID != id || !strings.Contains(w.Text, "training course") {
			t.Errorf("waitingFor %+v, want approval %s:\n%s", w, id, raw)
		}
		if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", fiona, map[string]any{"approved": true, "comment": "within budget"}, nil); code != 200 {
			t.Fatalf("decision: HTTP %d", code)
		}
		waitState(t, ctx, c, task.ID, a2a.TaskStateCompleted)
		_, page, raw := getTimeline(t, s.APIURL, "/agents/expenses", string(task.ID), nil, nil)
		want := []string{"message #1 USER", "status WORKING", "message #2 AGENT", "approval", "status INPUT_REQUIRED",
			"message #3 AGENT", "artifact", "status COMPLETED"}
		if diff := cmp.Diff(want, kinds(page.Entries)); diff != "" {
			t.Errorf("expense timeline (-want +got):\n%s\n%s", diff, raw)
		}
		for _, e := range page.Entries {
			if a := e.Approval; a != nil {
				if a.ID != id || a.State != "approved" || a.Quorum != 1 || a.Title != "Expense of 250.00 EUR: training course" ||
					len(a.Groups) != 1 || a.Groups[0] != "finance" || len(a.Decisions) != 1 || a.Decisions[0].By != "fiona" ||
					a.Decisions[0].Decision != "approved" || a.Decisions[0].Comment != "within budget" {
					t.Errorf("approval entry %+v", a)
				}
			}
		}
		if page.WaitingFor != nil {
			t.Errorf("a completed expense waits for %+v", page.WaitingFor)
		}
	})

	t.Run("gated tool call", func(t *testing.T) {
		c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/payables")
		task := harness.Send(t, ctx, c, "", "pay INV-2 1500")
		id := pendingApproval(t, task)
		edited := map[string]any{"invoice": "INV-2", "amount": 900, "currency": "EUR"}
		if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", fiona, map[string]any{"approved": true, "arguments": edited}, nil); code != 200 {
			t.Fatalf("decision: HTTP %d", code)
		}
		waitState(t, ctx, c, task.ID, a2a.TaskStateCompleted)
		_, page, raw := getTimeline(t, s.APIURL, "/agents/payables", string(task.ID), nil, nil)
		want := []string{"message #1 USER", "status WORKING", "model_call", "message #2 AGENT", "approval", "status INPUT_REQUIRED",
			"status WORKING", "tool_call", "model_call", "message #3 AGENT", "status COMPLETED"}
		if diff := cmp.Diff(want, kinds(page.Entries)); diff != "" {
			t.Errorf("gated call timeline (-want +got):\n%s\n%s", diff, raw)
		}
		turn := 0
		var cost float64
		for _, e := range page.Entries {
			switch {
			case e.Model != nil:
				turn++
				if e.Model.Turn != turn || e.Model.InputTokens != 100 || e.Model.OutputTokens != 20 || e.Model.Model != "gpt-4o-mini" ||
					math.Abs(e.Model.CostUSD-0.0004) > 1e-9 {
					t.Errorf("model call %d: %+v, want turn %d, 100+20 tokens at 0.0004 USD", turn, e.Model, turn)
				}
				// The first is a local activity (a blocking send's turn),
				// whose marker names neither: its result does.
				if e.Model.Provider == "" || e.Model.DurationMs <= 0 {
					t.Errorf("model call %d: %+v, want its provider and duration", turn, e.Model)
				}
				cost += e.Model.CostUSD
			case e.Tool != nil:
				var args, edit map[string]any
				_ = json.Unmarshal(e.Tool.Arguments, &args)
				_ = json.Unmarshal(e.Tool.EditedArguments, &edit)
				if e.Tool.Name != "pay_invoice" || e.Tool.ApprovalID != id || args["amount"] != float64(1500) || edit["amount"] != float64(900) ||
					!strings.Contains(string(e.Tool.Result), "paid invoice INV-2: 900.00 EUR") || e.Tool.Error != "" {
					t.Errorf("tool call %+v: args %s, edited %s, result %s", e.Tool, e.Tool.Arguments, e.Tool.EditedArguments, e.Tool.Result)
				}
			case e.Approval != nil:
				if e.Approval.State != "approved" || len(e.Approval.Decisions) != 1 || e.Approval.Decisions[0].By != "fiona" {
					t.Errorf("approval entry %+v", e.Approval)
				}
			}
		}
		if page.CostUSD == nil || math.Abs(*page.CostUSD-cost) > 1e-9 || math.Abs(cost-0.0008) > 1e-9 {
			t.Errorf("costUsd %v, want the model calls' %v (0.0008)", page.CostUSD, cost)
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		c, _ := harness.NewClient(t, ctx, s.APIURL)
		task := harness.Send(t, ctx, c, "", "Book a flight")
		for _, q := range []url.Values{
			{"pageSize": {"0"}}, {"pageSize": {"1001"}}, {"pageSize": {"ten"}}, {"pageSize": {"-1"}},
			{"pageToken": {"not-a-token"}}, {"pageToken": {"eyJ0IjoieCJ9"}},
		} {
			if code, _, raw := getTimeline(t, s.APIURL, "", string(task.ID), q, nil); code != http.StatusBadRequest {
				t.Errorf("%v: HTTP %d %s, want 400", q, code, raw)
			}
		}
		// Another task's token.
		other := harness.Send(t, ctx, c, "", "Book a flight")
		_, first, _ := getTimeline(t, s.APIURL, "", string(other.ID), url.Values{"pageSize": {"1"}}, nil)
		if first.NextPageToken == "" {
			t.Fatal("no second page")
		}
		if code, _, raw := getTimeline(t, s.APIURL, "", string(task.ID), url.Values{"pageToken": {first.NextPageToken}}, nil); code != http.StatusBadRequest {
			t.Errorf("another task's token: HTTP %d %s, want 400", code, raw)
		}
		// The task's own token, naming a run of no task, or a Temporal page
		// that is none (the token is base64url JSON: a client could forge it).
		forge := func(key string, value any) string {
			raw, _ := base64.RawURLEncoding.DecodeString(first.NextPageToken)
			var tok map[string]any
			if err := json.Unmarshal(raw, &tok); err != nil {
				t.Fatalf("the page token %q: %v", first.NextPageToken, err)
			}
			tok[key] = value
			raw, _ = json.Marshal(tok)
			return base64.RawURLEncoding.EncodeToString(raw)
		}
		for _, forged := range []string{forge("r", "0b5d7a4e-1c1f-4a3e-9d8e-000000000000"), forge("p", base64.StdEncoding.EncodeToString([]byte("not a page")))} {
			if code, _, raw := getTimeline(t, s.APIURL, "", string(other.ID), url.Values{"pageToken": {forged}}, nil); code != http.StatusBadRequest {
				t.Errorf("a forged token: HTTP %d %s, want 400", code, raw)
			}
		}
		for _, path := range []string{"", "/agents/expenses"} {
			// Unknown, and another agent's task.
			for _, id := range []string{"0b5d7a4e-1c1f-4a3e-9d8e-000000000000", string(task.ID)} {
				if path == "" && id == string(task.ID) {
					continue
				}
				if code, _, raw := getTimeline(t, s.APIURL, path, id, nil, nil); code != http.StatusNotFound {
					t.Errorf("%s task %s: HTTP %d %s, want 404", path, id, code, raw)
				}
			}
		}
		if code, _ := harness.ForkCall(t, s.APIURL+"/tasks/"+string(task.ID)+"/timeline", map[string]any{}); code != http.StatusMethodNotAllowed {
			t.Errorf("POST timeline: HTTP %d, want 405", code)
		}
		_, page, _ := getTimeline(t, s.APIURL, "", string(task.ID), nil, nil)
		if w := page.WaitingFor; w == nil || w.Kind != "input" || w.Text != "Where to?" {
			t.Errorf("waitingFor %+v, want the question", w)
		}
	})
}

// TestTimelineOwner: with API keys on, a task's timeline is its owner's:
// another owner is told it does not exist, as for an unknown task.
func TestTimelineOwner(t *testing.T) {
	s := harness.StartServe(t, t.TempDir(), "--api-keys", "alice=alice-key-0123456789,bob=bob-key-0123456789")
	alice := map[string]string{"X-API-Key": "alice-key-0123456789", "A2A-Version": "1.0"}
	bob := map[string]string{"X-API-Key": "bob-key-0123456789", "A2A-Version": "1.0"}
	var sent struct {
		Task a2a.Task `json:"task"`
	}
	body := map[string]any{"message": map[string]any{"messageId": "timeline-owner-1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "Book a flight"}}}}
	if code := postJSON(t, s.APIURL+"/message:send", alice, body, &sent); code != http.StatusOK || sent.Task.ID == "" {
		t.Fatalf("alice's send: HTTP %d %+v", code, sent)
	}
	task := sent.Task
	if code, page, raw := getTimeline(t, s.APIURL, "", string(task.ID), nil, alice); code != http.StatusOK || len(page.Entries) == 0 {
		t.Fatalf("alice's timeline: HTTP %d %s", code, raw)
	}
	for _, who := range []map[string]string{bob, {"A2A-Version": "1.0"}} {
		code, _, raw := getTimeline(t, s.APIURL, "", string(task.ID), nil, who)
		want := http.StatusNotFound
		if who["X-API-Key"] == "" {
			want = http.StatusUnauthorized
		}
		if code != want || strings.Contains(raw, "Book a flight") {
			t.Errorf("%v: HTTP %d %s, want %d telling nothing", who, code, raw, want)
		}
	}
}

// TestTimelineContinuedAsNew: a task that continued as new (Temporal
// suggests it every 60 events here) has one timeline across its runs:
// every message once, at its position, the runs' ends marked, the runs in
// order, and pages of any size make up the whole.
func TestTimelineContinuedAsNew(t *testing.T) {
	s := harness.StartServe(t, t.TempDir(), "--temporal-dynamic-config", "limit.historyCount.suggestContinueAsNew=60")
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)
	task := harness.Send(t, ctx, c, "", "Book a flight")
	task = harness.Send(t, ctx, c, task.ID, "Lisbon")
	const wrong = 40
	for i := range wrong {
		task = harness.Send(t, ctx, c, task.ID, fmt.Sprintf("not a date %d", i))
	}
	harness.WantState(t, task, a2a.TaskStateInputRequired, "")
	code, page, raw := getTimeline(t, s.APIURL, "", string(task.ID), url.Values{"pageSize": {"1000"}}, nil)
	if code != http.StatusOK {
		t.Fatalf("timeline: HTTP %d %s", code, raw)
	}
	next, runs, continued := 1, []string{}, 0
	for _, e := range page.Entries {
		if len(runs) == 0 || runs[len(runs)-1] != e.RunID {
			for _, r := range runs {
				if r == e.RunID {
					t.Fatalf("run %s comes back after another run", e.RunID)
				}
			}
			runs = append(runs, e.RunID)
		}
		switch {
		case e.Message != nil:
			if e.Message.MessageIndex != next {
				t.Fatalf("message #%d where #%d was due:\n%s", e.Message.MessageIndex, next, raw)
			}
			next++
		case e.Kind == "continue_as_new":
			continued++
		}
	}
	full, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if next-1 != len(full.History) || len(full.History) < 2*(wrong+2) {
		t.Errorf("%d messages in the timeline, %d in the task's history", next-1, len(full.History))
	}
	if continued == 0 || len(runs) != continued+1 {
		t.Errorf("%d continue_as_new entries over %d runs, want some, one run more:\n%s", continued, len(runs), raw)
	}
	whole := allTimeline(t, s.APIURL, "", string(task.ID), 1000)
	for _, size := range []int{3, 7} {
		if diff := cmp.Diff(whole, allTimeline(t, s.APIURL, "", string(task.ID), size), cmp.Comparer(func(a, b json.RawMessage) bool {
			return string(a) == string(b)
		})); diff != "" {
			t.Errorf("in pages of %d (-whole +pages):\n%s", size, diff)
		}
	}
}
