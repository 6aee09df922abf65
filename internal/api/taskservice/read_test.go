package taskservice

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// TestWithHistoryTrims checks that a snapshot made for another caller's
// historyLength (an update's result answering a message sent again) is
// answered to this caller's: none for 0, the last n for n, all for nil.
func TestWithHistoryTrims(t *testing.T) {
	snapshot := func() *wire.TaskSnapshot {
		var history []*a2a.Message
		for _, text := range []string{"one", "two", "three", "four"} {
			history = append(history, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text)))
		}
		return &wire.TaskSnapshot{Task: &a2a.Task{ID: "t", History: history}}
	}
	s := &TaskService{}
	for _, tt := range []struct {
		length *int
		want   []string
	}{
		{ptr(0), nil},
		{ptr(1), []string{"four"}},
		{ptr(3), []string{"two", "three", "four"}},
		{ptr(10), []string{"one", "two", "three", "four"}},
		{nil, []string{"one", "two", "three", "four"}},
	} {
		snap, err := s.withHistory(context.Background(), snapshot(), tt.length)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range snap.Task.History {
			got = append(got, m.Parts[0].Text())
		}
		if len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) {
			t.Errorf("historyLength %v: %v, want %v", deref(tt.length), got, tt.want)
		}
	}
}

func deref(p *int) any {
	if p == nil {
		return "nil"
	}
	return *p
}
