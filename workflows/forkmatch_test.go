package workflows

import (
	"testing"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// TestForkMatches: which recorded activity answers a fork's call. An
// activity by its input's hash; a local activity by its hash when its
// result named one, else by its order; a model call by a recorded model
// call of the other kind with its hash (a turn's calls are local or not by
// when they came, which a fork does not repeat); never a timer.
func TestForkMatches(t *testing.T) {
	local, act := wire.RecordedLocalActivity, ""
	chat, tool := wire.ActivityCompleteChat, "tool:calculator"
	for _, tt := range []struct {
		name string
		rec  wire.RecordedActivity
		kind string
		hash string
		want bool
	}{
		{"activity, same input", wire.RecordedActivity{Type: tool, Hash: "h"}, act, "h", true},
		{"activity, other input", wire.RecordedActivity{Type: tool, Hash: "h"}, act, "x", false},
		{"local activity naming no input", wire.RecordedActivity{Kind: local, Type: tool}, local, "x", true},
		{"local model call, same request", wire.RecordedActivity{Kind: local, Type: chat, Hash: "h"}, local, "h", true},
		{"local model call, other request", wire.RecordedActivity{Kind: local, Type: chat, Hash: "h"}, local, "x", false},
		{"model call recorded local, made as an activity", wire.RecordedActivity{Kind: local, Type: chat, Hash: "h"}, act, "h", true},
		{"model call recorded as an activity, made local", wire.RecordedActivity{Type: chat, Hash: "h"}, local, "h", true},
		{"model call of the other kind, other request", wire.RecordedActivity{Type: chat, Hash: "h"}, local, "x", false},
		{"model call recorded local naming no request, made as an activity", wire.RecordedActivity{Kind: local, Type: chat}, act, "h", false},
		{"another activity of the other kind", wire.RecordedActivity{Type: tool, Hash: "h"}, local, "h", false},
		{"timer", wire.RecordedActivity{Kind: wire.RecordedTimer, Hash: "h"}, act, "h", false},
	} {
		if got := forkMatches(tt.rec, tt.kind, tt.hash); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
