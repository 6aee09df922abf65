package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// runMCP is the tenant matrix over MCP (/mcp, mcp_test.go), in both
// protocol generations: alice and carol each start a travel task over MCP
// too; then every tenant, at another tenant's tasks (the ones started over
// JSON-RPC in the fixtures and the one started over MCP) and an unknown
// one, reads, answers, cancels and continues them (a2aflow_get_task,
// a2aflow_reply, a2aflow_cancel_task, an agent's tool with task_id): each
// is a tool error "task not found", word for word what the unknown task
// gets, holding none of the owner's data, and the tasks are left as they
// were (the fixtures' are checked by the next phase). Each tenant drives
// its own task over MCP. A2A cannot read a task started over MCP either;
// /mcp without credentials is 401, and a session is its creator's.
func (m *tenantMatrix) runMCP(t *testing.T) {
	mcpTasks := map[string]fixtureTask{}
	for _, f := range m.fixtures {
		cs := m.mcpSession(t, f.owner, "2026-07-28")
		text := fmt.Sprintf("Book a flight for %s over MCP, trip %s", f.owner.name, m.nonce)
		v := mcpTaskOf(t, mcpCall(t, cs, "travel", map[string]any{"message": text}))
		if v.State != "input-required" || v.Question != "Where to?" {
			t.Fatalf("%s's travel task over MCP: %+v", f.owner, v)
		}
		task := fixtureTask{id: v.TaskID, contextID: v.ContextID}
		m.own(f.owner, task.id)
		f.addSecret(secretTaskID, task.id)
		f.addSecret(secretContextID, task.contextID)
		f.addSecret("first message", fmt.Sprintf("for %s over MCP, trip %s", f.owner.name, m.nonce))
		mcpTasks[f.owner.name] = task
	}
	before := map[string]int{}
	for _, task := range mcpTasks {
		before[task.id] = m.historyEvents(t, task.id)
	}

	// A group, so that its parallel cases end before the checks below.
	t.Run("tools", func(t *testing.T) {
		for _, tn := range m.tenants {
			for _, protocol := range mcpProtocolVersions {
				t.Run(tn.name+"/"+protocol, func(t *testing.T) {
					t.Parallel()
					cs := m.mcpSession(t, tn, protocol)
					m.mcpAttacks(t, tn, cs, mcpTasks[m.victim(tn).owner.name])
					m.mcpOwnChain(t, tn, cs)
				})
			}
		}
	})
	t.Run("A2A reads no task of another tenant started over MCP", func(t *testing.T) {
		alice := mcpTasks[m.alice.name]
		for _, tn := range []*tenant{m.bob, m.mallory, m.carol, m.fiona} {
			for _, v := range matrixVariants {
				m.expect(t, tn, m.call(v, methodGet, a2aArgs{taskID: alice.id}), wantNotFound(v))
				msg := &wireMessage{id: fmt.Sprintf("msg-%s-mcp-%s", tn.name, m.nonce), taskID: alice.id, text: "Mars, says " + tn.name}
				m.expect(t, tn, m.call(v, methodSend, a2aArgs{message: msg}), wantNotFound(v))
			}
		}
	})
	t.Run("tasks started over MCP unchanged", func(t *testing.T) {
		for owner, task := range mcpTasks {
			if after := m.historyEvents(t, task.id); after != before[task.id] {
				t.Errorf("%s's MCP task %s: %d history events after the other tenants tried, %d before", owner, task.id, after, before[task.id])
			}
			who := m.alice
			if owner == m.carol.name {
				who = m.carol
			}
			cs := m.mcpSession(t, who, "2025-11-25")
			if v := mcpTaskOf(t, mcpCall(t, cs, "a2aflow_get_task", map[string]any{"task_id": task.id})); v.State != "input-required" || v.Question != "Where to?" {
				t.Errorf("%s reads her MCP task: %+v", owner, v)
			}
		}
	})
	t.Run("no credentials", func(t *testing.T) {
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			for _, key := range []string{"", "no-such-key"} {
				req, _ := http.NewRequest(method, m.s.APIURL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if key != "" {
					req.Header.Set("X-API-Key", key)
				}
				resp, err := m.http.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				m.cases.Add(1)
				if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" || !strings.Contains(string(body), "-31401") {
					t.Errorf("%s /mcp with key %q: %d %s", method, key, resp.StatusCode, body)
				}
			}
		}
	})
	t.Run("a session is its creator's", func(t *testing.T) {
		var sessionID string
		h := http.Header{}
		m.alice.setCredential(h)
		transport := &mcp.StreamableClientTransport{Endpoint: m.s.APIURL + "/mcp", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: sessionNoter{headerTransport{h}, &sessionID}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "alice"}, nil).Connect(harness.Context(t), transport,
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if sessionID == "" {
			t.Fatal("alice's session has no ID")
		}
		for _, tn := range []*tenant{m.bob, m.carol} {
			for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
				req, _ := http.NewRequest(method, m.s.APIURL+"/mcp", strings.NewReader(
					`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"a2aflow_get_task","arguments":{"task_id":"`+mcpTasks[m.alice.name].id+`"}}}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", sessionID)
				req.Header.Set("MCP-Protocol-Version", "2025-11-25")
				tn.setCredential(req.Header)
				resp, err := m.http.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				m.cases.Add(1)
				if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "session not found") {
					t.Errorf("%s /mcp in alice's session as %s: %d %s", method, tn, resp.StatusCode, body)
				}
				for _, leak := range m.leaks(tn, tenantCall{}, tenantAnswer{raw: body}) {
					t.Errorf("%s /mcp in alice's session as %s: the answer leaks %s", method, tn, leak)
				}
			}
		}
		if _, err := cs.ListTools(harness.Context(t), nil); err != nil {
			t.Errorf("alice's session after others tried it: %v", err)
		}
	})
}

// sessionNoter notes the session ID a server gives.
type sessionNoter struct {
	next http.RoundTripper
	id   *string
}

func (s sessionNoter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err == nil && resp.Header.Get("Mcp-Session-Id") != "" {
		*s.id = resp.Header.Get("Mcp-Session-Id")
	}
	return resp, err
}

// mcpSession is an MCP session of tn in protocol.
func (m *tenantMatrix) mcpSession(t *testing.T, tn *tenant, protocol string) *mcp.ClientSession {
	t.Helper()
	h := http.Header{}
	tn.setCredential(h)
	return mcpSession(t, m.s.APIURL, protocol, h, nil)
}

// own records a task tn created.
func (m *tenantMatrix) own(tn *tenant, taskID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.owned[tn.name] == nil {
		m.owned[tn.name] = map[string]bool{}
	}
	m.owned[tn.name][taskID] = true
}

// mcpAttacks drives every task tool of MCP as tn at another tenant's
// tasks and an unknown one.
func (m *tenantMatrix) mcpAttacks(t *testing.T, tn *tenant, cs *mcp.ClientSession, overMCP fixtureTask) {
	victim := m.victim(tn)
	unknown := "no-such-task-" + m.nonce
	targets := []struct {
		name  string
		id    string
		agent string
	}{
		{"unknown task", unknown, "travel"}, // first: the others are compared with it
		{victim.owner.name + "'s waiting task", victim.waiting.id, "travel"},
		{victim.owner.name + "'s completed task", victim.completed.id, "travel"},
		{victim.owner.name + "'s expense", victim.expense.id, "expenses"},
		{victim.owner.name + "'s task started over MCP", overMCP.id, "travel"},
	}
	unknownAnswer := map[string]string{}
	for _, target := range targets {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"a2aflow_get_task", map[string]any{"task_id": target.id}},
			{"a2aflow_reply", map[string]any{"task_id": target.id, "message": "Mars, says " + tn.name}},
			{"a2aflow_cancel_task", map[string]any{"task_id": target.id}},
			{target.agent, map[string]any{"task_id": target.id, "message": "Mars, says " + tn.name}},
			{"echo", map[string]any{"task_id": target.id, "message": "Mars, says " + tn.name}},
		} {
			kind := c.tool
			if kind == target.agent {
				kind = "the task's agent"
			}
			res := mcpCall(t, cs, c.tool, c.args)
			m.cases.Add(1)
			raw, _ := json.Marshal(res)
			answer := strings.ReplaceAll(string(raw), target.id, "<request>")
			e := mcpTaskOf(t, res).Error
			if !res.IsError || e == nil || e.Code != -32001 || e.Message != "task not found" {
				t.Errorf("%s on %s as %s: %s; want the tool error task not found", c.tool, target.name, tn, raw)
			}
			for _, leak := range m.leaks(tn, tenantCall{echo: []string{target.id}}, tenantAnswer{raw: raw, isError: true}) {
				t.Errorf("%s on %s as %s: the answer leaks %s: %s", c.tool, target.name, tn, leak, raw)
			}
			if target.id == unknown {
				unknownAnswer[kind] = answer
			} else if answer != unknownAnswer[kind] {
				t.Errorf("%s on %s as %s answers otherwise than on an unknown task, which tells that the task exists:\n  %s\n  %s",
					c.tool, target.name, tn, answer, unknownAnswer[kind])
			}
		}
	}
}

// mcpOwnChain drives tn's own travel task over MCP: start, read, answer,
// cancel.
func (m *tenantMatrix) mcpOwnChain(t *testing.T, tn *tenant, cs *mcp.ClientSession) {
	v := mcpTaskOf(t, mcpCall(t, cs, "travel", map[string]any{"message": "Book a flight, " + tn.name + " over MCP"}))
	if v.State != "input-required" || v.TaskID == "" {
		t.Fatalf("travel over MCP as %s: %+v", tn, v)
	}
	m.own(tn, v.TaskID)
	if got := mcpTaskOf(t, mcpCall(t, cs, "a2aflow_get_task", map[string]any{"task_id": v.TaskID})); got.Question != "Where to?" {
		t.Errorf("a2aflow_get_task of its own task as %s: %+v", tn, got)
	}
	if got := mcpTaskOf(t, mcpCall(t, cs, "a2aflow_reply", map[string]any{"task_id": v.TaskID, "message": "Lisbon"})); got.Question != "On which date? (YYYY-MM-DD)" {
		t.Errorf("a2aflow_reply to its own task as %s: %+v", tn, got)
	}
	if got := mcpTaskOf(t, mcpCall(t, cs, "travel", map[string]any{"task_id": v.TaskID, "message": "2026-12-24"})); got.Question != "How many travellers?" {
		t.Errorf("travel with its own task_id as %s: %+v", tn, got)
	}
	if got := mcpTaskOf(t, mcpCall(t, cs, "a2aflow_cancel_task", map[string]any{"task_id": v.TaskID})); got.State != "canceled" {
		t.Errorf("a2aflow_cancel_task of its own task as %s: %+v", tn, got)
	}
	m.cases.Add(5)
}
