package tests

import (
	"fmt"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestSendMessageAnswersTheTurn: a SendMessage without historyLength answers
// with the messages since the caller's own (the size of a turn, whatever the
// task's age); with historyLength, the last N as asked; GetTask without
// historyLength keeps the server's default (the whole history here).
func TestSendMessageAnswersTheTurn(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)
	task := harness.Send(t, ctx, c, "", "Book a flight")
	if len(task.History) != 2 {
		t.Fatalf("the first answer holds %d messages, want 2 (the request and the question)", len(task.History))
	}
	task = harness.Send(t, ctx, c, task.ID, "Lisbon")
	turns := 30
	for i := 1; i <= turns; i++ {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(fmt.Sprintf("day %d", i)))
		msg.TaskID = task.ID
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		got := res.(*a2a.Task)
		if len(got.History) != 2 || got.History[0].ID != msg.ID || got.History[1].Role != a2a.MessageRoleAgent {
			t.Fatalf("turn %d: the answer holds %d messages, want 2: the caller's own (%s) and the question: %+v", i, len(got.History), msg.ID, got.History)
		}
	}
	// An explicit historyLength is kept: the last N messages, across turns.
	ten := 10
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("day 0"))
	msg.TaskID = task.ID
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{HistoryLength: &ten}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.(*a2a.Task); len(got.History) != 10 {
		t.Errorf("SendMessage(historyLength 10) holds %d messages, want 10", len(got.History))
	}
	zero := 0
	msg = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("day -1"))
	msg.TaskID = task.ID
	res, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{HistoryLength: &zero}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.(*a2a.Task); len(got.History) != 0 {
		t.Errorf("SendMessage(historyLength 0) holds %d messages, want none", len(got.History))
	}
	// GetTask without historyLength: the whole history (under the default 1,000).
	full, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if want := 4 + 2*turns + 4; len(full.History) != want {
		t.Errorf("GetTask holds %d messages, want %d", len(full.History), want)
	}
}
