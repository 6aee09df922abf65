package tests

import (
	"errors"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/tests/harness"
)

func TestTravelFlowWithGoClient(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, card := harness.NewClient(t, ctx, s.APIURL)

	if card.Name != "travel" || len(card.Skills) == 0 || len(card.SupportedInterfaces) < 2 {
		t.Fatalf("root card = %+v, want the travel agent with skills and two interfaces", card)
	}

	task := harness.TravelBooking(t, ctx, c)
	booking := harness.BookingOf(t, task)
	if booking["destination"] != "Lisbon" || booking["date"] != "2026-12-24" || booking["travellers"] != float64(2) {
		t.Errorf("booking = %v, want Lisbon, 2026-12-24, 2 travellers", booking)
	}
	if ref, _ := booking["reference"].(string); len(ref) != 9 {
		t.Errorf("booking reference = %q, want AF-XXXXXX", booking["reference"])
	}

	// GetTask returns the whole conversation: 4 user messages, 3 questions,
	// the "Booking..." progress message and the final reply.
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	var roles []a2a.MessageRole
	for _, m := range got.History {
		roles = append(roles, m.Role)
	}
	u, a := a2a.MessageRoleUser, a2a.MessageRoleAgent
	if diff := cmp.Diff([]a2a.MessageRole{u, a, u, a, u, a, u, a, a}, roles); diff != "" {
		t.Errorf("history roles (-want +got):\n%s", diff)
	}
	// historyLength: 0 none, 2 the last two.
	for _, n := range []int{0, 2} {
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: &n})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.History) != n {
			t.Errorf("GetTask(historyLength=%d) returned %d messages", n, len(got.History))
		}
	}

	// A terminal task is immutable: a further message is UnsupportedOperation.
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("one more"))
	msg.TaskID = task.ID
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg}); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("SendMessage to completed task: err = %v, want ErrUnsupportedOperation", err)
	}
}
