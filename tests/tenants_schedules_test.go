package tests

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// runSchedules: the /schedules routes under the one rule. alice's schedule
// (of expenses, weekly, paused) and the task of the run she triggers are
// hers: every other tenant gets 404 from each route (as for a schedule
// that does not exist), does not find it in GET /schedules, makes a
// schedule of the same name that is its own, and reads nothing of the run's
// task (TaskNotFound). None of their attempts starts a run or changes the
// schedule; no answer to them carries the schedule's ID, context, text or
// run (the matrix's leak check, with them as alice's secrets).
func (m *tenantMatrix) runSchedules(t *testing.T) {
	alice := m.fixtures[0]
	if alice.owner != m.alice {
		t.Fatalf("the first fixture is %s's", alice.owner)
	}
	name := "matrix-" + m.nonce
	text := "640 EUR scheduled offsite " + m.nonce
	create := func(text string) tenantCall {
		return restCall(http.MethodPost, "/schedules", mustJSON(map[string]any{"name": name, "agent": "expenses",
			"message": map[string]any{"text": text}, "cron": "0 9 * * MON", "timeZone": "Europe/Paris", "paused": true}))
	}
	var sched struct {
		ID         string `json:"id"`
		ContextID  string `json:"contextId"`
		Paused     bool   `json:"paused"`
		Runs       int    `json:"runs"`
		RecentRuns []struct {
			TaskID string `json:"taskId"`
		} `json:"recentRuns"`
	}
	if err := json.Unmarshal(m.expect(t, m.alice, create(text), http.StatusCreated).raw, &sched); err != nil || sched.ID == "" {
		t.Fatalf("alice's schedule: %v", err)
	}
	alice.addSecret("schedule ID", sched.ID)
	alice.addSecret("schedule context", sched.ContextID)
	alice.addSecret("schedule text", "scheduled offsite "+m.nonce)
	path := "/schedules/" + sched.ID
	m.expect(t, m.alice, restCall(http.MethodPost, path+":trigger", ""), http.StatusOK)
	deadline := time.Now().Add(30 * time.Second)
	for len(sched.RecentRuns) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the triggered run did not start within 30s")
		}
		time.Sleep(200 * time.Millisecond)
		_ = json.Unmarshal(m.expect(t, m.alice, restCall(http.MethodGet, path, ""), http.StatusOK).raw, &sched)
	}
	run := sched.RecentRuns[0].TaskID
	alice.addSecret("scheduled run", run)

	for _, tn := range []*tenant{m.bob, m.mallory, m.carol, m.fiona} {
		for _, c := range []tenantCall{
			restCall(http.MethodGet, path, ""),
			restCall(http.MethodPost, path+":pause", `{"note": "mine now"}`),
			restCall(http.MethodPost, path+":unpause", ""),
			restCall(http.MethodPost, path+":trigger", ""),
			restCall(http.MethodDelete, path, ""),
		} {
			c.echo = []string{sched.ID}
			m.expect(t, tn, c, http.StatusNotFound)
		}
		m.expect(t, tn, restCall(http.MethodGet, "/schedules", ""), http.StatusOK)
		m.expect(t, tn, restCall(http.MethodGet, "/schedules?agent=expenses", ""), http.StatusOK)
		// The same name: a schedule of its own, which it deletes.
		var own struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(m.expect(t, tn, create("80 EUR "+tn.name+"'s own"), http.StatusCreated).raw, &own)
		if own.ID == "" || own.ID == sched.ID {
			t.Errorf("%s's schedule of the same name: %q", tn, own.ID)
		}
		m.expect(t, tn, restCall(http.MethodDelete, "/schedules/"+own.ID, ""), http.StatusOK)
		// The run's task.
		for _, v := range []matrixVariant{jsonRPC10} {
			m.expect(t, tn, m.call(v, methodGet, a2aArgs{agentPath: "/agents/expenses", taskID: run}), wantNotFound(v))
			m.expect(t, tn, m.call(v, methodCancel, a2aArgs{agentPath: "/agents/expenses", taskID: run}), wantNotFound(v))
		}
	}

	// alice's schedule as it was: paused, one run; hers to list and delete.
	_ = json.Unmarshal(m.expect(t, m.alice, restCall(http.MethodGet, path, ""), http.StatusOK).raw, &sched)
	if !sched.Paused || sched.Runs != 1 {
		t.Errorf("alice's schedule after the others tried: paused %v, %d runs; want paused, 1 run", sched.Paused, sched.Runs)
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		list := m.expect(t, m.alice, restCall(http.MethodGet, "/schedules", ""), http.StatusOK)
		if strings.Contains(string(list.raw), sched.ID) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice's list does not show her schedule: %s", list.raw)
		}
		time.Sleep(200 * time.Millisecond)
	}
	m.expect(t, m.alice, restCall(http.MethodDelete, path, ""), http.StatusOK)
	m.expect(t, m.alice, restCall(http.MethodGet, path, ""), http.StatusNotFound)
	t.Logf("%s: schedule %s, run %s", m.alice, sched.ID, run)
}
