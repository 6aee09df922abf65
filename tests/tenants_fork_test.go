package tests

import (
	"encoding/json"
	"net/http"
	"testing"
)

// runForks: fork and retry under the one rule. Every other tenant that
// forks or retries alice's completed travel task or her expense, over
// HTTP+JSON (also under a tenant prefix) or JSON-RPC's ForkTask and
// RetryTask, is told the task does not exist, as for an unknown task; alice
// forks her own, and the fork is hers alone.
func (m *tenantMatrix) runForks(t *testing.T) {
	alice := m.fixtures[0]
	if alice.owner != m.alice {
		t.Fatalf("the first fixture is %s's", alice.owner)
	}
	rpc := func(agentPath, method string, params map[string]any) tenantCall {
		path := agentPath
		if path == "" {
			path = "/"
		}
		return tenantCall{httpMethod: http.MethodPost, path: path, version: "1.0", jsonRPC: true,
			body: mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})}
	}
	calls := func(task fixtureTask) []tenantCall {
		return []tenantCall{
			restCall(http.MethodPost, task.agentPath+"/tasks/"+task.id+":fork", `{"atMessage": 1}`),
			restCall(http.MethodPost, task.agentPath+"/some-tenant/tasks/"+task.id+":fork", `{"atMessage": 1}`),
			restCall(http.MethodPost, task.agentPath+"/tasks/"+task.id+":retry", `{}`),
			rpc(task.agentPath, "ForkTask", map[string]any{"id": task.id, "atMessage": 1}),
			rpc(task.agentPath, "RetryTask", map[string]any{"id": task.id}),
		}
	}
	for _, tn := range []*tenant{m.bob, m.mallory, m.carol, m.fiona} {
		for _, task := range []fixtureTask{alice.completed, alice.expense} {
			for _, c := range calls(task) {
				c.echo = []string{task.id}
				want := http.StatusNotFound
				if c.jsonRPC {
					want = -32001
				}
				m.expect(t, tn, c, want)
			}
		}
	}
	// alice's own fork of her completed task: hers, and no one else's.
	c := restCall(http.MethodPost, alice.completed.agentPath+"/tasks/"+alice.completed.id+":fork", `{"atMessage": 2}`)
	c.version = "1.0"
	var fork struct {
		ID     string `json:"id"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	}
	if err := json.Unmarshal(m.expect(t, m.alice, c, http.StatusOK).raw, &fork); err != nil || fork.ID == "" {
		t.Fatalf("alice's fork: %v", err)
	}
	alice.addSecret(secretTaskID, fork.ID)
	for _, tn := range []*tenant{m.bob, m.mallory} {
		get := restCall(http.MethodGet, alice.completed.agentPath+"/tasks/"+fork.ID, "")
		get.version = "1.0"
		get.echo = []string{fork.ID}
		m.expect(t, tn, get, http.StatusNotFound)
	}
}
