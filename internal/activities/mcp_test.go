package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/mcptest"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// stdioServerEnv makes this test binary an MCP server on stdio (TestMain).
const stdioServerEnv = "A2AFLOW_TEST_MCP_STDIO_LEDGER"

func TestMain(m *testing.M) {
	if ledger := os.Getenv(stdioServerEnv); ledger != "" {
		if pidFile := os.Getenv("A2AFLOW_TEST_MCP_PIDFILE"); pidFile != "" {
			_ = os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o644)
		}
		p := &mcptest.Payments{Ledger: ledger, Hold: os.Getenv("A2AFLOW_TEST_MCP_HOLD") == "1"}
		if err := p.Serve(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// mcpEnv runs the MCP activities as the worker runs them.
func mcpEnv(m *activities.MCP) *testsuite.TestActivityEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(m.ListMCPTools)
	env.RegisterActivity(m.CallMCPTool)
	return env
}

// TestMCPClient lists and calls the tools of real MCP servers (the Go SDK's)
// over streamable HTTP and over stdio: the tool list with input schemas;
// each kind of content as the model reads it; an error result as a
// non-retryable MCPToolError; the call's idempotency key in _meta (the
// task's and the activity's ID); an unknown server refused.
func TestMCPClient(t *testing.T) {
	httpPayments := &mcptest.Payments{}
	srv := httptest.NewServer(httpPayments.Handler())
	defer srv.Close()
	ledger := t.TempDir() + "/ledger"
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m := &activities.MCP{
		Servers: map[string]activities.MCPServer{
			"http":  {Name: "http", URL: srv.URL},
			"stdio": {Name: "stdio", Command: exe, Env: []string{stdioServerEnv + "=" + ledger}},
		},
		Outbound: outbound.New(outbound.Options{}),
	}
	defer m.Close()
	for _, server := range []string{"http", "stdio"} {
		t.Run(server, func(t *testing.T) {
			env := mcpEnv(m)
			v, err := env.ExecuteActivity(m.ListMCPTools, wire.MCPListToolsInput{Server: server})
			if err != nil {
				t.Fatal(err)
			}
			var list wire.MCPToolList
			if err := v.Get(&list); err != nil {
				t.Fatal(err)
			}
			names := []string{}
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				if tool.Name == "pay_invoice" && !strings.Contains(string(tool.InputSchema), `"amount"`) {
					t.Errorf("pay_invoice's schema %s lacks its parameters", tool.InputSchema)
				}
				// Annotations as the approval policies read them, MCP's
				// defaults filled in where the server gave annotations.
				want := map[string]wire.ToolAnnotations{
					"list_invoices": {ReadOnly: true, OpenWorld: true},
					"void_invoice":  {Destructive: true, OpenWorld: true},
				}[tool.Name]
				if tool.Annotations != want {
					t.Errorf("%s's annotations %+v, want %+v", tool.Name, tool.Annotations, want)
				}
			}
			if got := strings.Join(names, " "); got != "list_invoices pay_invoice refuse report void_invoice" {
				t.Errorf("tools %q", got)
			}

			call := func(tool, args string) (string, error) {
				v, err := env.ExecuteActivity(m.CallMCPTool, wire.MCPCallToolInput{Server: server, Tool: tool, Arguments: json.RawMessage(args)})
				if err != nil {
					return "", err
				}
				var res wire.MCPCallToolResult
				return res.Text, v.Get(&res)
			}
			text, err := call("pay_invoice", `{"invoice":"INV-1","amount":12.5}`)
			if err != nil || !strings.HasPrefix(text, "paid invoice INV-1: 12.50 EUR (payment default-test-workflow-id/") {
				t.Errorf("pay_invoice: %q, %v", text, err)
			}
			// Another call (another activity) is another payment, under its
			// own key; a retry of one call (the same activity) carries the
			// same key: the end-to-end tests kill workers to see it.
			again, err := call("pay_invoice", `{"invoice":"INV-1","amount":12.5}`)
			if err != nil || again == text || !strings.Contains(again, "(payment default-test-workflow-id/") {
				t.Errorf("another call: %q, %v; want another payment than %q", again, err, text)
			}
			_, err = call("refuse", `{"reason":"over budget"}`)
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) || appErr.Type() != wire.ErrTypeMCPToolError || !appErr.NonRetryable() || !strings.Contains(appErr.Message(), "refused: over budget") {
				t.Errorf("an error result: %v, want a non-retryable %s", err, wire.ErrTypeMCPToolError)
			}
			report, err := call("report", `{}`)
			for _, want := range []string{"quarterly report", "[image image/png, 16 bytes]", "[resource report://q3]\nrevenue up", "[resource report://q3.pdf q3.pdf application/pdf]", `{"revenue":42}`} {
				if err != nil || !strings.Contains(report, want) {
					t.Errorf("report: %q (%v), want %q in it", report, err, want)
				}
			}
		})
	}
	if got := len(httpPayments.Paid()); got != 2 || httpPayments.Calls() != 2 {
		t.Errorf("the HTTP server paid %d times for %d calls, want twice", got, httpPayments.Calls())
	}
	raw, _ := os.ReadFile(ledger)
	if n := strings.Count(string(raw), "\n"); n != 2 {
		t.Errorf("the stdio server's ledger holds %d payments, want 2:\n%s", n, raw)
	}

	_, err = mcpEnv(m).ExecuteActivity(m.CallMCPTool, wire.MCPCallToolInput{Server: "nope", Tool: "x"})
	if err == nil || !strings.Contains(err.Error(), `no MCP server named "nope"`) {
		t.Errorf("an unknown server: %v", err)
	}
}

// TestMCPClientServerKilledMidCall: the stdio server is killed (kill -9)
// while a call waits in it; the call fails (Temporal retries it), and the
// next call starts the server again on a new session.
func TestMCPClientServerKilledMidCall(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ledger := t.TempDir() + "/ledger"
	pidFile := t.TempDir() + "/pid"
	m := &activities.MCP{Servers: map[string]activities.MCPServer{
		"held": {Name: "held", Command: exe, Env: []string{stdioServerEnv + "=" + ledger, "A2AFLOW_TEST_MCP_HOLD=1", "A2AFLOW_TEST_MCP_PIDFILE=" + pidFile}},
	}}
	defer m.Close()
	env := mcpEnv(m)
	done := make(chan error, 1)
	go func() {
		_, err := env.ExecuteActivity(m.CallMCPTool, wire.MCPCallToolInput{Server: "held", Tool: "pay_invoice", Arguments: json.RawMessage(`{"invoice":"INV-9","amount":1}`)})
		done <- err
	}()
	// The server holds the call: kill it.
	var pid int
	deadline := time.Now().Add(30 * time.Second)
	for pid == 0 && time.Now().Before(deadline) {
		raw, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(string(raw))
		time.Sleep(20 * time.Millisecond)
	}
	if pid == 0 {
		t.Fatal("the stdio server did not start")
	}
	time.Sleep(500 * time.Millisecond) // the call reaches it
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a call whose server died succeeded")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a call whose server died did not end")
	}
	// A new session starts a new server, which holds the call again: the
	// session works (its list answers).
	if _, err := mcpEnv(m).ExecuteActivity(m.ListMCPTools, wire.MCPListToolsInput{Server: "held"}); err != nil {
		t.Errorf("after the server died, a new session: %v", err)
	}
}
