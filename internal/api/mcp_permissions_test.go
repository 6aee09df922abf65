package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/workflows"
)

// TestMCPPermissions: over /mcp, a key limited to echo sees only echo's
// tool (and the helper tools), and is refused (-31403, UNAUTHORIZED) the
// tool of ask and the helper tools on its own task of ask, which another
// API replica without the limit created; echo serves it.
func TestMCPPermissions(t *testing.T) {
	fake := newTaskTemporal()
	keys := map[string]string{"alice": "alice-key", "bob": "bob-key"}
	open := permissionsServer(t, fake, keys, nil)
	limited := permissionsServer(t, fake, keys, map[string][]string{"alice": {"echo"}})
	for _, protocol := range mcpProtocols {
		t.Run(protocol, func(t *testing.T) {
			// alice's task of ask, made where she may use every agent.
			own := viewOf(t, callTool(t, mcpConnect(t, open, protocol, "alice-key", nil), "ask", map[string]any{"message": "Book a trip"}))
			if own.State != "input-required" {
				t.Fatalf("ask: %+v", own)
			}
			sentBefore := len(fake.messages())

			cs := mcpConnect(t, limited, protocol, "alice-key", nil)
			res, err := cs.ListTools(mcpContext(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			want := []string{"a2aflow_cancel_task", "a2aflow_get_task", "a2aflow_reply", "echo"}
			if diff := cmp.Diff(want, slices.Sorted(slices.Values(names))); diff != "" {
				t.Errorf("alice's tools (-want +got):\n%s", diff)
			}
			for tool, args := range map[string]map[string]any{
				"ask":                 {"message": "Book a trip"},
				"a2aflow_get_task":    {"task_id": own.TaskID},
				"a2aflow_reply":       {"task_id": own.TaskID, "message": "Lisbon"},
				"a2aflow_cancel_task": {"task_id": own.TaskID},
			} {
				res := callTool(t, cs, tool, args)
				v := viewOf(t, res)
				if !res.IsError || v.Error == nil || v.Error.Code != -31403 || v.Error.Reason != "UNAUTHORIZED" {
					t.Errorf("%s as alice limited to echo: isError %v, %+v; want -31403", tool, res.IsError, v.Error)
				}
			}
			if got := len(fake.messages()); got != sentBefore {
				t.Errorf("the refused calls sent %d messages", got-sentBefore)
			}
			if v := viewOf(t, callTool(t, cs, "echo", map[string]any{"message": "hi"})); v.State != "completed" {
				t.Errorf("echo as alice: %+v", v)
			}
			// bob, not listed, sees every tool.
			all, err := mcpConnect(t, limited, protocol, "bob-key", nil).ListTools(mcpContext(t), nil)
			if err != nil || len(all.Tools) != 8 {
				t.Errorf("bob's tools: %d (%v), want 8", len(all.Tools), err)
			}
		})
	}
}

// permissionsServer serves the agents of mcpTestServer on fake with API
// keys, limited to agents.
func permissionsServer(t *testing.T, fake *taskTemporal, keys map[string]string, agents map[string][]string) *httptest.Server {
	t.Helper()
	noop := func(workflow.Context, *workflows.Task) error { return nil }
	reg, err := engine.NewRegistry(
		&workflows.Agent{Name: "echo", Description: "Answers with the text it is sent.", Handle: noop},
		&workflows.Agent{Name: "ask", Description: "Books trips; asks where to.", Handle: noop},
		&workflows.Agent{Name: "slow", Description: "Works in steps.", Handle: noop},
		&workflows.Agent{Name: "hang", Description: "Works forever.", Handle: noop},
		&workflows.Agent{Name: "strict", Description: "Needs an extension.", Handle: noop},
	)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := guard.NewAuthenticator(context.Background(), guard.AuthConfig{APIKeys: keys, APIKeyAgents: agents})
	if err != nil {
		t.Fatal(err)
	}
	cfg := api.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), PollInterval: 20 * time.Millisecond, WaitTimeout: 5 * time.Second, Auth: auth}
	srv := httptest.NewServer(api.New(fake, reg, cfg).Handler())
	t.Cleanup(srv.Close)
	return srv
}
