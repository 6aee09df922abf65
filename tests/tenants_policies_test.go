package tests

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
)

// secretPolicy is the kind of a tenant's policy text, which its admin and
// the operators read.
const secretPolicy = "policy text"

// runPolicies: the /policies routes under --policy-admins
// "alice:alice;carol:*": alice administers her tenant's scope only, carol
// (an operator) every scope, and everyone else none. alice's text is hers:
// no one but carol reads it, no one else changes it, and a tenant's admin
// neither reads nor writes the server's, an agent's or another tenant's
// scope. Every refusal is 403, whether the scope has policies or not, so
// that it tells nothing about them.
func (m *tenantMatrix) runPolicies(t *testing.T) {
	alice := m.fixtures[0]
	text := `@id("matrix") @reason("matrix ` + m.nonce + `")
forbid (principal, action == Action::"callTool", resource) when { context.tool == "matrix_` + m.nonce + `" };`
	put := func(text string) string { return mustJSON(map[string]any{"text": text, "reason": "matrix"}) }
	var v struct {
		Version int64  `json:"version"`
		Author  string `json:"author"`
	}
	if err := json.Unmarshal(m.expect(t, m.alice, restCall(http.MethodPut, "/policies/tenant/alice", put(text)), http.StatusOK).raw, &v); err != nil || v.Author != "alice" {
		t.Fatalf("alice's policies: %+v, %v", v, err)
	}
	alice.addSecret(secretPolicy, "matrix "+m.nonce)
	version := "/policy-versions/" + strconv.FormatInt(v.Version, 10)

	// Nobody else of the tenants administers anything.
	for _, tn := range []*tenant{m.bob, m.mallory, m.fiona} {
		for _, c := range []tenantCall{
			restCall(http.MethodGet, "/policies", ""),
			restCall(http.MethodGet, "/policies/tenant/alice", ""),
			restCall(http.MethodGet, "/policies/tenant/"+tn.name, ""),
			restCall(http.MethodPut, "/policies/tenant/alice", put("permit (principal, action, resource);")),
			restCall(http.MethodPut, "/policies/tenant/"+tn.name, put("permit (principal, action, resource);")),
			restCall(http.MethodDelete, "/policies/tenant/alice", ""),
			restCall(http.MethodPut, "/policies/server", put("permit (principal, action, resource);")),
			restCall(http.MethodPost, "/policies/validate", mustJSON(map[string]any{"scope": "tenant/alice", "text": ""})),
			restCall(http.MethodPost, "/policies/try", mustJSON(map[string]any{"scope": "tenant/alice", "text": "", "since": "30d"})),
			restCall(http.MethodGet, "/policy-versions?scope=tenant/alice", ""),
			restCall(http.MethodGet, version, ""),
		} {
			m.expect(t, tn, c, http.StatusForbidden)
		}
	}
	// alice: her tenant's scope, nothing wider, nobody else's.
	for _, c := range []tenantCall{
		restCall(http.MethodGet, "/policies/tenant/bob", ""),
		restCall(http.MethodPut, "/policies/tenant/bob", put("forbid (principal, action, resource);")),
		restCall(http.MethodPut, "/policies/server", put("permit (principal, action, resource);")),
		restCall(http.MethodPut, "/policies/agent/expenses", put("permit (principal, action, resource);")),
		restCall(http.MethodGet, "/policy-versions?scope=server", ""),
		restCall(http.MethodPost, "/policies/try", mustJSON(map[string]any{"scope": "agent/expenses", "text": ""})),
	} {
		m.expect(t, m.alice, c, http.StatusForbidden)
	}
	m.expect(t, m.alice, restCall(http.MethodGet, "/policies/tenant/alice", ""), http.StatusOK)
	m.expect(t, m.alice, restCall(http.MethodGet, version, ""), http.StatusOK)
	// carol, an operator, reads alice's text.
	for _, path := range []string{"/policies", "/policies/tenant/alice", version, "/policy-versions"} {
		c := restCall(http.MethodGet, path, "")
		c.mayRead = []string{secretPolicy}
		m.expect(t, m.carol, c, http.StatusOK)
	}
	// Nothing the others tried changed alice's text.
	var now struct {
		Version int64  `json:"version"`
		Text    string `json:"text"`
	}
	_ = json.Unmarshal(m.expect(t, m.alice, restCall(http.MethodGet, "/policies/tenant/alice", ""), http.StatusOK).raw, &now)
	if now.Version != v.Version || now.Text != text {
		t.Errorf("alice's policies after the others tried: version %d, %q", now.Version, now.Text)
	}
}
