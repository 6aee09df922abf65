package tests

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"go.temporal.io/api/enums/v1"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// fakeRouterLLM is an OpenAI Chat Completions endpoint for the router: a
// RoutingDecision from words in the request, a FollowUpDecision that
// answers "Ada" when the request said "my name is Ada", and plain text for
// the llm tool.
func fakeRouterLLM(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := fakes.ReadChat(w, r)
		if !ok {
			return
		}
		prompt := fmt.Sprint(req.Last().Content)
		request := prompt
		if i := strings.LastIndex(prompt, "Request:\n"); i >= 0 {
			request = prompt[i+len("Request:\n"):]
		}
		var answer string
		switch {
		case req.Format != nil && req.Format.Schema.Name == "FollowUpDecision":
			if strings.Contains(prompt, "my name is Ada") {
				answer = `{"decision":"HANDLE_DIRECTLY","answer":"Ada"}`
			} else {
				answer = `{"decision":"NEED_HUMAN_INPUT","answer":""}`
			}
		case req.Format != nil && strings.Contains(request, "time is it") && strings.Contains(request, "User's answer: Tokyo"):
			answer = `{"decision":"LOCAL","tool":"clock","params":"{\"timeZone\":\"Asia/Tokyo\"}","agent":"","reason":"the time in Tokyo"}`
		case req.Format != nil && strings.Contains(request, "time is it"):
			answer = `{"decision":"LOCAL","tool":"human_input","params":"{\"question\":\"In which city?\"}","agent":"","reason":"the city is missing"}`
		case req.Format != nil && strings.Contains(request, "6*7"):
			answer = `{"decision":"LOCAL","tool":"calculator","params":"{\"expression\":\"6*7\"}","agent":"","reason":"arithmetic"}`
		case req.Format != nil && strings.Contains(request, "greet"):
			answer = `{"decision":"REMOTE","tool":"","params":"","agent":"ext","reason":"ext greets people"}`
		case req.Format != nil && strings.Contains(request, "ghost"):
			answer = `{"decision":"REMOTE","tool":"","params":"","agent":"ghost","reason":"ghost knows"}`
		case req.Format != nil && strings.Contains(request, "steal"):
			answer = `{"decision":"REJECT","tool":"","params":"","agent":"","reason":"I will not help with theft."}`
		case req.Format != nil:
			answer = `{"decision":"LOCAL","tool":"llm","params":"{\"prompt\":\"hello\"}","agent":"","reason":"chat"}`
		default:
			answer = "local answer"
		}
		fakes.WriteChat(w, false, "chatcmpl-router", req.Model, fakes.TextMessage(answer), 10, 5)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// routerSend sends parts to the router as a new task (or to taskID) and returns the task.
func routerSend(t *testing.T, ctx context.Context, c *a2aclient.Client, taskID a2a.TaskID, parts ...*a2a.Part) *a2a.Task {
	t.Helper()
	msg := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	msg.TaskID = taskID
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage returned %T, want a task", res)
	}
	return task
}

func routeOf(t *testing.T, task *a2a.Task) map[string]any {
	t.Helper()
	r, _ := task.Metadata["a2aflow.route"].(map[string]any)
	if r == nil {
		t.Fatalf("task %s has no a2aflow.route metadata: %v", task.ID, task.Metadata)
	}
	return r
}

// TestDelegation runs the router of one a2aflow against a remote agent
// that is a2a-go's own server: @mentions, a remote question answered by our
// user and by the LLM (over JSON-RPC 1.0, HTTP+JSON 1.0, and both bindings
// of A2A 0.3), artifacts copied, streaming and polling, a remote
// rejection, cancel propagation, an unreachable agent within the retry
// budget, local tools by data part, LLM routing with its fallbacks, and a
// kill -9 of a2aflow while it follows the remote task (exactly one remote
// task is created).
func TestDelegation(t *testing.T) {
	ext := &fakes.ExtAgent{}
	streamSrv := fakes.ServeExt(t, ext, true)
	pollSrv := fakes.ServeExt(t, ext, false)
	downSrv := fakes.ServeExt(t, ext, true)
	const extToken = "ext-token-0123456789"
	authSrv := fakes.ServeExtAuth(t, ext, true, extToken)
	llmSrv := fakeRouterLLM(t)

	// The credentials file names the token by environment variable: the
	// secret lives in the worker's environment, never in a task.
	t.Setenv("EXT_TOKEN", extToken)
	credentials := filepath.Join(t.TempDir(), "credentials.json")
	if err := os.WriteFile(credentials, []byte(`{"ext-auth": {"bearer": "env:EXT_TOKEN"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	harness.AddAgent(t, dataDir, "ext", streamSrv.URL)
	harness.AddAgent(t, dataDir, "ext-poll", pollSrv.URL)
	harness.AddAgent(t, dataDir, "ext-auth", authSrv.URL, "--auth-ref", "ext-auth", "--outbound-credentials", credentials)
	harness.AddAgent(t, dataDir, "down", downSrv.URL)
	// Agents that speak one other variant only: 0.3 over HTTP+JSON, 0.3
	// over JSON-RPC, 1.0 over HTTP+JSON.
	for name, v := range map[string]matrixVariant{"ext-rest-v03": httpJSON03, "ext-rpc-v03": jsonRPC03, "ext-rest": httpJSON10} {
		srv, _ := serveExtAs(t, ext, v)
		harness.AddAgent(t, dataDir, name, srv.URL)
	}
	downSrv.Close() // known to the directory, unreachable from now on

	fakes.UseOpenAI(t, llmSrv.URL, "sk-router", "fake-model")
	s := harness.StartServe(t, dataDir, "--delegation-retry-budget", "6s", "--outbound-credentials", credentials)
	ctx := harness.Context(t)
	c, card := harness.NewClient(t, ctx, s.APIURL+"/agents/router")
	if card.Name != "router" {
		t.Fatalf("card name = %q, want router", card.Name)
	}
	text := a2a.NewTextPart

	for _, agent := range []string{"ext", "ext-poll", "ext-rest-v03", "ext-rpc-v03", "ext-rest"} {
		t.Run("question answered by the user, "+agent, func(t *testing.T) {
			task := routerSend(t, ctx, c, "", text("@"+agent+" ask"))
			harness.WantState(t, task, a2a.TaskStateInputRequired, "What is your name?")
			task = routerSend(t, ctx, c, task.ID, text("Ada"))
			harness.WantState(t, task, a2a.TaskStateCompleted, "Greeted Ada")
			if r := routeOf(t, task); r["decision"] != "REMOTE" || r["agent"] != agent || r["by"] != "@mention" {
				t.Errorf("route = %v, want REMOTE to %s by @mention", r, agent)
			}
			if len(task.Artifacts) != 1 || task.Artifacts[0].Name != "greeting" || task.Artifacts[0].Parts[0].Text() != "Hello, Ada" {
				t.Fatalf("artifacts = %v, want the remote greeting", task.Artifacts)
			}
			src, _ := task.Artifacts[0].Metadata["a2aflow.source"].(map[string]any)
			if src["agent"] != agent || src["taskId"] == "" {
				t.Errorf("artifact source = %v, want agent %s and its task", src, agent)
			}
			dels, _ := task.Metadata["a2aflow.delegations"].([]any)
			if len(dels) != 1 || dels[0].(map[string]any)["state"] != string(a2a.TaskStateCompleted) {
				t.Errorf("delegations = %v, want one completed", task.Metadata["a2aflow.delegations"])
			}
			if n := len(ext.Started(string(task.ID))); n != 1 {
				t.Errorf("the remote agent started %d tasks for ours, want 1", n)
			}
			// To an agent that streams, each send reads the task until it
			// moves on (to the question, then past the answer; it does at
			// once): no follow activity. (A polled agent may have moved on
			// by the time the send answers, or not.)
			if acts := scheduledActivities(t, ctx, s, task.ID); agent != "ext-poll" && slices.Contains(acts, wire.ActivityFollowRemoteTask) {
				t.Errorf("activities of a delegation to %s, which streams: %v, want no follow", agent, acts)
			}
			if agent == "ext" {
				// router-delegation.history.json was recorded before the
				// router sent an @mention without reading the directory
				// first (GetVersion router-mention-no-directory-read),
				// router-delegation-mention.history.json before blocking
				// sends asked for the task in the update's result
				// (WantTask), activities got the owner in a header and
				// an answer named the question it answers (Answered).
				replayAndRecord(t, ctx, s, task.ID, "router-delegation-owner.history.json")
			}
		})
	}

	for _, agent := range []string{"ext", "ext-poll"} {
		t.Run("message answer, "+agent, func(t *testing.T) {
			// The remote agent answers with a message, no task: streamed
			// or not, the message is the delegation's answer.
			task := routerSend(t, ctx, c, "", text("@"+agent+" reply"))
			harness.WantState(t, task, a2a.TaskStateCompleted, "replied: reply")
		})
	}

	t.Run("question answered by the LLM", func(t *testing.T) {
		task := routerSend(t, ctx, c, "", text("please greet me, my name is Ada, ask me if you must"))
		harness.WantState(t, task, a2a.TaskStateCompleted, "Greeted Ada")
		if r := routeOf(t, task); r["decision"] != "REMOTE" || r["agent"] != "ext" || r["by"] != "llm" {
			t.Errorf("route = %v, want REMOTE to ext by llm", r)
		}
		// router-llm.history.json was recorded before the task's token
		// usage went into its memo (GetVersion a2aflow.llm-usage-memo).
		replayAndRecord(t, ctx, s, task.ID, "router-llm-usage.history.json")
	})

	t.Run("credentials from the keyring", func(t *testing.T) {
		task := routerSend(t, ctx, c, "", text("@ext-auth hello"))
		harness.WantState(t, task, a2a.TaskStateCompleted, "done: hello")
		if strings.Contains(string(historyBytes(t, ctx, s.TemporalAddr, task.ID)), extToken) {
			t.Errorf("the workflow history of %s holds the remote agent's token", task.ID)
		}
	})

	t.Run("remote rejects", func(t *testing.T) {
		task := routerSend(t, ctx, c, "", text("@ext reject this"))
		harness.WantState(t, task, a2a.TaskStateRejected, "ext rejected the task: not today")
	})

	t.Run("unknown agent", func(t *testing.T) {
		task := routerSend(t, ctx, c, "", text("@nobody hi"))
		harness.WantState(t, task, a2a.TaskStateRejected, "")
		if got := harness.StatusText(task); !strings.Contains(got, `no agent named "nobody"`) || !strings.Contains(got, "ext-poll") {
			t.Errorf("status = %q, want the unknown name and the known ones", got)
		}
	})

	t.Run("cancel propagates", func(t *testing.T) {
		msg := a2a.NewMessage(a2a.MessageRoleUser, text("@ext slow"))
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
		if err != nil {
			t.Fatal(err)
		}
		id := res.(*a2a.Task).ID
		var remoteID string
		waitFor(t, 30*time.Second, func() bool {
			task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
			if err != nil {
				return false
			}
			dels, _ := task.Metadata["a2aflow.delegations"].([]any)
			if len(dels) == 1 {
				remoteID, _ = dels[0].(map[string]any)["taskId"].(string)
			}
			return remoteID != ""
		})
		task, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		harness.WantState(t, task, a2a.TaskStateCanceled, "")
		waitFor(t, 30*time.Second, func() bool { return ext.WasCanceled(a2a.TaskID(remoteID)) })
	})

	t.Run("unreachable agent within the retry budget", func(t *testing.T) {
		start := time.Now()
		task := routerSend(t, ctx, c, "", text("@down hello"))
		harness.WantState(t, task, a2a.TaskStateFailed, "")
		if got := harness.StatusText(task); !strings.Contains(got, "agent down") || !strings.Contains(got, "retry budget of 6s") {
			t.Errorf("status = %q, want a clear failure naming the agent and the budget", got)
		}
		// Retries at 1 s and 3 s; the next (7 s) would pass the budget.
		if took := time.Since(start); took < 2*time.Second || took > 20*time.Second {
			t.Errorf("failed after %s; want the retries of a 6 s budget", took)
		}
	})

	t.Run("local tools by data part", func(t *testing.T) {
		tool := func(name string, params any) *a2a.Part {
			return a2a.NewDataPart(map[string]any{"tool": name, "params": params})
		}
		task := routerSend(t, ctx, c, "", tool("echo", map[string]any{"text": "hi"}))
		harness.WantState(t, task, a2a.TaskStateCompleted, `{"text":"hi"}`)
		task = routerSend(t, ctx, c, "", tool("calculator", map[string]any{"expression": "6*7"}))
		harness.WantState(t, task, a2a.TaskStateCompleted, "")
		if !strings.Contains(harness.StatusText(task), `"result":"42"`) {
			t.Errorf("calculator status = %q", harness.StatusText(task))
		}
		task = routerSend(t, ctx, c, "", tool("list_agents", map[string]any{}))
		if !strings.Contains(harness.StatusText(task), `"name":"ext-poll"`) {
			t.Errorf("list_agents status = %q, want the directory", harness.StatusText(task))
		}
		task = routerSend(t, ctx, c, "", tool("nope", map[string]any{}))
		harness.WantState(t, task, a2a.TaskStateRejected, "")
		if !strings.Contains(harness.StatusText(task), `unknown tool "nope"; local tools: calculator, clock, echo`) {
			t.Errorf("unknown tool status = %q", harness.StatusText(task))
		}
		task = routerSend(t, ctx, c, "", tool("calculator", map[string]any{"expression": 7}))
		harness.WantState(t, task, a2a.TaskStateRejected, "")
	})

	t.Run("LLM routes", func(t *testing.T) {
		task := routerSend(t, ctx, c, "", text("what is 6*7?"))
		harness.WantState(t, task, a2a.TaskStateCompleted, "")
		if r := routeOf(t, task); r["decision"] != "LOCAL" || r["tool"] != "calculator" || !strings.Contains(harness.StatusText(task), "42") {
			t.Errorf("route = %v, status %q; want LOCAL calculator with 42", r, harness.StatusText(task))
		}
		task = routerSend(t, ctx, c, "", text("ask the ghost"))
		harness.WantState(t, task, a2a.TaskStateCompleted, "local answer")
		if r := routeOf(t, task); r["decision"] != "LOCAL" || r["tool"] != "llm" || r["by"] != "fallback" {
			t.Errorf("route = %v, want the local llm fallback for an unknown agent", r)
		}
		task = routerSend(t, ctx, c, "", text("help me steal a car"))
		harness.WantState(t, task, a2a.TaskStateRejected, "I will not help with theft.")
	})

	t.Run("LLM asks the user (human_input), then routes again", func(t *testing.T) {
		task := routerSend(t, ctx, c, "", text("what time is it?"))
		harness.WantState(t, task, a2a.TaskStateInputRequired, "In which city?")
		if r := routeOf(t, task); r["tool"] != "human_input" {
			t.Errorf("route while asking = %v, want LOCAL human_input", r)
		}
		task = routerSend(t, ctx, c, task.ID, text("Tokyo"))
		harness.WantState(t, task, a2a.TaskStateCompleted, "")
		if !strings.Contains(harness.StatusText(task), `"timeZone":"Asia/Tokyo"`) {
			t.Errorf("status = %q, want the clock in Asia/Tokyo", harness.StatusText(task))
		}
		if r := routeOf(t, task); r["decision"] != "LOCAL" || r["tool"] != "clock" || r["by"] != "llm" {
			t.Errorf("route after the answer = %v, want LOCAL clock by the llm", r)
		}
		replayAndRecord(t, ctx, s, task.ID, "router-human-input.history.json")
	})

	// The retry budget (6 s here) counts attempts, not time: serve killed
	// during a send and kept down longer than the budget still delivers the
	// message once it is back (the retried send carries the same message
	// ID), where a ScheduleToClose timer would have failed the task.
	t.Run("kill -9 during a send, down longer than the retry budget", func(t *testing.T) {
		msg := a2a.NewMessage(a2a.MessageRoleUser, text("@ext stall"))
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
		if err != nil {
			t.Fatal(err)
		}
		id := res.(*a2a.Task).ID
		waitFor(t, 30*time.Second, func() bool { return len(ext.Started(string(id))) == 1 })
		s.Proc().Kill() // the send waits for the remote agent's answer
		time.Sleep(10 * time.Second)
		s.Restart()
		c, _ = harness.NewClient(t, ctx, s.APIURL+"/agents/router")
		var task *a2a.Task
		waitFor(t, 90*time.Second, func() bool {
			task, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
			return err == nil && task.Status.State.Terminal()
		})
		harness.WantState(t, task, a2a.TaskStateCompleted, "done: stall")
		// a2a-go's server does not deduplicate message IDs: the retried send
		// started a second remote task, with the same message ID.
		if got := ext.Started(string(id)); len(got) != 2 || got[0] != got[1] {
			t.Errorf("the remote agent started tasks for messages %v, want the same message twice", got)
		}
	})

	// slowAsk sends "@ext slowask" without waiting: the remote task works
	// for 4 s, then asks "What is your name?".
	slowAsk := func(t *testing.T) a2a.TaskID {
		t.Helper()
		msg := a2a.NewMessage(a2a.MessageRoleUser, text("@ext slowask"))
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
		if err != nil {
			t.Fatal(err)
		}
		return res.(*a2a.Task).ID
	}
	// killAndFinish kills serve with kill -9 and starts it again; the task
	// then waits with the remote question, takes the answer and completes,
	// and the remote agent started one task for it, not two.
	killAndFinish := func(t *testing.T, id a2a.TaskID) {
		t.Helper()
		s.Proc().Kill()
		s.Restart()
		c, _ = harness.NewClient(t, ctx, s.APIURL+"/agents/router")
		var task *a2a.Task
		var err error
		waitFor(t, 90*time.Second, func() bool {
			task, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
			return err == nil && task.Status.State == a2a.TaskStateInputRequired
		})
		harness.WantState(t, task, a2a.TaskStateInputRequired, "What is your name?")
		task = routerSend(t, ctx, c, id, text("Grace"))
		harness.WantState(t, task, a2a.TaskStateCompleted, "Greeted Grace")
		if got := ext.Started(string(id)); len(got) != 1 {
			t.Errorf("the remote agent started tasks for messages %v, want exactly one", got)
		}
	}

	// A send that got its remote task, not settled, records the task's ID as
	// the activity's heartbeat and reads the task again for a second: serve
	// killed then, the retried send reads that task instead of sending the
	// message again (a2a-go's server would start a second task).
	t.Run("kill -9 after the send got the remote task", func(t *testing.T) {
		id := slowAsk(t)
		waitFor(t, 30*time.Second, func() bool { return len(ext.Started(string(id))) == 1 })
		// The remote task's ID is in the send's heartbeat on the server
		// (relayBeat's "t"), not merely 300 ms later: a loaded machine may
		// take longer, and the retried send would then send again.
		tc := dialTemporal(t, s)
		began := time.Now()
		waitFor(t, 30*time.Second, func() bool {
			d, err := tc.DescribeWorkflowExecution(ctx, string(id), "")
			if err != nil {
				return false
			}
			for _, a := range d.GetPendingActivities() {
				for _, p := range a.GetHeartbeatDetails().GetPayloads() {
					if strings.Contains(string(p.GetData()), `"t":"`) {
						return true
					}
				}
			}
			return false
		})
		t.Logf("the remote task's ID was in the heartbeat details %s after the remote agent started it", time.Since(began).Round(time.Millisecond))
		tc.Close()
		killAndFinish(t, id)
	})

	t.Run("kill -9 while following", func(t *testing.T) {
		id := slowAsk(t)
		// Killed once the send is recorded (the remote task's ID in our
		// task's delegations): a send in flight is retried, and a2a-go's
		// server would start a second task (see the test above).
		waitFor(t, 30*time.Second, func() bool {
			task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
			if err != nil {
				return false
			}
			dels, _ := task.Metadata["a2aflow.delegations"].([]any)
			if len(dels) != 1 {
				return false
			}
			remote, _ := dels[0].(map[string]any)["taskId"].(string)
			return remote != ""
		})
		killAndFinish(t, id) // while the remote task works and we follow it
	})
}

// scheduledActivities returns the activity types the task's workflow
// scheduled, in order.
func scheduledActivities(t *testing.T, ctx context.Context, s *harness.Server, id a2a.TaskID) []string {
	t.Helper()
	var types []string
	it := dialTemporal(t, s).GetWorkflowHistory(ctx, string(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			types = append(types, a.GetActivityType().GetName())
		}
	}
	return types
}
