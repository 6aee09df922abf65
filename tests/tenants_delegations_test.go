package tests

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runDelegations: /delegations under the one rule. fiona (finance) lends
// her authority to bob for an hour; mallory neither reads, revokes nor
// uses it, nor lends fiona's authority (403); bob reads it and approves
// alice's expense for fiona, recorded as "bob for fiona"; carol, an
// operator, reads it. Only they see its reason.
func (m *tenantMatrix) runDelegations(t *testing.T) {
	reason := "matrix delegation " + m.nonce
	body := mustJSON(map[string]any{"to": "bob", "end": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "reason": reason})
	var d struct {
		ID        int64  `json:"id"`
		From      string `json:"from"`
		CreatedBy string `json:"createdBy"`
	}
	if err := json.Unmarshal(m.expect(t, m.fiona, restCall(http.MethodPost, "/delegations", body), http.StatusCreated).raw, &d); err != nil || d.From != "fiona" || d.CreatedBy != "fiona" {
		t.Fatalf("fiona's delegation: %+v, %v", d, err)
	}
	path := "/delegations/" + strconv.FormatInt(d.ID, 10)
	lend := mustJSON(map[string]any{"from": "fiona", "to": "mallory", "end": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	for _, tn := range []*tenant{m.mallory, m.alice} {
		m.expect(t, tn, restCall(http.MethodGet, path, ""), http.StatusNotFound)
		m.expect(t, tn, restCall(http.MethodDelete, path, ""), http.StatusNotFound)
		m.expect(t, tn, restCall(http.MethodPost, "/delegations", lend), http.StatusForbidden)
		if a := m.expect(t, tn, restCall(http.MethodGet, "/delegations", ""), http.StatusOK); strings.Contains(string(a.raw), reason) {
			t.Errorf("%s lists fiona's delegation: %s", tn.name, a.raw)
		}
	}
	for _, tn := range []*tenant{m.fiona, m.bob, m.carol} {
		if a := m.expect(t, tn, restCall(http.MethodGet, path, ""), http.StatusOK); !strings.Contains(string(a.raw), reason) {
			t.Errorf("%s reads fiona's delegation without its reason: %s", tn.name, a.raw)
		}
	}
	e := m.createExpense(t, m.alice, "730 EUR alice delegated "+m.nonce, nil)
	decision := mustJSON(map[string]any{"approved": true, "onBehalfOf": "fiona"})
	m.expect(t, m.mallory, approverCall(http.MethodPost, "/approvals/"+e.approvalID+"/decision", decision), http.StatusForbidden)
	var view struct {
		Decisions []struct {
			Approver string `json:"approver"`
		} `json:"decisions"`
	}
	a := m.expect(t, m.bob, approverCall(http.MethodPost, "/approvals/"+e.approvalID+"/decision", decision), http.StatusOK)
	if err := json.Unmarshal(a.raw, &view); err != nil || len(view.Decisions) != 1 || view.Decisions[0].Approver != "bob for fiona" {
		t.Errorf("bob's decision for fiona: %s (%v)", a.raw, err)
	}
}
