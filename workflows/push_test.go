package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// delivery is one call of the push activity as the tests compare it.
type delivery struct {
	Config string
	Seq    int64
	Kind   string // the status state, or "artifact"
	At     time.Duration
}

// pushRecorder mocks the push activity: every call is recorded with the
// workflow clock, and answer decides its outcome.
type pushRecorder struct {
	// mu guards calls: the test environment runs activities on goroutines
	// of their own, several at once when several webhooks are configured.
	mu     sync.Mutex
	env    *testsuite.TestWorkflowEnvironment
	start  time.Time
	calls  []delivery
	answer func(in wire.PushDelivery, attempt int) error
}

func recordPushes(env *testsuite.TestWorkflowEnvironment, took time.Duration) *pushRecorder {
	p := &pushRecorder{env: env, start: env.Now()}
	// The workflow calls the activity by name; the worker registers
	// activities.Webhooks under it. A stub gives the mock its signature.
	env.RegisterActivityWithOptions(func(context.Context, wire.PushDelivery) error { return nil },
		activity.RegisterOptions{Name: wire.ActivityDeliverPush})
	call := env.OnActivity(wire.ActivityDeliverPush, mock.Anything, mock.Anything)
	if took > 0 {
		call = call.After(took)
	}
	call.Return(func(ctx context.Context, in wire.PushDelivery) error {
		kind := "artifact"
		if in.Event.Status != nil {
			kind = string(in.Event.Status.Status.State)
		}
		// The mock runs once After has passed: this is the delivery's end.
		p.mu.Lock()
		p.calls = append(p.calls, delivery{Config: in.Config.ID, Seq: in.Event.Seq, Kind: kind, At: p.env.Now().Sub(p.start)})
		p.mu.Unlock()
		if p.answer != nil {
			return p.answer(in, int(activity.GetInfo(ctx).Attempt))
		}
		return nil
	})
	return p
}

// of returns the deliveries to one config, without times.
func (p *pushRecorder) of(config string) []delivery {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []delivery
	for _, d := range p.calls {
		if d.Config == config {
			d.At = 0
			out = append(out, d)
		}
	}
	return out
}

// askOnceAgent asks one question, then adds an artifact and completes.
func askOnceAgent() *workflows.Agent {
	return &workflows.Agent{
		Name: "asker",
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			if _, err := t.Ask(ctx, "name", "Your name?"); err != nil {
				return err
			}
			t.Artifact(ctx, workflows.TextArtifact("greeting", "Hello"))
			return nil
		},
	}
}

func webhookConfig(id string) *a2a.PushConfig {
	return &a2a.PushConfig{ID: id, URL: "https://hooks.example/" + id, Token: "token-" + id,
		Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "sealed-elsewhere"}}
}

func createPushConfig(env *testsuite.TestWorkflowEnvironment, in wire.CreatePushConfigInput) *update {
	u := &update{env: env}
	env.UpdateWorkflow(wire.UpdateCreatePushConfig, "", u.callbacks(), in)
	return u
}

func deletePushConfig(env *testsuite.TestWorkflowEnvironment, in wire.DeletePushConfigInput) *update {
	u := &update{env: env}
	env.UpdateWorkflow(wire.UpdateDeletePushConfig, "", u.callbacks(), in)
	return u
}

func pushConfigIDs(t *testing.T, env *testsuite.TestWorkflowEnvironment) []string {
	t.Helper()
	v, err := env.QueryWorkflow(wire.QueryPushConfigs, wire.PushConfigsInput{})
	if err != nil {
		t.Errorf("query %s: %v", wire.QueryPushConfigs, err)
		return nil
	}
	var configs []*a2a.PushConfig
	if err := v.Get(&configs); err != nil {
		t.Errorf("decode %s: %v", wire.QueryPushConfigs, err)
	}
	var ids []string
	for _, c := range configs {
		if c.TaskID != testTaskID {
			t.Errorf("config %s has taskId %q, want %q", c.ID, c.TaskID, testTaskID)
		}
		ids = append(ids, c.ID)
	}
	return ids
}

// TestPushDeliversEveryEventInOrder: a webhook registered with the first
// message gets every event, one at a time and in order; one created later
// gets the events after it. Slow webhooks (10 s a delivery) delay neither
// the skill nor the blocking sends, and the workflow completes only once
// every webhook has every event.
func TestPushDeliversEveryEventInOrder(t *testing.T) {
	env := newTaskEnv(t, askOnceAgent())
	pushes := recordPushes(env, 10*time.Second)
	start := env.Now()

	var sendFirst, sendName, createLate, afterEnd *update
	env.RegisterDelayedCallback(func() {
		sendFirst = sendMessage(env, wire.SendMessageInput{Message: userText("Hi"), PushConfig: webhookConfig("early")})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		createLate = createPushConfig(env, wire.CreatePushConfigInput{Config: webhookConfig("late")})
	}, 90*time.Second)
	env.RegisterDelayedCallback(func() {
		sendName = sendMessage(env, wire.SendMessageInput{Message: userText("Ada")})
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		afterEnd = createPushConfig(env, wire.CreatePushConfigInput{Config: webhookConfig("after")})
	}, 2*time.Minute+5*time.Second)

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "asker", ContextID: testContextID})
	final := finalTask(t, env)

	completedTask(t, "first message", sendFirst, start, time.Minute)
	completedTask(t, "answer", sendName, start, 2*time.Minute)
	if createLate.rejected != nil || createLate.err != nil || !createLate.done {
		t.Fatalf("create late config: rejected %v, err %v, done %v", createLate.rejected, createLate.err, createLate.done)
	}
	if final.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("final state %s, want completed", final.Status.State)
	}

	working, input, completed := string(a2a.TaskStateWorking), string(a2a.TaskStateInputRequired), string(a2a.TaskStateCompleted)
	want := []delivery{
		{"early", 1, working, 0}, {"early", 2, input, 0}, {"early", 3, working, 0},
		{"early", 4, "artifact", 0}, {"early", 5, completed, 0},
	}
	if diff := cmp.Diff(want, pushes.of("early")); diff != "" {
		t.Errorf("deliveries to the first webhook (-want +got):\n%s", diff)
	}
	wantLate := []delivery{{"late", 3, working, 0}, {"late", 4, "artifact", 0}, {"late", 5, completed, 0}}
	if diff := cmp.Diff(wantLate, pushes.of("late")); diff != "" {
		t.Errorf("deliveries to the later webhook (-want +got):\n%s", diff)
	}
	// One delivery at a time per webhook: each starts when the previous
	// ended, so each ends 10 s after the previous one or after its event.
	var early []time.Duration
	for _, d := range pushes.calls {
		if d.Config == "early" {
			early = append(early, d.At)
		}
	}
	wantAt := []time.Duration{70 * time.Second, 80 * time.Second, 130 * time.Second, 140 * time.Second, 150 * time.Second}
	if diff := cmp.Diff(wantAt, early); diff != "" {
		t.Errorf("end times of the first webhook's deliveries (-want +got):\n%s", diff)
	}
	// Between the task's end and the last delivery, the workflow is open but
	// takes no new webhook.
	var appErr *temporal.ApplicationError
	if afterEnd == nil || !errors.As(afterEnd.rejected, &appErr) || appErr.Type() != wire.ErrTypeUnsupportedOperation {
		t.Errorf("create on the completed task: %+v, want rejected with %s", afterEnd, wire.ErrTypeUnsupportedOperation)
	}
	// The task completed at 2 min; the workflow waited for the last delivery.
	if got := env.Now().Sub(start); got != 150*time.Second {
		t.Errorf("workflow ended after %v, want 2m30s (the last delivery's end)", got)
	}
}

// TestPushRetriesThenMovesOn: a delivery failing with a retryable error is
// retried (with backoff) before the next event goes out; one refused for
// good is dropped, and the next event still follows, in order.
func TestPushRetriesThenMovesOn(t *testing.T) {
	env := newTaskEnv(t, askOnceAgent())
	pushes := recordPushes(env, 0)
	pushes.answer = func(in wire.PushDelivery, attempt int) error {
		switch {
		case in.Event.Seq == 1 && attempt <= 2:
			return temporal.NewApplicationError("webhook answered 503", "WebhookUnavailable")
		case in.Event.Seq == 2:
			return temporal.NewNonRetryableApplicationError("webhook answered 404", "WebhookRejected", nil)
		}
		return nil
	}
	env.RegisterDelayedCallback(func() {
		sendMessage(env, wire.SendMessageInput{Message: userText("Hi"), PushConfig: webhookConfig("c1")})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		sendMessage(env, wire.SendMessageInput{Message: userText("Ada")})
	}, 2*time.Minute)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "asker", ContextID: testContextID})
	finalTask(t, env)

	var seqs []int64
	var at []time.Duration
	for _, d := range pushes.calls {
		seqs = append(seqs, d.Seq)
		at = append(at, d.At)
	}
	if diff := cmp.Diff([]int64{1, 1, 1, 2, 3, 4, 5}, seqs); diff != "" {
		t.Errorf("delivered event numbers (-want +got):\n%s", diff)
	}
	// Backoff of the default policy: 1 s, then 2 s.
	if diff := cmp.Diff([]time.Duration{time.Minute, time.Minute + time.Second, time.Minute + 3*time.Second}, at[:3]); diff != "" {
		t.Errorf("attempt times of event 1 (-want +got):\n%s", diff)
	}
}

// TestPushConfigUpdates drives the create and delete updates and the query:
// their validators refuse bad writes before they reach history.
func TestPushConfigUpdates(t *testing.T) {
	env := newTaskEnv(t, askOnceAgent())
	recordPushes(env, 0)

	type step struct {
		name     string
		at       time.Duration
		create   *wire.CreatePushConfigInput
		delete   *wire.DeletePushConfigInput
		wantType string // the rejection's error type; "" accepted
		wantIDs  []string
		u        *update
		ids      []string
	}
	cfg := func(mut func(c *a2a.PushConfig)) *wire.CreatePushConfigInput {
		c := webhookConfig("c1")
		mut(c)
		return &wire.CreatePushConfigInput{Config: c}
	}
	keep := func(*a2a.PushConfig) {}
	steps := []*step{
		{name: "create", create: cfg(keep), wantIDs: []string{"c1"}},
		{name: "replace keeps one config", create: cfg(func(c *a2a.PushConfig) { c.URL = "https://hooks.example/new" }), wantIDs: []string{"c1"}},
		{name: "no config", create: &wire.CreatePushConfigInput{}, wantType: wire.ErrTypeInvalidParams, wantIDs: []string{"c1"}},
		{name: "no id", create: cfg(func(c *a2a.PushConfig) { c.ID = "" }), wantType: wire.ErrTypeInvalidParams, wantIDs: []string{"c1"}},
		{name: "bad url", create: cfg(func(c *a2a.PushConfig) { c.ID, c.URL = "c2", "ftp://hooks.example/" }), wantType: wire.ErrTypeInvalidParams, wantIDs: []string{"c1"}},
		{name: "other task", create: cfg(func(c *a2a.PushConfig) { c.ID, c.TaskID = "c2", "task-2" }), wantType: wire.ErrTypeInvalidParams, wantIDs: []string{"c1"}},
		{name: "other agent", create: &wire.CreatePushConfigInput{Agent: "echo", Config: webhookConfig("c2")}, wantType: wire.ErrTypeTaskNotFound, wantIDs: []string{"c1"}},
		// An unknown config of the caller's task is refused as such (the API
		// answers success: deleting is idempotent, A2A §3.1.10); another
		// agent's caller learns nothing of the task's configs.
		{name: "delete unknown", delete: &wire.DeletePushConfigInput{ID: "nope"}, wantType: wire.ErrTypePushConfigNotFound, wantIDs: []string{"c1"}},
		{name: "delete through another agent", delete: &wire.DeletePushConfigInput{Agent: "echo", ID: "c1"}, wantType: wire.ErrTypeTaskNotFound, wantIDs: []string{"c1"}},
		{name: "delete", delete: &wire.DeletePushConfigInput{ID: "c1"}, wantIDs: nil},
	}
	// Up to MaxPushConfigs configs, then InvalidParams.
	var ids []string
	for i := range wire.MaxPushConfigs {
		id := fmt.Sprintf("m%d", i)
		ids = append(ids, id)
		steps = append(steps, &step{name: "create " + id, create: &wire.CreatePushConfigInput{Config: webhookConfig(id)}, wantIDs: append([]string(nil), ids...)})
	}
	steps = append(steps, &step{name: "one too many", create: &wire.CreatePushConfigInput{Config: webhookConfig("extra")}, wantType: wire.ErrTypeInvalidParams, wantIDs: ids})
	for i, s := range steps {
		s.at = time.Minute + time.Duration(i)*time.Second
		env.RegisterDelayedCallback(func() {
			if s.create != nil {
				s.u = createPushConfig(env, *s.create)
			} else {
				s.u = deletePushConfig(env, *s.delete)
			}
		}, s.at)
		env.RegisterDelayedCallback(func() { s.ids = pushConfigIDs(t, env) }, s.at+time.Second/2)
	}
	env.RegisterDelayedCallback(func() {
		sendMessage(env, wire.SendMessageInput{Message: userText("Hi")})
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() { cancelTask(env) }, time.Hour)

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "asker", ContextID: testContextID})

	for _, s := range steps {
		var gotType string
		var appErr *temporal.ApplicationError
		if errors.As(s.u.rejected, &appErr) {
			gotType = appErr.Type()
		} else if s.u.rejected != nil {
			gotType = s.u.rejected.Error()
		}
		if gotType != s.wantType || (s.wantType == "" && (!s.u.done || s.u.err != nil)) {
			t.Errorf("%s: rejected %v (type %q), done %v, err %v; want type %q", s.name, s.u.rejected, gotType, s.u.done, s.u.err, s.wantType)
		}
		if diff := cmp.Diff(s.wantIDs, s.ids); diff != "" {
			t.Errorf("%s: configs after (-want +got):\n%s", s.name, diff)
		}
	}
	if final := finalTask(t, env); final.Status.State != a2a.TaskStateCanceled {
		t.Errorf("final state %s, want canceled", final.Status.State)
	}
}

// TestPushDeleteStopsDelivery: deleting a webhook whose first delivery
// takes an hour cancels that delivery; it gets nothing more and the task's
// end does not wait for it.
func TestPushDeleteStopsDelivery(t *testing.T) {
	env := newTaskEnv(t, askOnceAgent())
	pushes := recordPushes(env, time.Hour)
	start := env.Now()
	var del *update
	env.RegisterDelayedCallback(func() {
		sendMessage(env, wire.SendMessageInput{Message: userText("Hi"), PushConfig: webhookConfig("slow")})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		del = deletePushConfig(env, wire.DeletePushConfigInput{ID: "slow"})
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		sendMessage(env, wire.SendMessageInput{Message: userText("Ada")})
	}, 3*time.Minute)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "asker", ContextID: testContextID})
	finalTask(t, env)

	if del == nil || del.rejected != nil || !del.done || del.err != nil {
		t.Fatalf("delete: %+v", del)
	}
	if got := pushes.of("slow"); len(got) != 0 {
		t.Errorf("deleted webhook completed deliveries %v, want none", got)
	}
	if got := env.Now().Sub(start); got != 3*time.Minute {
		t.Errorf("workflow ended after %v, want 3m (no wait for the deleted webhook)", got)
	}
}

// TestPushDisablesAFailingWebhook: a webhook failing for GiveUpAfter is
// disabled, so the finished task does not wait for it; creating its config
// again resumes it from the next event.
func TestPushDisablesAFailingWebhook(t *testing.T) {
	reg, err := engine.NewRegistry(askOnceAgent())
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, engine.Options{Push: engine.PushOptions{
		MaxRetryInterval: 10 * time.Second, GiveUpAfter: time.Minute,
	}}), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testTaskID})
	pushes := recordPushes(env, 0)
	pushes.answer = func(in wire.PushDelivery, attempt int) error {
		if in.Config.URL == "https://hooks.example/dead" {
			return temporal.NewApplicationError("webhook answered 503", "WebhookUnavailable")
		}
		return nil
	}
	start := env.Now()
	dead := &a2a.PushConfig{ID: "hook", URL: "https://hooks.example/dead"}
	fixed := &a2a.PushConfig{ID: "hook", URL: "https://hooks.example/fixed"}
	env.RegisterDelayedCallback(func() {
		sendMessage(env, wire.SendMessageInput{Message: userText("Hi"), PushConfig: dead})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		createPushConfig(env, wire.CreatePushConfigInput{Config: fixed})
	}, 150*time.Second)
	env.RegisterDelayedCallback(func() {
		sendMessage(env, wire.SendMessageInput{Message: userText("Ada")})
	}, 3*time.Minute)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "asker", ContextID: testContextID})
	finalTask(t, env)

	var deadSeqs, fixedSeqs []int64
	for _, d := range pushes.calls {
		if d.At <= 2*time.Minute {
			deadSeqs = append(deadSeqs, d.Seq)
		} else {
			fixedSeqs = append(fixedSeqs, d.Seq)
		}
	}
	// Attempts at 1m, +1s, +2s, +4s, +8s, then every 10 s until 2m.
	if len(deadSeqs) < 5 || deadSeqs[0] != 1 || deadSeqs[len(deadSeqs)-1] != 1 {
		t.Errorf("attempts while failing: %v, want event 1 only, retried", deadSeqs)
	}
	if diff := cmp.Diff([]int64{3, 4, 5}, fixedSeqs); diff != "" {
		t.Errorf("events delivered after the config was created again (-want +got):\n%s", diff)
	}
	if got := env.Now().Sub(start); got != 3*time.Minute {
		t.Errorf("workflow ended after %v, want 3m", got)
	}
}
