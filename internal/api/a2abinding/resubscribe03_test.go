package a2abinding

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// TestUnfinal03Upstream: a2a-go still marks a 0.3 status update to
// input-required final in every stream; once it does not in a
// subscription, notFinalInSubscription can go.
func TestUnfinal03Upstream(t *testing.T) {
	e := a2av0.FromV1TaskStatusUpdateEvent(&a2a.TaskStatusUpdateEvent{TaskID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}})
	if !e.Final {
		t.Error("a2a-go no longer marks an input-required status update final (a2acompat/a2av0 FromV1TaskStatusUpdateEvent): " +
			"see whether notFinalInSubscription (resubscribe03.go) is still needed")
	}
}

// TestUnfinal03 checks the 0.3 subscription's correction: a status update
// marked final in a state that is not terminal is written not final; every
// other write passes as it is.
func TestUnfinal03(t *testing.T) {
	event := func(kind, state string, final bool) string {
		return `data: {"jsonrpc":"2.0","id":2,"result":{"kind":"` + kind + `","taskId":"t","final":` + map[bool]string{true: "true", false: "false"}[final] +
			`,"status":{"state":"` + state + `","message":{"kind":"message","parts":[{"kind":"text","text":"\"final\":true"}]}}}}` + "\n\n"
	}
	for _, c := range []struct {
		name, in  string
		wantFinal bool
		rewritten bool
	}{
		{"input-required marked final", event("status-update", "input-required", true), false, true},
		{"auth-required marked final", event("status-update", "auth-required", true), false, true},
		{"completed", event("status-update", "completed", true), true, false},
		{"canceled", event("status-update", "canceled", true), true, false},
		{"working", event("status-update", "working", false), false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, ok := unfinal03([]byte(c.in))
			if ok != c.rewritten {
				t.Fatalf("rewritten %v, want %v", ok, c.rewritten)
			}
			if !ok {
				out = []byte(c.in)
			}
			if !strings.HasPrefix(string(out), "data: ") || !strings.HasSuffix(string(out), "}\n\n") {
				t.Fatalf("not one SSE data line: %q", out)
			}
			var env struct {
				ID     int `json:"id"`
				Result struct {
					Final  bool `json:"final"`
					Status struct {
						Message struct {
							Parts []struct {
								Text string `json:"text"`
							} `json:"parts"`
						} `json:"message"`
					} `json:"status"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(string(out)), "data: ")), &env); err != nil {
				t.Fatal(err)
			}
			if env.Result.Final != c.wantFinal || env.ID != 2 || env.Result.Status.Message.Parts[0].Text != `"final":true` {
				t.Errorf("got %s", out)
			}
		})
	}
	for _, in := range []string{": keep-alive\n\n", "id: 1\n", `data: {"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"\"final\":true"}}` + "\n\n"} {
		if _, ok := unfinal03([]byte(in)); ok {
			t.Errorf("%q rewritten", in)
		}
	}
}
