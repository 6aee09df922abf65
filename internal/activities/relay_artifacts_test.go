package activities_test

import (
	"context"
	"encoding/json"
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

// artifactsAgent streams its artifacts: "report" in three chunks, then
// "summary" whole; with replace, "report" is then replaced by a second
// version; then it completes.
type artifactsAgent struct{ replace bool }

func (g artifactsAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		chunk := func(id a2a.ArtifactID, text string, appendIt, last bool) *a2a.TaskArtifactUpdateEvent {
			e := a2a.NewArtifactUpdateEvent(ec, id, a2a.NewTextPart(text))
			e.Append, e.LastChunk = appendIt, last
			e.Artifact.Name = string(id)
			return e
		}
		events := []a2a.Event{
			chunk("report", "Hello, ", false, false),
			chunk("report", "wide ", true, false),
			chunk("report", "world.", true, true),
			chunk("summary", "greeting", false, true),
		}
		if g.replace {
			events = append(events, chunk("report", "Hello again.", false, true))
		}
		for _, e := range events {
			if !yield(e, nil) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("done"))), nil)
	}
}

func (artifactsAgent) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(func(a2a.Event, error) bool) {}
}

func serveArtifacts(t *testing.T, g artifactsAgent, streaming bool) string {
	var url string
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2asrv.AgentCardProducerFn(func(context.Context) (*a2a.AgentCard, error) {
		return &a2a.AgentCard{
			Name: "artifacts", Version: "1.0.0", Description: "Writes artifacts.",
			SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC)},
			Capabilities:        a2a.AgentCapabilities{Streaming: streaming},
			DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills: []a2a.AgentSkill{{ID: "write", Name: "Write", Description: "Writes."}},
		}, nil
	})))
	mux.Handle("/", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(g)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	url = srv.URL
	return url
}

// brokerRecorder hands each delta to a real broker and keeps it.
type brokerRecorder struct {
	*hints.Broker
	mu     sync.Mutex
	deltas []hints.Delta
}

func (r *brokerRecorder) Live(d hints.Delta) {
	r.mu.Lock()
	r.deltas = append(r.deltas, d)
	r.mu.Unlock()
	r.Broker.Live(d)
}

// shown is what a stream's cursor shows of the relayed artifacts: the
// artifacts by ID, as a client joining the chunks builds them, and the
// chunks' texts in order.
type shown struct {
	artifacts map[string]string
	chunks    []string
	restarts  int
}

func (s *shown) take(t *testing.T, lc *hints.LiveCursor) {
	chunks, _ := lc.Take()
	for _, ch := range chunks {
		if ch.Artifact == nil {
			continue
		}
		var text strings.Builder
		for line := range strings.SplitSeq(ch.Text, "\n") {
			if line == "" {
				continue
			}
			var p a2a.Part
			if err := json.Unmarshal([]byte(line), &p); err != nil {
				t.Fatalf("chunk %q: %v", ch.Text, err)
			}
			text.WriteString(p.Text())
		}
		if ch.Restart {
			s.artifacts[ch.Artifact.ID] = ""
			s.restarts++
		}
		s.artifacts[ch.Artifact.ID] += text.String()
		if text.Len() > 0 {
			s.chunks = append(s.chunks, text.String())
		}
	}
}

func relayEnv(t *testing.T, live hints.LiveNotifier) *testsuite.TestActivityEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&activities.Remote{Outbound: outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")}), Live: live})
	return env
}

// TestRemoteArtifactsRelayed: a send to a remote agent that streams its
// artifacts relays each artifact-update to Live as it comes, under the ID
// wire.RelayedArtifactID gives it in our task, in order, its chunks
// appended; a follow of the same remote task afterwards (another activity
// that reads it whole) shows no chunk twice.
func TestRemoteArtifactsRelayed(t *testing.T) {
	url := serveArtifacts(t, artifactsAgent{}, true)
	rec := &brokerRecorder{Broker: hints.New()}
	env := relayEnv(t, rec)
	val, err := env.ExecuteActivity(wire.ActivitySendRemoteMessage, wire.RemoteSendInput{
		Agent: url, Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("go")), RelayArtifacts: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	var res wire.RemoteTaskResult
	if err := val.Get(&res); err != nil || res.Task == nil || res.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("send: %+v, %v; want the remote task completed", res, err)
	}
	rec.mu.Lock()
	if len(rec.deltas) == 0 {
		t.Fatal("nothing relayed")
	}
	ourTask := rec.deltas[0].Task
	rec.mu.Unlock()
	report := wire.RelayedArtifactID(ourTask, res.Task.ID, "report")
	summary := wire.RelayedArtifactID(ourTask, res.Task.ID, "summary")

	// A stream that joined before the first chunk sees each in order.
	lc := rec.LiveCursor(ourTask)
	got := &shown{artifacts: map[string]string{}}
	got.take(t, lc)
	if got.artifacts[string(report)] != "Hello, wide world." || got.artifacts[string(summary)] != "greeting" || len(got.artifacts) != 2 {
		t.Errorf("shown %q, want report and summary whole", got.artifacts)
	}
	rec.mu.Lock()
	var texts []string
	for _, d := range rec.deltas {
		if d.Artifact == nil || d.Attempt != 1 {
			t.Errorf("delta %+v, want an artifact's, generation 1", d)
			continue
		}
		if d.Text != "" {
			var p a2a.Part
			_ = json.Unmarshal([]byte(strings.TrimSuffix(d.Text, "\n")), &p)
			texts = append(texts, p.Text())
		}
	}
	rec.mu.Unlock()
	if strings.Join(texts, "|") != "Hello, |wide |world.|greeting" {
		t.Errorf("relayed %q, want the chunks once each, in order", texts)
	}
	if res.Relayed != nil {
		t.Errorf("generations %v, want none above 1", res.Relayed)
	}

	// A follow reads the same task again: nothing more to show.
	val, err = env.ExecuteActivity(wire.ActivityFollowRemoteTask, wire.RemoteFollowInput{Agent: url, TaskID: res.Task.ID, RelayArtifacts: true})
	if err != nil {
		t.Fatal(err)
	}
	var followed wire.RemoteTaskResult
	if err := val.Get(&followed); err != nil || followed.Task == nil || followed.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("follow: %+v, %v; want the completed task", followed.Task, err)
	}
	again := &shown{artifacts: map[string]string{}}
	again.take(t, lc)
	if len(again.chunks) != 0 {
		t.Errorf("the follow showed %q again", again.chunks)
	}
}

// TestRemoteArtifactReplaced: an artifact the remote replaces (append
// false for one it sent) is the next generation: a stream shows it
// started over (append false), the result carries the generation, and a
// follow that knows it relays that generation, not the first again.
func TestRemoteArtifactReplaced(t *testing.T) {
	url := serveArtifacts(t, artifactsAgent{replace: true}, true)
	rec := &brokerRecorder{Broker: hints.New()}
	env := relayEnv(t, rec)
	val, err := env.ExecuteActivity(wire.ActivitySendRemoteMessage, wire.RemoteSendInput{
		Agent: url, Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("go")), RelayArtifacts: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	var res wire.RemoteTaskResult
	if err := val.Get(&res); err != nil || res.Task == nil {
		t.Fatalf("send: %+v, %v", res, err)
	}
	if res.Relayed["report"] != 2 {
		t.Errorf("generations %v, want report at 2", res.Relayed)
	}
	ourTask := rec.deltas[0].Task
	report := string(wire.RelayedArtifactID(ourTask, res.Task.ID, "report"))
	got := &shown{artifacts: map[string]string{}}
	got.take(t, rec.LiveCursor(ourTask))
	if got.artifacts[report] != "Hello again." {
		t.Errorf("report shown as %q, want its second version", got.artifacts[report])
	}

	// A follow given the generation (as the workflow hands it on) relays
	// the same version: a stream that saw it sees nothing new; without it
	// the version would be the first's, which the broker drops as older.
	lc := rec.LiveCursor(ourTask)
	lc.Take()
	n := len(rec.deltas)
	if _, err := env.ExecuteActivity(wire.ActivityFollowRemoteTask, wire.RemoteFollowInput{Agent: url, TaskID: res.Task.ID, RelayArtifacts: true, Relayed: res.Relayed}); err != nil {
		t.Fatal(err)
	}
	for _, d := range rec.deltas[n:] {
		if d.Artifact != nil && d.Artifact.ID == report && d.Attempt != 2 {
			t.Errorf("follow relayed %+v, want generation 2", d)
		}
	}
	again := &shown{artifacts: map[string]string{}}
	again.take(t, lc)
	if len(again.chunks) != 0 {
		t.Errorf("the follow showed %q again", again.chunks)
	}
}

// beatRecorder takes the heartbeats recorded at once (Remote.Heartbeats).
type beatRecorder struct {
	mu   sync.Mutex
	n    int
	last json.RawMessage
}

func (b *beatRecorder) RecordActivityHeartbeat(_ context.Context, _ []byte, details ...any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n++
	if len(details) == 1 {
		b.last, _ = details[0].(json.RawMessage)
	}
	return nil
}

// TestRemoteArtifactsDurableAcrossAttempts: the artifacts a remote
// finished are recorded in the activity's heartbeat details; an attempt
// retried after our worker died gets them and answers with them even if
// the remote no longer lists them, each once, and relays the generations
// recorded.
func TestRemoteArtifactsDurableAcrossAttempts(t *testing.T) {
	url := serveArtifacts(t, artifactsAgent{replace: true}, true)
	rec := &brokerRecorder{Broker: hints.New()}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	beats := &beatRecorder{}
	env.RegisterActivity(&activities.Remote{Outbound: outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")}), Live: rec, Heartbeats: beats})
	val, err := env.ExecuteActivity(wire.ActivitySendRemoteMessage, wire.RemoteSendInput{
		Agent: url, Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("go")), RelayArtifacts: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	var res wire.RemoteTaskResult
	if err := val.Get(&res); err != nil || res.Task == nil {
		t.Fatalf("send: %+v, %v", res, err)
	}
	beats.mu.Lock()
	beat := beats.last
	var recorded struct {
		Task        a2a.TaskID      `json:"t"`
		Generations map[string]int  `json:"g"`
		Finished    []*a2a.Artifact `json:"f"`
	}
	if err := json.Unmarshal(beat, &recorded); err != nil {
		t.Fatalf("heartbeat details %s: %v", beat, err)
	}
	beats.mu.Unlock()
	var finished []string
	for _, a := range recorded.Finished {
		var text strings.Builder
		for _, p := range a.Parts {
			text.WriteString(p.Text())
		}
		finished = append(finished, string(a.ID)+"="+text.String())
	}
	if recorded.Task != res.Task.ID || recorded.Generations["report"] != 2 || strings.Join(finished, "|") != "report=Hello again.|summary=greeting" {
		t.Fatalf("heartbeat details %s, want the remote task, report at generation 2, and both artifacts finished", beat)
	}

	if beats.n != 3 {
		t.Errorf("%d heartbeats recorded at once, want one per artifact finished (3), none per chunk", beats.n)
	}

	// The retried attempt (here a follow's) is given the details, plus an
	// artifact the remote finished and no longer lists.
	recorded.Finished = append(recorded.Finished, &a2a.Artifact{ID: "gone", Name: "gone", Parts: a2a.ContentParts{a2a.NewTextPart("kept")}})
	details, _ := json.Marshal(recorded)
	env2 := relayEnv(t, rec)
	env2.SetHeartbeatDetails(json.RawMessage(details))
	n := len(rec.deltas)
	val, err = env2.ExecuteActivity(wire.ActivityFollowRemoteTask, wire.RemoteFollowInput{Agent: url, TaskID: res.Task.ID, RelayArtifacts: true})
	if err != nil {
		t.Fatal(err)
	}
	var res2 wire.RemoteTaskResult
	if err := val.Get(&res2); err != nil || res2.Task == nil {
		t.Fatalf("follow: %+v, %v", res2, err)
	}
	var ids []string
	for _, a := range res2.Task.Artifacts {
		ids = append(ids, string(a.ID))
	}
	if strings.Join(ids, ",") != "report,summary,gone" {
		t.Errorf("the retried attempt answers artifacts %q, want report, summary and the one only its heartbeat kept, once each", ids)
	}
	if res2.Relayed["report"] != 2 {
		t.Errorf("generations %v, want report at 2 from the heartbeat", res2.Relayed)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, d := range rec.deltas[n:] {
		if d.Artifact != nil && d.Text != "" {
			t.Errorf("the retried attempt relayed %+v again", d)
		}
	}
}

// TestRemoteArtifactsPolled: a remote that does not stream is read again
// (the send's reads until it settles): the artifacts it finds grown are
// relayed, the parts added since each read, so that a stream builds them
// whole, each once.
func TestRemoteArtifactsPolled(t *testing.T) {
	url := serveArtifacts(t, artifactsAgent{}, false)
	rec := &brokerRecorder{Broker: hints.New()}
	env := relayEnv(t, rec)
	val, err := env.ExecuteActivity(wire.ActivitySendRemoteMessage, wire.RemoteSendInput{
		Agent: url, Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("go")), RelayArtifacts: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	var res wire.RemoteTaskResult
	if err := val.Get(&res); err != nil || res.Task == nil {
		t.Fatalf("send: %+v, %v", res, err)
	}
	if res.Task.Status.State != a2a.TaskStateCompleted {
		val, err = env.ExecuteActivity(wire.ActivityFollowRemoteTask, wire.RemoteFollowInput{Agent: url, TaskID: res.Task.ID, RelayArtifacts: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := val.Get(&res); err != nil {
			t.Fatal(err)
		}
	}
	rec.mu.Lock()
	ourTask := rec.deltas[0].Task
	rec.mu.Unlock()
	got := &shown{artifacts: map[string]string{}}
	got.take(t, rec.LiveCursor(ourTask))
	report := string(wire.RelayedArtifactID(ourTask, res.Task.ID, "report"))
	summary := string(wire.RelayedArtifactID(ourTask, res.Task.ID, "summary"))
	if got.artifacts[report] != "Hello, wide world." || got.artifacts[summary] != "greeting" || len(got.artifacts) != 2 || got.restarts != 2 {
		t.Errorf("shown %q (%d starts), want report and summary whole, each started once", got.artifacts, got.restarts)
	}
}
