package tests

import (
	"context"
	"iter"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// progressAgent is a remote A2A agent (a2a-go's server) that reports its
// progress: it sends each of its steps as a working status message, step
// apart, then completes with "all done".
type progressAgent struct {
	fakes.CancelsAtOnce
	steps []string
	step  time.Duration
}

func (p *progressAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		says := func(s string) *a2a.Message { return a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(s)) }
		for _, s := range p.steps {
			if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, says(s)), nil) {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(p.step):
			}
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, says("all done")), nil)
	}
}

// serveProgress serves p with a card that offers streaming or not.
func serveProgress(t testing.TB, p *progressAgent, streaming bool) *httptest.Server {
	return fakes.RemoteAgent{Name: "progress", Description: "Works in steps.", Skill: "Work", SkillDoes: "Works in steps.", Streaming: streaming}.Serve(t, p)
}

// TestRemoteProgressRelayed: a task that delegates to a remote agent
// relays the remote's working status messages to its own stream as they
// come, as status updates (state working) marked relayed, before it
// completes; whether the remote streams (its first step read by the send,
// the next by the follow) or is polled. They stay out of the task's
// history: the task as read afterwards holds none of them.
func TestRemoteProgressRelayed(t *testing.T) {
	steps := []string{"step 1 of 3: reading", "step 2 of 3: thinking", "step 3 of 3: writing"}
	streamSrv := serveProgress(t, &progressAgent{steps: steps, step: 1500 * time.Millisecond}, true)
	// Polled every 2 s (the default): each step lasts longer.
	pollSrv := serveProgress(t, &progressAgent{steps: steps, step: 3 * time.Second}, false)
	llmSrv := fakeRouterLLM(t)
	dataDir := t.TempDir()
	harness.AddAgent(t, dataDir, "progress", streamSrv.URL)
	harness.AddAgent(t, dataDir, "progress-poll", pollSrv.URL)
	fakes.UseOpenAI(t, llmSrv.URL, "sk-router", "fake-model")
	s := harness.StartServe(t, dataDir)
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/router")

	for _, agent := range []string{"progress", "progress-poll"} {
		t.Run(agent, func(t *testing.T) {
			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("@"+agent+" go"))
			var relayed []string
			var taskID a2a.TaskID
			var final *a2a.TaskStatusUpdateEvent
			for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				switch e := ev.(type) {
				case *a2a.Task:
					taskID = e.ID
				case *a2a.TaskStatusUpdateEvent:
					if final != nil {
						t.Errorf("an event after the task ended: %+v", e)
					}
					live, _ := e.Metadata[wire.LiveMetadataKey].(map[string]any)
					if live["relayed"] == true {
						if e.Status.State != a2a.TaskStateWorking || e.Status.Message == nil || e.TaskID != taskID {
							t.Fatalf("relayed event %+v, want state working with a message, of task %s", e, taskID)
						}
						relayed = append(relayed, e.Status.Message.Parts[0].Text())
					}
					if e.Status.State.Terminal() {
						final = e
					}
				}
			}
			if final == nil || final.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("the stream ended without the task completing: %+v", final)
			}
			if !slices.Equal(relayed, steps) {
				t.Errorf("relayed %q, want the remote's steps %q, in order, before the end", relayed, steps)
			}
			task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID})
			if err != nil {
				t.Fatal(err)
			}
			harness.WantState(t, task, a2a.TaskStateCompleted, "")
			for _, m := range task.History {
				for _, p := range m.Parts {
					if strings.Contains(p.Text(), "step 2 of 3") {
						t.Errorf("the task's history holds a relayed message: %q", p.Text())
					}
				}
			}
			if h := string(historyBytes(t, ctx, s.TemporalAddr, taskID)); strings.Contains(h, "step 2 of 3") {
				t.Errorf("the workflow history of %s holds a relayed message", taskID)
			}
		})
	}
}
