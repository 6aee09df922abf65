package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// runWaitpoints: the /waitpoints/{id} routes of alice's changes task. The
// token is the waitpoint's capability: without it, another tenant neither
// reads (404, as for a waitpoint that does not exist) nor completes it
// (403, decided before Temporal is asked, so it tells nothing either), and
// a message of another tenant carrying a completion is TaskNotFound. The
// owner reads the token; a holder of the token (here bob, the "ticket
// system") completes it once, whatever its tenant.
func (m *tenantMatrix) runWaitpoints(t *testing.T) {
	msg := &wireMessage{id: fmt.Sprintf("msg-alice-%s", a2a.NewMessageID()), text: "Restart the payments database " + m.nonce}
	task := m.send(t, m.alice, "/agents/changes", msg, nil)
	m.fixtureTask(m.alice, task, "/agents/changes", msg, nil)
	id := string(task.ID) + "-waitpoint-1"
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("changes task is %s, want input-required", task.Status.State)
	}
	path := "/waitpoints/" + id
	echo := []string{id, string(task.ID)}
	get := func(token string) tenantCall {
		c := restCall(http.MethodGet, path, "")
		c.waitpointToken, c.echo = token, echo
		return c
	}
	post := func(token string, payload any) tenantCall {
		c := restCall(http.MethodPost, path, mustJSON(map[string]any{"token": token, "payload": payload}))
		c.echo = echo
		return c
	}
	var view struct {
		Token string `json:"token"`
		State string `json:"state"`
	}
	_ = json.Unmarshal(m.expect(t, m.alice, get(""), http.StatusOK).raw, &view)
	if view.Token == "" || view.State != "pending" {
		t.Fatalf("GET %s as alice: %+v, want pending with its token", path, view)
	}
	ticket := map[string]any{"ticket_id": "CHG-" + m.nonce, "approved": true}
	for _, tn := range []*tenant{m.bob, m.mallory, m.carol, m.fiona} {
		m.expect(t, tn, get(""), http.StatusNotFound)
		m.expect(t, tn, get("bm90LXRoZS10b2tlbg"), http.StatusNotFound)
		m.expect(t, tn, post("", ticket), http.StatusForbidden)
		m.expect(t, tn, post("bm90LXRoZS10b2tlbg", ticket), http.StatusForbidden)
		m.expect(t, tn, restCall(http.MethodPost, path, `{"payload": {}}`), http.StatusForbidden)
		// A message completing alice's waitpoint, from another tenant.
		c := m.rpcCall(jsonRPC10, "/agents/changes", methodSend, rpcParams(jsonRPC10, methodSend, a2aArgs{message: &wireMessage{
			id: "msg-" + tn.name + "-" + a2a.NewMessageID(), taskID: string(task.ID),
			data: map[string]any{"waitpointId": id, "payload": ticket}}}))
		c.echo = echo
		m.expect(t, tn, c, wantNotFound(jsonRPC10))
	}
	m.expect(t, m.mallory, post(view.Token, map[string]any{"approved": "yes"}), http.StatusBadRequest)
	read := get(view.Token)
	read.echoAlways = true
	m.expect(t, m.carol, read, http.StatusOK)
	done := post(view.Token, ticket)
	done.echoAlways = true
	m.expect(t, m.bob, done, http.StatusOK)
	m.expect(t, m.bob, done, http.StatusOK)
	m.expect(t, m.mallory, post(view.Token, map[string]any{"ticket_id": "other", "approved": false}), http.StatusConflict)
	final := m.expect(t, m.alice, get(""), http.StatusOK)
	if !strings.Contains(string(final.raw), `"completedBy":"bob"`) {
		t.Errorf("GET %s as alice after the completion: %s, want completed by bob", path, final.raw)
	}
}
