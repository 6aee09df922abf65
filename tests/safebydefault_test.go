package tests

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aflow/a2aflow/internal/mcptest"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// serverSafeConfig: keeper sets no safe-by-default of its own, auditor
// sets its own (auditors); both use the MCP server's read-only and
// destructive tools.
const serverSafeConfig = `
[[mcp-servers]]
name = "payments"
url = %q

[[agents]]
name = "keeper"
system-prompt = "You keep the books."
provider = "openai"
mcp-servers = ["payments"]
mcp-tools = ["list_invoices", "void_invoice"]

[[agents]]
name = "auditor"
system-prompt = "You audit the books."
provider = "openai"
mcp-servers = ["payments"]
mcp-tools = ["list_invoices", "void_invoice"]
safe-by-default = ["auditors"]
`

// TestServerSafeByDefault: serve --safe-by-default ops makes every agent
// safe by default: keeper, which sets nothing, runs a read-only tool a
// server policy allows and waits for ops before a destructive one;
// auditor keeps its own approvers.
func TestServerSafeByDefault(t *testing.T) {
	model := fakePolicyLLM(t)
	payments := &mcptest.Payments{}
	mcpSrv := httptest.NewServer(payments.Handler())
	t.Cleanup(mcpSrv.Close)
	dir := t.TempDir()
	config := filepath.Join(dir, "a2aflow.toml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(serverSafeConfig, mcpSrv.URL+"/mcp")), 0o644); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(dir, "server.cedar")
	if err := os.WriteFile(policy, []byte(`@id("read-only")
permit (principal, action == Action::"callTool", resource) when { context.annotations.readOnly };
`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPENAI_BASE_URL=" + model.URL + "/v1", "OPENAI_API_KEY=sk-test"}
	s := harness.StartServeEnv(t, t.TempDir(), env, "--config", config, "--safe-by-default", "ops")
	ctx := harness.Context(t)
	if out, err := harness.Command("policies", "set", "server", policy, "--reason", "read-only tools need no one", "--api", s.APIURL).CombinedOutput(); err != nil {
		t.Fatalf("a2aflow policies set: %v\n%s", err, out)
	}
	for _, c := range []struct{ agent, group string }{{"keeper", "ops"}, {"auditor", "auditors"}} {
		client, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/"+c.agent)
		if got := harness.StatusText(harness.Send(t, ctx, client, "", "list")); !strings.HasPrefix(got, "done: ") {
			t.Errorf("%s: a read-only tool under safe by default: %q", c.agent, got)
		}
		void := harness.Send(t, ctx, client, "", "void INV-1")
		var v struct {
			Groups []string `json:"groups"`
		}
		if code := getJSON(t, s.APIURL+"/approvals/"+pendingApproval(t, void), &v); code != 200 || strings.Join(v.Groups, ",") != c.group {
			t.Errorf("%s: a destructive tool waits for %v (HTTP %d), want %s", c.agent, v.Groups, code, c.group)
		}
	}
}
