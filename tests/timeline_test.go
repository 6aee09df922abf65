package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

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

// TestTimelineExplore prints timelines.
func TestTimelineExplore(t *testing.T) {
	model := newFakeToolLLM(t)
	ledger := filepath.Join(t.TempDir(), "ledger")
	payments := &mcptest.Payments{Ledger: ledger}
	mcpSrv := httptest.NewServer(payments.Handler())
	t.Cleanup(mcpSrv.Close)
	config := filepath.Join(t.TempDir(), "a2aflow.toml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(gatedToolsConfig, mcpSrv.URL+"/mcp")), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPENAI_BASE_URL=" + model.URL + "/v1", "OPENAI_API_KEY=sk-test", "ANTHROPIC_BASE_URL=" + model.URL, "ANTHROPIC_API_KEY=sk-ant-test"}
	s := harness.StartServeEnv(t, t.TempDir(), env, "--config", config, "--approver-groups", "fiona:finance")
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)
	travel := harness.TravelBooking(t, ctx, c)
	_, _, raw := getTimeline(t, s.APIURL, "", string(travel.ID), nil, nil)
	t.Logf("travel:\n%s", raw)

	ex, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
	task, id := expense(t, ctx, ex, "250 EUR training course")
	if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": "fiona"}, map[string]any{"approved": true, "comment": "ok"}, nil); code != 200 {
		t.Fatalf("decide: %d", code)
	}
	waitState(t, ctx, ex, task.ID, a2a.TaskStateCompleted)
	_, _, raw = getTimeline(t, s.APIURL, "/agents/expenses", string(task.ID), nil, nil)
	t.Logf("expenses:\n%s", raw)

	pay, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/payables")
	big := harness.Send(t, ctx, pay, "", "pay INV-2 1500")
	pid := pendingApproval(t, big)
	_, _, raw = getTimeline(t, s.APIURL, "/agents/payables", string(big.ID), nil, nil)
	t.Logf("payables waiting:\n%s", raw)
	if code := postJSON(t, s.APIURL+"/approvals/"+pid+"/decision", map[string]string{"X-Approver": "fiona"},
		map[string]any{"approved": true, "comment": "less", "arguments": map[string]any{"invoice": "INV-2", "amount": 900, "currency": "EUR"}}, nil); code != 200 {
		t.Fatalf("decide: %d", code)
	}
	waitState(t, ctx, pay, big.ID, a2a.TaskStateCompleted)
	_, _, raw = getTimeline(t, s.APIURL, "/agents/payables", string(big.ID), nil, nil)
	t.Logf("payables:\n%s", strings.ReplaceAll(raw, "},{", "},\n{"))
}
