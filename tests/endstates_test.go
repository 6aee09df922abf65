package tests

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestTerminatedTaskReadsFailed: an operator terminates a waiting task's
// workflow (as from the Temporal UI). GetTask, ListTasks (with and without
// a status filter) and an open SubscribeToTask stream all say failed, with
// the reason; a further message is refused as for any terminal task.
func TestTerminatedTaskReadsFailed(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)
	task := harness.Send(t, ctx, c, "", "Book a flight")
	harness.WantState(t, task, a2a.TaskStateInputRequired, "Where to?")
	other := harness.Send(t, ctx, c, "", "Book another flight")

	// A subscriber is waiting when the workflow is terminated.
	events := make(chan a2a.Event, 16)
	go func() {
		defer close(events)
		for e, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
			if err != nil {
				return
			}
			events <- e
		}
	}()
	select {
	case <-events: // the task itself
	case <-time.After(10 * time.Second):
		t.Fatal("the subscription sent nothing")
	}

	tc, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if err := tc.TerminateWorkflow(ctx, string(task.ID), "", "stuck on a bad deploy"); err != nil {
		t.Fatal(err)
	}

	var last a2a.Event
	for e := range events {
		last = e
	}
	status, ok := last.(*a2a.TaskStatusUpdateEvent)
	if !ok || status.Status.State != a2a.TaskStateFailed {
		t.Errorf("the subscription ended with %#v, want a failed status event", last)
	}

	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != a2a.TaskStateFailed || !strings.Contains(harness.StatusText(got), "stuck on a bad deploy") {
		t.Errorf("GetTask = %s %q, want failed with the reason", got.Status.State, harness.StatusText(got))
	}
	if len(got.History) != 2 {
		t.Errorf("the failed task kept %d messages, want its 2", len(got.History))
	}

	// Visibility agrees: listed as failed, not as input-required.
	eventually(t, 10*time.Second, func() error {
		failed, err := c.ListTasks(ctx, &a2a.ListTasksRequest{Status: a2a.TaskStateFailed})
		if err != nil {
			return err
		}
		waiting, err := c.ListTasks(ctx, &a2a.ListTasksRequest{Status: a2a.TaskStateInputRequired})
		if err != nil {
			return err
		}
		if len(failed.Tasks) != 1 || failed.Tasks[0].ID != task.ID || failed.Tasks[0].Status.State != a2a.TaskStateFailed {
			return errors.New("ListTasks(failed) does not hold exactly the terminated task")
		}
		if len(waiting.Tasks) != 1 || waiting.Tasks[0].ID != other.ID {
			return errors.New("ListTasks(input-required) does not hold exactly the other task")
		}
		return nil
	})

	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Lisbon"))
	msg.TaskID = task.ID
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg}); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("SendMessage to the terminated task: %v, want UnsupportedOperation", err)
	}
	if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Errorf("CancelTask of the terminated task: %v, want TaskNotCancelable", err)
	}
}

// eventually retries check until it passes or timeout runs out.
func eventually(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
