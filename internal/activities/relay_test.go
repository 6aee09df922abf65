package activities_test

import (
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// stepsAgent reports each of its steps as a working status message (the
// second twice: the same message again), then completes.
type stepsAgent struct{}

func (stepsAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		says := func(s string) *a2a.Message { return a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(s)) }
		second := says("step two")
		for _, m := range []*a2a.Message{says("step one"), second, second, a2a.NewMessage(a2a.MessageRoleAgent)} {
			if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, m), nil) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, says("finished")), nil)
	}
}

func (stepsAgent) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(func(a2a.Event, error) bool) {}
}

type liveRecorder struct {
	mu     sync.Mutex
	deltas []hints.Delta
}

func (r *liveRecorder) Live(d hints.Delta) {
	r.mu.Lock()
	r.deltas = append(r.deltas, d)
	r.mu.Unlock()
}

// TestRemoteProgressRelayed: a send to a remote agent that streams relays
// its working status messages to Live as they come, whole, each once (a
// message sent again is not), named by the remote task and the message;
// a message without text, and the final status, are not relayed.
func TestRemoteProgressRelayed(t *testing.T) {
	var url string
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2asrv.AgentCardProducerFn(func(context.Context) (*a2a.AgentCard, error) {
		return &a2a.AgentCard{
			Name: "steps", Version: "1.0.0", Description: "Works in steps.",
			SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC)},
			Capabilities:        a2a.AgentCapabilities{Streaming: true},
			DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills: []a2a.AgentSkill{{ID: "do", Name: "Do", Description: "Does it."}},
		}, nil
	})))
	mux.Handle("/", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(stepsAgent{})))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	url = srv.URL

	rec := &liveRecorder{}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&activities.Remote{Outbound: outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")}), Live: rec})
	val, err := env.ExecuteActivity(wire.ActivitySendRemoteMessage, wire.RemoteSendInput{
		Agent: url, Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("go")),
	})
	if err != nil {
		t.Fatal(err)
	}
	var res wire.RemoteTaskResult
	if err := val.Get(&res); err != nil || res.Task == nil || res.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("send: %+v, %v; want the remote task completed", res, err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var texts []string
	calls := map[string]bool{}
	for _, d := range rec.deltas {
		if !d.Status || !d.Done || d.Offset != 0 || d.Task == "" || d.Attempt != 1 {
			t.Errorf("delta %+v, want a whole status message of a task", d)
		}
		if !strings.HasPrefix(d.Call, "remote-"+string(res.Task.ID)+"/") || calls[d.Call] {
			t.Errorf("delta named %q, want a name of its own after remote task %s", d.Call, res.Task.ID)
		}
		calls[d.Call] = true
		texts = append(texts, d.Text)
	}
	if strings.Join(texts, "|") != "step one|step two" {
		t.Errorf("relayed %q, want the two steps once each", texts)
	}
}
