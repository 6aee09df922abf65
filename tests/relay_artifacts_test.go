package tests

import (
	"context"
	"iter"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// artifactAgent is a remote A2A agent (a2a-go's server) that streams its
// artifacts: "report" in three chunks (append), step apart, then, once
// release is closed, "summary" whole, then it completes.
type artifactAgent struct {
	fakes.CancelsAtOnce
	step    time.Duration
	release chan struct{}
}

func (g *artifactAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		wait := func(c <-chan time.Time) bool {
			select {
			case <-ctx.Done():
				return false
			case <-c:
				return true
			}
		}
		chunk := func(id a2a.ArtifactID, text string, appendIt, last bool) a2a.Event {
			e := a2a.NewArtifactUpdateEvent(ec, id, a2a.NewTextPart(text))
			e.Append, e.LastChunk, e.Artifact.Name = appendIt, last, string(id)
			return e
		}
		for _, e := range []a2a.Event{chunk("report", "Hello, ", false, false), chunk("report", "wide ", true, false), chunk("report", "world.", true, true)} {
			if !yield(e, nil) || !wait(time.After(g.step)) {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-g.release:
		}
		if !yield(chunk("summary", "greeting", false, true), nil) || !wait(time.After(g.step)) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("written"))), nil)
	}
}

// serveArtifactAgent serves g, its card offering streaming.
func serveArtifactAgent(t testing.TB, g *artifactAgent) *httptest.Server {
	return fakes.RemoteAgent{Name: "writer", Description: "Writes a report.", Skill: "Write", SkillDoes: "Writes a report.", Streaming: true}.Serve(t, g)
}

// artifactView builds a task's artifacts from its stream's events as an A2A
// client does: append adds the parts, otherwise they replace the
// artifact's.
type artifactView struct {
	mu      sync.Mutex
	texts   map[a2a.ArtifactID]string
	order   []a2a.ArtifactID
	relayed []string // the relayed chunks' texts, in order
	done    bool     // a terminal status came
	late    []string // relayed chunks after it
}

func newArtifactView() *artifactView { return &artifactView{texts: map[a2a.ArtifactID]string{}} }

func (v *artifactView) take(ev a2a.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch e := ev.(type) {
	case *a2a.Task:
		for _, a := range e.Artifacts {
			v.set(a.ID, partsText(a.Parts), false)
		}
	case *a2a.TaskArtifactUpdateEvent:
		text := partsText(e.Artifact.Parts)
		v.set(e.Artifact.ID, text, e.Append)
		if live, _ := e.Metadata[wire.LiveMetadataKey].(map[string]any); live["relayed"] == true {
			if v.done {
				v.late = append(v.late, text)
			}
			if text != "" {
				v.relayed = append(v.relayed, text)
			}
		}
	case *a2a.TaskStatusUpdateEvent:
		if e.Status.State.Terminal() {
			v.done = true
		}
	}
}

func (v *artifactView) set(id a2a.ArtifactID, text string, appendIt bool) {
	if _, ok := v.texts[id]; !ok {
		v.order = append(v.order, id)
	}
	if appendIt {
		v.texts[id] += text
	} else {
		v.texts[id] = text
	}
}

func partsText(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

// wantTwoArtifacts checks that task holds exactly the remote's two
// artifacts, whole, under the IDs the stream showed them with.
func wantTwoArtifacts(t *testing.T, task *a2a.Task, v *artifactView) {
	t.Helper()
	var got []string
	for _, a := range task.Artifacts {
		got = append(got, a.Name+"="+partsText(a.Parts))
		if v != nil {
			v.mu.Lock()
			if shown, ok := v.texts[a.ID]; !ok || shown != partsText(a.Parts) {
				t.Errorf("artifact %s (%s) of the task was shown live as %q (known: %v)", a.ID, a.Name, shown, ok)
			}
			v.mu.Unlock()
		}
	}
	if want := []string{"report=Hello, wide world.", "summary=greeting"}; !slices.Equal(got, want) {
		t.Errorf("the task's artifacts are %q, want %q", got, want)
	}
	if v != nil {
		v.mu.Lock()
		if len(v.texts) != 2 {
			t.Errorf("the stream built artifacts %q, want the two", v.texts)
		}
		v.mu.Unlock()
	}
}

// TestRemoteArtifactsRelayed: a task that delegates to a remote agent that
// streams its artifacts relays each artifact-update to its own stream as it
// comes, as an artifact-update of our task (append and lastChunk as the
// remote's), before the task completes; the task then holds the remote's
// two artifacts once each, whole, under the IDs the stream showed. Its
// history replays, and is the fixture router-relayed-artifacts
// (A2AFLOW_RECORD_HISTORY=1 records it).
func TestRemoteArtifactsRelayed(t *testing.T) {
	release := make(chan struct{})
	close(release)
	remote := serveArtifactAgent(t, &artifactAgent{step: 700 * time.Millisecond, release: release})
	llmSrv := fakeRouterLLM(t)
	dataDir := t.TempDir()
	harness.AddAgent(t, dataDir, "writer", remote.URL)
	fakes.UseOpenAI(t, llmSrv.URL, "sk-router", "fake-model")
	s := harness.StartServe(t, dataDir)
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/router")

	v := newArtifactView()
	var taskID a2a.TaskID
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("@writer write"))
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		if task, ok := ev.(*a2a.Task); ok && taskID == "" {
			taskID = task.ID
		}
		v.take(ev)
	}
	if !v.done {
		t.Fatal("the stream ended before the task did")
	}
	if want := []string{"Hello, ", "wide ", "world.", "greeting"}; !slices.Equal(v.relayed, want) || len(v.late) > 0 {
		t.Errorf("relayed chunks %q (after the end: %q), want %q in order, before the end", v.relayed, v.late, want)
	}
	task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID})
	if err != nil {
		t.Fatal(err)
	}
	harness.WantState(t, task, a2a.TaskStateCompleted, "")
	wantTwoArtifacts(t, task, v)
	if h := string(historyBytes(t, ctx, s.TemporalAddr, taskID)); strings.Count(h, "wide ") > 3 {
		t.Errorf("the workflow history of %s holds the chunk %q %d times: chunks are not recorded", taskID, "wide ", strings.Count(h, "wide "))
	}
	// The history replays; with A2AFLOW_RECORD_HISTORY=1 it is recorded as
	// the fixture of this path (GetVersion a2aflow.relayed-artifacts at 1).
	replayAndRecord(t, ctx, s, taskID, "router-relayed-artifacts.history.json")
}

// TestRemoteArtifactsAfterKill: serve killed with kill -9 while it follows
// the remote task, after the remote finished its first artifact: after the
// restart the delegation goes on, a stream that subscribes again gets the
// finished artifact whole and the next as it comes, and the task ends
// with the two artifacts, none lost, none doubled.
func TestRemoteArtifactsAfterKill(t *testing.T) {
	release := make(chan struct{})
	remote := serveArtifactAgent(t, &artifactAgent{step: 700 * time.Millisecond, release: release})
	llmSrv := fakeRouterLLM(t)
	dataDir := t.TempDir()
	harness.AddAgent(t, dataDir, "writer", remote.URL)
	fakes.UseOpenAI(t, llmSrv.URL, "sk-router", "fake-model")
	s := harness.StartServe(t, dataDir)
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/router")

	var taskID a2a.TaskID
	before := newArtifactView()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("@writer write"))
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		if task, ok := ev.(*a2a.Task); ok && taskID == "" {
			taskID = task.ID
		}
		before.take(ev)
		if e, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && e.LastChunk {
			break // the report is finished
		}
	}
	if got := before.texts; len(got) != 1 || !slices.Contains(slices.Collect(maps.Values(got)), "Hello, wide world.") {
		t.Fatalf("before the kill the stream showed %q, want the report whole", got)
	}
	// The finished report is in the follow's heartbeat details on the
	// server at once (not after the SDK's throttle of some 16 s).
	tc := dialTemporal(t, s)
	recorded := time.Now()
	waitFor(t, 5*time.Second, func() bool {
		d, err := tc.DescribeWorkflowExecution(ctx, string(taskID), "")
		if err != nil {
			return false
		}
		for _, a := range d.GetPendingActivities() {
			for _, p := range a.GetHeartbeatDetails().GetPayloads() {
				if strings.Contains(string(p.GetData()), "world.") {
					return true
				}
			}
		}
		return false
	})
	t.Logf("the finished report was in the heartbeat details %s after the stream showed it", time.Since(recorded).Round(time.Millisecond))
	tc.Close()
	s.Proc().Kill()
	s.Restart()
	close(release)

	c, _ = harness.NewClient(t, ctx, s.APIURL+"/agents/router")
	after := newArtifactView()
	deadline, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for !after.done && deadline.Err() == nil {
		for ev, err := range c.SubscribeToTask(deadline, &a2a.SubscribeToTaskRequest{ID: taskID}) {
			if err != nil {
				break // serve's stream may end while it starts: subscribe again
			}
			after.take(ev)
		}
		if !after.done {
			if task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID}); err == nil && task.Status.State.Terminal() {
				t.Errorf("the stream subscribed again ended before the task did (it is %s)", task.Status.State)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID})
	if err != nil {
		t.Fatal(err)
	}
	harness.WantState(t, task, a2a.TaskStateCompleted, "")
	wantTwoArtifacts(t, task, after)
	for id, text := range before.texts {
		if !slices.ContainsFunc(task.Artifacts, func(a *a2a.Artifact) bool { return a.ID == id && partsText(a.Parts) == text }) {
			t.Errorf("artifact %s was shown live before the kill as %q; the task holds no such artifact", id, text)
		}
	}
}
