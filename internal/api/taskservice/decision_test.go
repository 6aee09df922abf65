package taskservice

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestCarriesDecision: the storage check lets through a message to a task
// that carries an approval decision as a data part, and nothing else.
func TestCarriesDecision(t *testing.T) {
	msg := func(task a2a.TaskID, parts ...*a2a.Part) *a2a.Message {
		m := a2a.NewMessage(a2a.MessageRoleUser, parts...)
		m.TaskID = task
		return m
	}
	decision := a2a.NewDataPart(map[string]any{"approvalId": "a1", "approved": false, "comment": "no"})
	for name, c := range map[string]struct {
		m    *a2a.Message
		want bool
	}{
		"a decision":                  {msg("t1", decision), true},
		"a decision with a text":      {msg("t1", a2a.NewTextPart("see below"), decision), true},
		"a decision to no task":       {msg("", decision), false},
		"a text":                      {msg("t1", a2a.NewTextPart("yes")), false},
		"data without approved":       {msg("t1", a2a.NewDataPart(map[string]any{"approvalId": "a1"})), false},
		"approved not a bool":         {msg("t1", a2a.NewDataPart(map[string]any{"approvalId": "a1", "approved": "yes"})), false},
		"approved without approvalId": {msg("t1", a2a.NewDataPart(map[string]any{"approved": true})), false},
		"no message":                  {nil, false},
	} {
		if got := carriesDecision(c.m); got != c.want {
			t.Errorf("%s: carriesDecision = %v, want %v", name, got, c.want)
		}
	}
}
