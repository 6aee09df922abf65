package tests

import (
	"encoding/json"
	"net/http"
	"testing"
)

// runTimeline: the timeline route (GET /tasks/{id}/timeline) under the
// one rule. Every other tenant that reads the timeline of one of alice's
// tasks (waiting, completed, her expense), under the agent's path or a
// tenant prefix, in either protocol version, with or without a page
// token, is told the task does not exist, as for an unknown task; alice
// reads her own.
func (m *tenantMatrix) runTimeline(t *testing.T) {
	alice := m.fixtures[0]
	if alice.owner != m.alice {
		t.Fatalf("the first fixture is %s's", alice.owner)
	}
	tasks := []fixtureTask{alice.waiting, alice.completed, alice.expense}
	// A page token of alice's own: the second page of her completed task.
	first := m.expect(t, m.alice, restCall(http.MethodGet, alice.completed.agentPath+"/tasks/"+alice.completed.id+"/timeline?pageSize=1", ""), http.StatusOK)
	var page struct {
		TaskID        string            `json:"taskId"`
		Entries       []json.RawMessage `json:"entries"`
		NextPageToken string            `json:"nextPageToken"`
	}
	if err := json.Unmarshal(first.raw, &page); err != nil || page.TaskID != alice.completed.id || len(page.Entries) != 1 || page.NextPageToken == "" {
		t.Fatalf("alice's first page of one entry: %v %s", err, first.raw)
	}
	for _, tn := range []*tenant{m.bob, m.mallory, m.carol, m.fiona} {
		for _, task := range tasks {
			for _, path := range []string{
				task.agentPath + "/tasks/" + task.id + "/timeline",
				task.agentPath + "/some-tenant/tasks/" + task.id + "/timeline?pageSize=1",
			} {
				for _, version := range []string{"", "1.0"} {
					c := restCall(http.MethodGet, path, "")
					c.version, c.echo = version, []string{task.id}
					m.expect(t, tn, c, http.StatusNotFound)
				}
			}
		}
		c := restCall(http.MethodGet, alice.completed.agentPath+"/tasks/"+alice.completed.id+"/timeline?pageToken="+page.NextPageToken, "")
		c.echo = []string{alice.completed.id}
		m.expect(t, tn, c, http.StatusNotFound)
	}
	for _, task := range tasks {
		c := restCall(http.MethodGet, task.agentPath+"/tasks/"+task.id+"/timeline", "")
		c.version = "1.0"
		a := m.expect(t, m.alice, c, http.StatusOK)
		if err := json.Unmarshal(a.raw, &page); err != nil || page.TaskID != task.id || len(page.Entries) == 0 {
			t.Errorf("alice's timeline of %s: %v %s", task.id, err, a.raw)
		}
	}
}
