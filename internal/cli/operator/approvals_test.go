package operator

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aflow/a2aflow/internal/api/resources"
)

// TestApprovalsListsByDefault: `approvals` alone lists the approvals, with
// list's flags, as `approvals list` does.
func TestApprovalsListsByDefault(t *testing.T) {
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/approvals" {
			http.NotFound(w, r)
			return
		}
		queries = append(queries, r.URL.RawQuery)
		view := resources.ApprovalView{Agent: "expenses"}
		view.ID, view.State, view.Groups = "t-1-approval-1", "pending", []string{"finance"}
		view.Request.Title = "Expense of 120 EUR"
		_ = json.NewEncoder(w).Encode(map[string]any{"approvals": []resources.ApprovalView{view}})
	}))
	defer srv.Close()
	for _, args := range [][]string{
		{"approvals", "--api", srv.URL},
		{"approvals", "--api", srv.URL, "--group", "finance"},
		{"approvals", "list", "--api", srv.URL, "--decided"},
	} {
		out, err := runCLI(t, testApp(), args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if !strings.Contains(out, "t-1-approval-1") || !strings.Contains(out, "Expense of 120 EUR") || !strings.HasPrefix(out, "ID ") {
			t.Errorf("%v printed:\n%s", args, out)
		}
	}
	if want := []string{"", "group=finance", "state=decided"}; strings.Join(queries, "|") != strings.Join(want, "|") {
		t.Errorf("queries %q, want %q", queries, want)
	}
	if _, err := runCLI(t, testApp(), "approvals", "nonsense", "--api", srv.URL); err == nil || !strings.Contains(err.Error(), "nonsense") {
		t.Errorf("approvals nonsense: %v, want it refused", err)
	}
}
