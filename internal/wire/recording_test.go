package wire_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// TestRecordingLevel: a task input says what the task records in
// Recording, or, recorded before Recording existed, with a boolean per
// change; RecordingLevel reads both, also when the input is embedded in
// another struct (the task workflow's own input embeds it beside the state
// a continued run carries), and lean writes count only with merged writes.
func TestRecordingLevel(t *testing.T) {
	for _, tt := range []struct {
		name, json string
		want       wire.Recording
	}{
		{"none", `{"Agent":"a"}`, 0},
		{"level", `{"Agent":"a","Recording":15}`, wire.LongTasks | wire.MergedWrites | wire.LeanWrites | wire.LocalModelCalls},
		{"long tasks", `{"Agent":"a","LongTasks":true}`, wire.LongTasks},
		{"merged", `{"Agent":"a","LongTasks":true,"MergedWrites":true}`, wire.LongTasks | wire.MergedWrites},
		{"lean", `{"Agent":"a","LongTasks":true,"MergedWrites":true,"LeanWrites":true}`, wire.LongTasks | wire.MergedWrites | wire.LeanWrites},
		{"every boolean", `{"Agent":"a","LongTasks":true,"MergedWrites":true,"LeanWrites":true,"LocalModelCalls":true}`,
			wire.LongTasks | wire.MergedWrites | wire.LeanWrites | wire.LocalModelCalls},
		{"a fork's", `{"Agent":"a","LongTasks":true,"MergedWrites":true,"LocalModelCalls":true}`,
			wire.LongTasks | wire.MergedWrites | wire.LocalModelCalls},
		{"lean booleans alone", `{"Agent":"a","LongTasks":true,"LeanWrites":true}`, wire.LongTasks},
		{"lean level alone", `{"Agent":"a","Recording":5}`, wire.LongTasks},
		{"level and booleans", `{"Agent":"a","Recording":8,"MergedWrites":true}`, wire.MergedWrites | wire.LocalModelCalls},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var in wire.TaskInput
			if err := json.Unmarshal([]byte(tt.json), &in); err != nil {
				t.Fatal(err)
			}
			if got := in.RecordingLevel(); got != tt.want {
				t.Errorf("RecordingLevel() = %04b, want %04b", got, tt.want)
			}
			var embedded struct {
				wire.TaskInput
				Continued *struct{ Runs int } `json:",omitempty"`
			}
			if err := json.Unmarshal([]byte(tt.json), &embedded); err != nil {
				t.Fatal(err)
			}
			if got := embedded.RecordingLevel(); got != tt.want || embedded.Agent != "a" {
				t.Errorf("embedded: RecordingLevel() = %04b and agent %q, want %04b and a", got, embedded.Agent, tt.want)
			}
		})
	}
}

// TestRecordingWritten: an input is written with its level in Recording
// alone, and reads back as that level.
func TestRecordingWritten(t *testing.T) {
	b, err := json.Marshal(wire.TaskInput{Agent: "a", Recording: wire.CurrentRecording})
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range []string{"LongTasks", "MergedWrites", "LeanWrites", "LocalModelCalls"} {
		if strings.Contains(string(b), old) {
			t.Errorf("%s holds the boolean %s", b, old)
		}
	}
	var in wire.TaskInput
	if err := json.Unmarshal(b, &in); err != nil || in.RecordingLevel() != wire.CurrentRecording {
		t.Errorf("%s reads back as %04b (%v), want %04b", b, in.RecordingLevel(), err, wire.CurrentRecording)
	}
	if b, _ := json.Marshal(wire.TaskInput{Agent: "a"}); strings.Contains(string(b), "Recording") {
		t.Errorf("an input without a level holds Recording: %s", b)
	}
}

// TestCurrentRecording: the API's level holds every change, and the
// methods report each.
func TestCurrentRecording(t *testing.T) {
	r := wire.CurrentRecording
	if !r.LongTasks() || !r.MergedWrites() || !r.LeanWrites() || !r.LocalModelCalls() || !r.WaitingMemo() {
		t.Errorf("CurrentRecording %04b lacks a change", r)
	}
	off := r.Without(wire.LeanWrites | wire.LocalModelCalls)
	if !off.LongTasks() || !off.MergedWrites() || off.LeanWrites() || off.LocalModelCalls() || !off.WaitingMemo() {
		t.Errorf("CurrentRecording without lean writes and local model calls = %04b", off)
	}
}
