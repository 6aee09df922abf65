package a2abinding

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// A correction of a2a-go: its 0.3 binding (a2acompat/a2av0
// FromV1TaskStatusUpdateEvent) marks every status update to input-required
// "final": true. That ends a message's stream (message/stream), as A2A 0.3
// has it, but a subscription (tasks/resubscribe) goes on to the task's end,
// so its input-required updates said "final" and were followed by more
// events. A client that believes "final" (a2a-java 0.3.3.Final closes the
// stream on it) lost the rest. In a 0.3 subscription only a terminal state
// is final.

// notFinalInSubscription is the guard of a 0.3 JSON-RPC tasks/resubscribe
// stream: each SSE data line whose result is a status update marked final
// in a state that is not terminal is written with "final": false.
type notFinalInSubscription struct {
	http.ResponseWriter
}

func (g notFinalInSubscription) Write(p []byte) (int, error) {
	if fixed, ok := unfinal03(p); ok {
		if _, err := g.ResponseWriter.Write(fixed); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return g.ResponseWriter.Write(p)
}

// Flush lets a2a-go's SSE writer flush events through the guard.
func (g notFinalInSubscription) Flush() {
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (g notFinalInSubscription) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// terminal03 are A2A 0.3's terminal task states.
var terminal03 = map[string]bool{"completed": true, "canceled": true, "failed": true, "rejected": true}

// unfinal03 rewrites one SSE write, "data: {JSON-RPC response}\n\n" as
// a2a-go writes it, when its result is a status update marked final in a
// state that is not terminal.
func unfinal03(p []byte) ([]byte, bool) {
	const prefix = "data: "
	if !bytes.HasPrefix(p, []byte(prefix)) || !bytes.Contains(p, []byte(`"final":true`)) {
		return nil, false
	}
	data := bytes.TrimRight(p[len(prefix):], "\n")
	var env map[string]json.RawMessage
	if json.Unmarshal(data, &env) != nil || env["result"] == nil {
		return nil, false
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(env["result"], &result) != nil {
		return nil, false
	}
	var head struct {
		Kind   string `json:"kind"`
		Final  bool   `json:"final"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	}
	if json.Unmarshal(env["result"], &head) != nil || head.Kind != "status-update" || !head.Final || terminal03[head.Status.State] {
		return nil, false
	}
	result["final"] = json.RawMessage("false")
	var err error
	if env["result"], err = json.Marshal(result); err != nil {
		return nil, false
	}
	out, err := json.Marshal(env)
	if err != nil {
		return nil, false
	}
	return append(append([]byte(prefix), out...), p[len(prefix)+len(data):]...), true
}
