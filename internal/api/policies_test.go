package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/workflows"
)

// TestPolicyRoutes drives /policies and /policy-versions through the
// assembled server with API keys: only operators and a tenant's admins
// read or change policies, each within what they administer; a text that
// does not parse or validate is refused with its line; each change is a
// version with who and why, readable at any version; the answers fit the
// OpenAPI document.
func TestPolicyRoutes(t *testing.T) {
	keys := map[string]string{"root": "k-root-12345", "ann": "k-ann-123456", "alice": "k-alice-1234"}
	auth, err := guard.NewAuthenticator(context.Background(), guard.AuthConfig{APIKeys: keys})
	if err != nil {
		t.Fatal(err)
	}
	handle := func(workflow.Context, *workflows.Task) error { return nil }
	reg, err := engine.NewRegistry(&workflows.Agent{Name: "payables", Handle: handle})
	if err != nil {
		t.Fatal(err)
	}
	db, err := models.Open(filepath.Join(t.TempDir(), "a2aflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	h := api.New(fuzzTemporal{}, reg, api.Config{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Auth: auth, Policies: db,
		PolicyAdmins: map[string][]string{"root": {"*"}, "ann": {"acme"}},
	}).Handler()
	v := openAPIValidator(t)
	// call makes a request and checks its answer, and both against the
	// document; requests the document itself refuses (a Content-Type or a
	// layer it does not list) are only answered.
	call := func(who, method, path, contentType, body string, want int) map[string]any {
		t.Helper()
		req := func() *http.Request {
			r := httptest.NewRequest(method, path, strings.NewReader(body))
			if who != "" {
				r.Header.Set("X-API-Key", keys[who])
			}
			if contentType != "" {
				r.Header.Set("Content-Type", contentType)
			}
			return r
		}
		rec := serveWithin(h, req())
		if rec.Code != want {
			t.Fatalf("%s %s %s: %d, want %d: %s", who, method, path, rec.Code, want, rec.Body)
		}
		if contentType != "text/plain" && !strings.Contains(path, "/team/") {
			v.check(t, req(), rec)
		}
		var out map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return out
	}
	const payables = `@id("finance") @groups("finance")
permit (principal, action == Action::"callTool", resource)
when { context.tool == "pay_invoice" && context.numbers.hasTag("amount") && context.numbers.getTag("amount") > 1000 };`
	put := func(text, reason string) string {
		b, _ := json.Marshal(map[string]string{"text": text, "reason": reason})
		return string(b)
	}

	call("", http.MethodGet, "/policies", "", "", http.StatusUnauthorized)
	call("alice", http.MethodGet, "/policies", "", "", http.StatusForbidden)
	got := call("root", http.MethodPut, "/policies/agent/payables", "application/json", put(payables, "finance over 1000"), http.StatusOK)
	if got["version"] != 1.0 || got["author"] != "root" || got["reason"] != "finance over 1000" {
		t.Errorf("the first version: %v", got)
	}
	// A text that does not validate: refused with its line, nothing changed.
	bad := call("root", http.MethodPut, "/policies/agent/payables", "application/json",
		put("\npermit (principal, action == Action::\"callTool\", resource)\nwhen { context.annotations.destructiv };", "typo"), http.StatusBadRequest)
	problems, _ := bad["problems"].([]any)
	if len(problems) != 1 || problems[0].(map[string]any)["line"] != 2.0 || !strings.Contains(bad["error"].(string), "destructiv") {
		t.Errorf("the refusal: %v", bad)
	}
	call("root", http.MethodPut, "/policies/agent/payables", "text/plain", put(payables, ""), http.StatusUnsupportedMediaType)
	call("root", http.MethodPut, "/policies/team/x", "application/json", put(payables, ""), http.StatusBadRequest)
	raised := strings.Replace(payables, "> 1000", "> 5000", 1)
	call("root", http.MethodPut, "/policies/agent/payables", "application/json", put(raised, "threshold 5000"), http.StatusOK)
	if got := call("root", http.MethodGet, "/policies/agent/payables?version=1", "", "", http.StatusOK); got["text"] != payables {
		t.Errorf("version 1's text: %v", got["text"])
	}
	if got := call("root", http.MethodGet, "/policies/agent/payables", "", "", http.StatusOK); got["version"] != 2.0 {
		t.Errorf("in force: %v", got)
	}

	// A tenant's admin: their tenant's scope, nothing else.
	call("ann", http.MethodPut, "/policies/tenant/acme", "application/json", put(`permit (principal, action, resource);`, "acme trusts itself"), http.StatusOK)
	call("ann", http.MethodPut, "/policies/server", "application/json", put(`forbid (principal, action, resource);`, ""), http.StatusForbidden)
	call("ann", http.MethodPut, "/policies/tenant/beta", "application/json", put(`forbid (principal, action, resource);`, ""), http.StatusForbidden)
	call("ann", http.MethodGet, "/policies/agent/payables", "", "", http.StatusForbidden)
	call("ann", http.MethodGet, "/policy-versions/1", "", "", http.StatusForbidden)
	call("ann", http.MethodGet, "/policy-versions", "", "", http.StatusBadRequest)
	if got := call("ann", http.MethodGet, "/policies", "", "", http.StatusOK); len(got["scopes"].([]any)) != 1 {
		t.Errorf("ann sees %v", got)
	}
	if got := call("ann", http.MethodGet, "/policy-versions?scope=tenant/acme", "", "", http.StatusOK); len(got["versions"].([]any)) != 1 {
		t.Errorf("acme's history: %v", got)
	}
	if got := call("root", http.MethodGet, "/policies", "", "", http.StatusOK); got["version"] != 3.0 || len(got["scopes"].([]any)) != 2 {
		t.Errorf("root sees %v", got)
	}
	check := call("ann", http.MethodPost, "/policies/validate", "application/json", `{"scope": "tenant/acme", "text": "permit (principal, action, resource"}`, http.StatusOK)
	if check["valid"] != false || len(check["problems"].([]any)) != 1 {
		t.Errorf("validate: %v", check)
	}

	// Trying a text: nothing was judged yet, so nothing would change; a
	// text that does not compile is refused; a tenant's admin tries its
	// tenant's scope only.
	tried := call("root", http.MethodPost, "/policies/try", "application/json",
		`{"scope": "agent/payables", "text": "forbid (principal, action, resource);", "since": "30d"}`, http.StatusOK)
	if tried["requests"] != 0.0 || tried["changed"] != 0.0 {
		t.Errorf("try: %v", tried)
	}
	call("root", http.MethodPost, "/policies/try", "application/json", `{"scope": "agent/payables", "text": "permit ("}`, http.StatusBadRequest)
	call("root", http.MethodPost, "/policies/try", "application/json", `{"scope": "agent/payables", "text": "", "since": "soon"}`, http.StatusBadRequest)
	call("ann", http.MethodPost, "/policies/try", "application/json", `{"scope": "agent/payables", "text": ""}`, http.StatusForbidden)
	call("ann", http.MethodPost, "/policies/try", "application/json", `{"scope": "tenant/acme", "text": ""}`, http.StatusOK)

	// Removing is a version too; the history keeps every one.
	call("root", http.MethodDelete, "/policies/agent/payables?reason=gone", "", "", http.StatusOK)
	call("root", http.MethodGet, "/policies/agent/payables", "", "", http.StatusNotFound)
	hist := call("root", http.MethodGet, "/policy-versions?scope=agent/payables", "", "", http.StatusOK)
	if vs := hist["versions"].([]any); len(vs) != 3 || vs[0].(map[string]any)["reason"] != "gone" {
		t.Errorf("history: %v", hist)
	}
	call("root", http.MethodGet, "/policy-versions/99", "", "", http.StatusNotFound)
}
