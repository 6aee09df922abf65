package tests

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
)

// runTaskList: the console's task list (GET /task-list) under the one
// rule. Each tenant lists its own tasks only, whatever the filter: one
// aimed at another owner's tasks (their context, the task they fork, the
// words of their first message, their owner) lists nothing of theirs, and
// no answer holds another owner's task IDs, contexts or purposes (the
// matrix's leak check). alice and carol find their own fixtures.
func (m *tenantMatrix) runTaskList(t *testing.T) {
	alice := m.fixtures[0]
	if alice.owner != m.alice {
		t.Fatalf("the first fixture is %s's", alice.owner)
	}
	aims := []url.Values{
		{},
		{"context": {alice.waiting.contextID}},
		{"context": {alice.expense.contextID}, "agent": {"expenses"}},
		{"forkOf": {alice.waiting.id}},
		{"q": {"offsite"}},
		{"owner": {"alice"}},
		{"agent": {"expenses"}, "state": {"TASK_STATE_INPUT_REQUIRED"}},
	}
	for _, tn := range []*tenant{m.alice, m.bob, m.mallory, m.carol, m.fiona} {
		own := map[string]bool{}
		for _, f := range m.fixtures {
			if f.owner == tn {
				for _, task := range f.tasks() {
					own[task.id] = true
				}
			}
		}
		for _, q := range aims {
			a := m.expect(t, tn, restCall(http.MethodGet, "/task-list?"+q.Encode(), ""), http.StatusOK)
			var page struct {
				Tasks []struct {
					ID    string `json:"id"`
					Owner string `json:"owner"`
				} `json:"tasks"`
			}
			if err := json.Unmarshal(a.raw, &page); err != nil {
				t.Fatalf("GET /task-list?%s as %s: %v: %s", q.Encode(), tn, err, a.raw)
			}
			for _, r := range page.Tasks {
				if r.Owner != tn.name {
					t.Errorf("GET /task-list?%s as %s lists %s's task %s", q.Encode(), tn, r.Owner, r.ID)
				}
			}
			if len(q) == 0 {
				listed := map[string]bool{}
				for _, r := range page.Tasks {
					listed[r.ID] = true
				}
				for id := range own {
					if !listed[id] {
						t.Errorf("%s's list misses her task %s", tn, id)
					}
				}
			}
		}
	}
}
