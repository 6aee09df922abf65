package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// fakeOpenAI is an OpenAI Chat Completions endpoint scripted for the
// assistant, streaming its answers as OpenAI does (fakes.WriteChat): it asks the user's city with ask_user, computes 6*7 with the
// calculator, then answers; asked what came before, it lists the user
// messages it was sent. It decides from each request alone, as a real model
// does, so a retried call gets the same answer.
type fakeOpenAI struct {
	*httptest.Server
	mu    sync.Mutex
	calls []string // the last message of each request, for the test's report
	auth  []string // the Authorization header of each request
}

func newFakeOpenAI(t *testing.T) *fakeOpenAI {
	f := &fakeOpenAI{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"no such route","type":"invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		req, ok := fakes.ReadChat(w, r)
		if !ok {
			return
		}
		last := req.Last()
		f.mu.Lock()
		f.calls = append(f.calls, fmt.Sprintf("%s:%v", last.Role, last.Content))
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()

		var message string
		switch {
		case last.Role == "user" && last.Content == "What did I ask before?":
			var asked []string
			for _, m := range req.Messages[:len(req.Messages)-1] {
				if m.Role == "user" {
					asked = append(asked, fmt.Sprint(m.Content))
				}
			}
			message = fakes.TextMessage("You said: " + strings.Join(asked, " | "))
		case last.Role == "user":
			message = fakes.ToolCallMessage("call_ask", "ask_user", `{"question":"Which city are you in?"}`)
		case last.Role == "tool" && last.ToolCallID == "call_ask":
			message = fakes.ToolCallMessage("call_calc", "calculator", `{"expression":"6*7"}`)
		case last.Role == "tool" && last.ToolCallID == "call_calc":
			var out struct{ Result string }
			_ = json.Unmarshal([]byte(fmt.Sprint(last.Content)), &out)
			var city string
			for _, m := range req.Messages {
				if m.Role == "tool" && m.ToolCallID == "call_ask" {
					city = fmt.Sprint(m.Content)
				}
			}
			message = fakes.TextMessage(fmt.Sprintf("6*7 is %s. Greetings to %s!", out.Result, city))
		default:
			message = fakes.TextMessage("I am lost.")
		}
		fakes.WriteChat(w, req.Stream, "chatcmpl-e2e", req.Model, message, 100, 20)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeOpenAI) seen() (calls, auth []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...), append([]string(nil), f.auth...)
}

// TestAssistantAsksSurvivesKill runs the assistant through the A2A API on a
// fake OpenAI-compatible endpoint: the model asks the user a question through
// the ask_user tool, a2aflow is killed (kill -9) while the task waits and
// started again, the user answers, the model uses the calculator, and the
// task completes. A second task in the same context sees the first one's
// conversation, and the report agent refines a report across two tasks.
func TestAssistantAsksSurvivesKill(t *testing.T) {
	fake := newFakeOpenAI(t)
	// The serve process inherits the test's environment, also on restart.
	fakes.UseOpenAI(t, fake.URL, fakes.OpenAIKey, "fake-model")
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, card := harness.NewClient(t, ctx, s.APIURL+"/agents/assistant")
	if card.Name != "assistant" {
		t.Fatalf("card name = %q, want assistant", card.Name)
	}

	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("What is 6*7 in my city?"))
	msg.ContextID = "assistant-e2e"
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	harness.WantState(t, task, a2a.TaskStateInputRequired, "Which city are you in?")

	s.Proc().Kill()
	s.Restart()
	c, _ = harness.NewClient(t, ctx, s.APIURL+"/agents/assistant")
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	harness.WantState(t, got, a2a.TaskStateInputRequired, "Which city are you in?")

	task = harness.Send(t, ctx, c, task.ID, "Lisbon")
	harness.WantState(t, task, a2a.TaskStateCompleted, "")
	if got := harness.StatusText(task); got != "6*7 is 42. Greetings to Lisbon!" {
		t.Errorf("answer = %q, want the model's answer with the calculator's result", got)
	}
	wantUsage := map[string]any{"inputTokens": float64(300), "outputTokens": float64(60), "calls": float64(3)}
	if diff := cmp.Diff(any(wantUsage), task.Metadata["a2aflow.llmUsage"]); diff != "" {
		t.Errorf("usage metadata (-want +got):\n%s", diff)
	}

	calls, auth := fake.seen()
	wantCalls := []string{"user:What is 6*7 in my city?", "tool:Lisbon", `tool:{"expression":"6*7","result":"42"}`}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("LLM calls, by last message (-want +got); the restart must not repeat one:\n%s", diff)
	}
	for _, a := range auth {
		if a != "Bearer "+fakes.OpenAIKey {
			t.Errorf("Authorization = %q, want the configured key", a)
		}
	}

	// The workflow history reads like the conversation, and holds no key.
	tc, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	var activities, summaries []string
	iter := tc.GetWorkflowHistory(ctx, string(task.ID), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(ev.String(), fakes.OpenAIKey) {
			t.Errorf("history event %d (%s) contains the API key", ev.EventId, ev.EventType)
		}
		// An activity by its scheduled event, a local activity (the model
		// calls of a task the API started: TaskInput.LocalModelCalls) by
		// its marker.
		name := ""
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			name = a.ActivityType.GetName()
		} else if typ := localActivityType(ev); typ != "" {
			name = "local " + typ
		}
		if name != "" {
			activities = append(activities, name)
			var summary string
			if p := ev.GetUserMetadata().GetSummary(); p != nil {
				_ = converter.GetDefaultDataConverter().FromPayload(p, &summary)
			}
			summaries = append(summaries, summary)
		}
	}
	// Each tool call is judged by the approval policies first (the
	// DecidePolicy local activity: docs/guides/policies.md).
	if diff := cmp.Diff([]string{"ContextHistory", "local CompleteChat", "local DecidePolicy", "local CompleteChat", "local DecidePolicy",
		"tool:calculator", "local CompleteChat"}, activities); diff != "" {
		t.Errorf("activities (-want +got):\n%s", diff)
	}
	wantSummaries := []string{
		"read context assistant-e2e",
		"model call 1 (the worker's model), turn 1: user: What is 6*7 in my city?",
		"policy: callTool ask_user",
		"model call 2 (the worker's model), turn 2: tool result Lisbon",
		"policy: callTool calculator",
		`tool calculator {"expression":"6*7"}`,
		`model call 3 (the worker's model), turn 3: tool result {"expression":"6*7","result":"42"}`,
	}
	if diff := cmp.Diff(wantSummaries, summaries); diff != "" {
		t.Errorf("activity summaries (-want +got):\n%s", diff)
	}
	if strings.Contains(s.Proc().Out.String(), fakes.OpenAIKey) {
		t.Error("the server's output contains the API key")
	}
	// The task's model calls are local activities (TaskInput.LocalModelCalls);
	// its history replays, and with A2AFLOW_RECORD_HISTORY=1 it is
	// cmd/a2aflow/internal/demo/testdata/assistant-local-model-calls.history.json.
	replayAndRecord(t, ctx, s, task.ID, "assistant-local-model-calls.history.json")

	// A second task in the same context sees the first one's conversation.
	next := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("What did I ask before?"))
	next.ContextID = "assistant-e2e"
	res, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: next})
	if err != nil {
		t.Fatal(err)
	}
	second := res.(*a2a.Task)
	harness.WantState(t, second, a2a.TaskStateCompleted, "")
	if got := harness.StatusText(second); got != "You said: What is 6*7 in my city? | Lisbon" {
		t.Errorf("second task's answer = %q, want the first task's user messages", got)
	}

	// The report agent: a report, then a refinement in a follow-up task.
	rc, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/report")
	first := harness.Send(t, ctx, rc, "", "Q3 review\nRevenue grew 12%.")
	harness.WantState(t, first, a2a.TaskStateCompleted, "")
	refine := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Churn fell to 2%."))
	refine.ContextID = first.ContextID
	refine.ReferenceTasks = []a2a.TaskID{first.ID}
	res, err = rc.SendMessage(ctx, &a2a.SendMessageRequest{Message: refine})
	if err != nil {
		t.Fatal(err)
	}
	refined := res.(*a2a.Task)
	harness.WantState(t, refined, a2a.TaskStateCompleted, "")
	if len(refined.Artifacts) != 1 {
		t.Fatalf("refinement has %d artifacts, want 1", len(refined.Artifacts))
	}
	a := refined.Artifacts[0]
	if a.Name != "report" || a.Metadata["version"] != float64(2) || a.ID == first.Artifacts[0].ID {
		t.Errorf("refined artifact %s %q version %v, want a new artifact named report, version 2", a.ID, a.Name, a.Metadata["version"])
	}
	if got, want := a.Parts[0].Text(), "# Q3 review\n\nRevenue grew 12%.\n\n## Revision 2\n\nChurn fell to 2%.\n"; got != want {
		t.Errorf("refined report = %q, want %q", got, want)
	}
}

// localActivityType is the activity type of a local activity's marker
// event, "" for any other event.
func localActivityType(ev *historypb.HistoryEvent) string {
	m := ev.GetMarkerRecordedEventAttributes()
	if m.GetMarkerName() != "LocalActivity" {
		return ""
	}
	var data struct{ ActivityType string }
	if p := m.GetDetails()["data"].GetPayloads(); len(p) == 0 || json.Unmarshal(p[0].GetData(), &data) != nil {
		return ""
	}
	return data.ActivityType
}
