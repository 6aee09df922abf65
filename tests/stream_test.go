package tests

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// stream sends text with SendStreamingMessage and returns the events
// (harness.EventLabel) and the task ID.
func stream(t testing.TB, ctx context.Context, c *a2aclient.Client, taskID a2a.TaskID, text string) ([]string, a2a.TaskID) {
	t.Helper()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	msg.TaskID = taskID
	var got []string
	for e, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			t.Fatalf("SendStreamingMessage(%q): %v", text, err)
		}
		if task, ok := e.(*a2a.Task); ok {
			taskID = task.ID
		}
		got = append(got, harness.EventLabel(e))
	}
	return got, taskID
}

func TestStreamingTravelFlow(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, card := harness.NewClient(t, ctx, s.APIURL)
	if !card.Capabilities.Streaming {
		t.Fatal("card does not offer streaming")
	}

	// A second client subscribes and must see every event to the end.
	subscribed := make(chan []string, 1)
	var taskID a2a.TaskID

	const (
		submitted = "task:TASK_STATE_SUBMITTED"
		waiting   = "task:TASK_STATE_INPUT_REQUIRED"
		working   = "status:TASK_STATE_WORKING"
		asking    = "status:TASK_STATE_INPUT_REQUIRED"
		completed = "status:TASK_STATE_COMPLETED"
	)
	steps := []struct {
		text string
		want []string
	}{
		{"Book a flight", []string{submitted, working, asking}},
		{"Lisbon", []string{waiting, working, asking}},
		{"2026-12-24", []string{waiting, working, asking}},
		{"2", []string{waiting, working, working, "artifact:booking", completed}},
	}
	for i, step := range steps {
		got, id := stream(t, ctx, c, taskID, step.text)
		taskID = id
		if fmt.Sprint(got) != fmt.Sprint(step.want) {
			t.Fatalf("stream of %q = %v, want %v", step.text, got, step.want)
		}
		if i == 0 {
			sub, _ := harness.NewClient(t, ctx, s.APIURL)
			live := make(chan struct{})
			go func() {
				var events []string
				var once sync.Once
				defer once.Do(func() { close(live) }) // also when it failed at once
				for e, err := range sub.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: taskID}) {
					once.Do(func() { close(live) })
					if err != nil {
						events = append(events, "error:"+err.Error())
						break
					}
					events = append(events, harness.EventLabel(e))
				}
				subscribed <- events
			}()
			// The subscription has started (it has the task) before the
			// next answer: a fixed pause was too short on a loaded machine.
			select {
			case <-live:
			case <-time.After(30 * time.Second):
				t.Fatal("the subscriber got no event within 30 s")
			}
		}
	}

	select {
	case got := <-subscribed:
		want := []string{waiting, working, asking, working, asking, working, working, "artifact:booking", completed}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("subscriber saw %v, want %v", got, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("subscriber did not see the end of the task")
	}

	// A finished task has nothing to subscribe to.
	for _, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: taskID}) {
		if !errors.Is(err, a2a.ErrUnsupportedOperation) {
			t.Errorf("SubscribeToTask on a completed task: %v, want ErrUnsupportedOperation", err)
		}
		break
	}
}
