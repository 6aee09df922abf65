package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// The MCP server of `a2aflow serve` (/mcp), driven with the official Go
// SDK's client: every agent a tool, a call running an A2A task to its end,
// the travel agent's questions asked by elicitation (both protocol
// generations: a session's server-to-client request up to 2025-11-25, an
// input request of the result from 2026-07-28) or answered with
// a2aflow_reply, reading and cancelling tasks, and progress notifications.
// Its place in the tenant matrix is tenants_mcp_test.go.

// mcpProtocolVersions are the two protocol generations a client may speak.
var mcpProtocolVersions = []string{"2025-11-25", "2026-07-28"}

// headerTransport adds headers (credentials) to every request.
type headerTransport struct{ header http.Header }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.header {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects an MCP client with opts to serve's /mcp in protocol,
// sending header with every request.
func mcpSession(t testing.TB, apiURL, protocol string, header http.Header, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	transport := &mcp.StreamableClientTransport{Endpoint: apiURL + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: headerTransport{header}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "a2aflow-e2e", Version: "1"}, opts).Connect(ctx, transport,
		&mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("MCP connect (%s): %v", protocol, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != protocol {
		t.Fatalf("MCP negotiated %s, want %s", got, protocol)
	}
	return cs
}

// mcpCall calls tool with args; a protocol error fails t.
func mcpCall(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	return mcpCallParams(t, cs, &mcp.CallToolParams{Name: tool, Arguments: args})
}

func mcpCallParams(t testing.TB, cs *mcp.ClientSession, params *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("MCP %s %v: %v", params.Name, params.Arguments, err)
	}
	return res
}

// mcpTask is a call's structured content: the task, or the error.
type mcpTask struct {
	TaskID    string `json:"task_id"`
	ContextID string `json:"context_id"`
	Agent     string `json:"agent"`
	State     string `json:"state"`
	Message   string `json:"message"`
	Question  string `json:"question"`
	Artifacts []struct {
		Name  string `json:"name"`
		Parts []struct {
			Text *string        `json:"text"`
			Data map[string]any `json:"data"`
		} `json:"parts"`
	} `json:"artifacts"`
	Error *struct {
		Code    int    `json:"code"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"error"`
}

func mcpTaskOf(t testing.TB, res *mcp.CallToolResult) mcpTask {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var v mcpTask
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	return v
}

// mcpText is the text content of res, joined.
func mcpText(res *mcp.CallToolResult) string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

// wantBooking checks a completed travel task's booking artifact.
func wantBooking(t testing.TB, v mcpTask, destination string) {
	t.Helper()
	if v.State != "completed" || len(v.Artifacts) != 1 || v.Artifacts[0].Name != "booking" || len(v.Artifacts[0].Parts) != 1 {
		t.Fatalf("travel task %s: %+v, want completed with its booking", v.TaskID, v)
	}
	b := v.Artifacts[0].Parts[0].Data
	if b["destination"] != destination || b["date"] != "2026-12-24" || b["travellers"] != float64(2) {
		t.Errorf("booking %v, want %s, 2026-12-24, 2 travellers", b, destination)
	}
	if ref, _ := b["reference"].(string); len(ref) != 9 || !strings.Contains(v.Message, ref) {
		t.Errorf("booking reference %q not in the reply %q", b["reference"], v.Message)
	}
}

func TestMCP(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())

	t.Run("tools", func(t *testing.T) {
		resp, err := http.Get(s.APIURL + "/agents")
		if err != nil {
			t.Fatal(err)
		}
		var agents struct {
			Agents []struct {
				Name string `json:"name"`
			} `json:"agents"`
		}
		err = json.NewDecoder(resp.Body).Decode(&agents)
		resp.Body.Close()
		if err != nil || len(agents.Agents) < 2 {
			t.Fatalf("GET /agents: %v %+v", err, agents)
		}
		want := []string{"a2aflow_cancel_task", "a2aflow_get_task", "a2aflow_reply"}
		for _, a := range agents.Agents {
			want = append(want, a.Name)
		}
		for _, protocol := range mcpProtocolVersions {
			cs := mcpSession(t, s.APIURL, protocol, nil, nil)
			var got []string
			for tool, err := range cs.Tools(context.Background(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, tool.Name)
			}
			if diff := cmp.Diff(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got))); diff != "" {
				t.Errorf("tools over %s (-want +got):\n%s", protocol, diff)
			}
		}
	})

	t.Run("echo", func(t *testing.T) {
		for _, protocol := range mcpProtocolVersions {
			cs := mcpSession(t, s.APIURL, protocol, nil, nil)
			res := mcpCall(t, cs, "echo", map[string]any{"message": "hello over " + protocol})
			v := mcpTaskOf(t, res)
			if res.IsError || v.State != "completed" || mcpText(res) != "hello over "+protocol || v.TaskID == "" {
				t.Errorf("echo over %s: isError %v, %q, %+v", protocol, res.IsError, mcpText(res), v)
			}
		}
	})

	for _, protocol := range mcpProtocolVersions {
		t.Run("travel with elicitation/"+protocol, func(t *testing.T) {
			answers := map[string]string{"Where to?": "Lisbon", "On which date? (YYYY-MM-DD)": "2026-12-24", "How many travellers?": "2"}
			var mu sync.Mutex
			var asked []string
			cs := mcpSession(t, s.APIURL, protocol, nil, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, req.Params.Message)
					answer, ok := answers[req.Params.Message]
					if !ok {
						return &mcp.ElicitResult{Action: "decline"}, nil
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": answer}}, nil
				},
			})
			res := mcpCall(t, cs, "travel", map[string]any{"message": "Book a flight"})
			if res.IsError {
				t.Fatalf("travel: %s", mcpText(res))
			}
			wantBooking(t, mcpTaskOf(t, res), "Lisbon")
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff([]string{"Where to?", "On which date? (YYYY-MM-DD)", "How many travellers?"}, asked); diff != "" {
				t.Errorf("questions asked (-want +got):\n%s", diff)
			}
		})
	}

	for _, protocol := range mcpProtocolVersions {
		t.Run("travel with a2aflow_reply/"+protocol, func(t *testing.T) {
			var mu sync.Mutex
			var progress []string
			cs := mcpSession(t, s.APIURL, protocol, nil, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					defer mu.Unlock()
					progress = append(progress, req.Params.Message)
				},
			})
			res := mcpCall(t, cs, "travel", map[string]any{"message": "Book a flight"})
			v := mcpTaskOf(t, res)
			if res.IsError || v.State != "input-required" || v.Question != "Where to?" || !strings.Contains(mcpText(res), v.TaskID) {
				t.Fatalf("travel without elicitation: isError %v, %q, %+v", res.IsError, mcpText(res), v)
			}
			if got := mcpTaskOf(t, mcpCall(t, cs, "a2aflow_get_task", map[string]any{"task_id": v.TaskID})); got.State != "input-required" || got.Question != "Where to?" {
				t.Errorf("a2aflow_get_task: %+v", got)
			}
			next := mcpTaskOf(t, mcpCall(t, cs, "a2aflow_reply", map[string]any{"task_id": v.TaskID, "message": "Porto"}))
			if next.Question != "On which date? (YYYY-MM-DD)" {
				t.Fatalf("after the destination: %+v", next)
			}
			next = mcpTaskOf(t, mcpCall(t, cs, "a2aflow_reply", map[string]any{"task_id": v.TaskID, "message": "2026-12-24"}))
			if next.Question != "How many travellers?" {
				t.Fatalf("after the date: %+v", next)
			}
			// The last answer with a progress token: the task's status
			// changes while it books come as progress notifications.
			params := &mcp.CallToolParams{Name: "a2aflow_reply", Arguments: map[string]any{"task_id": v.TaskID, "message": "2"}}
			params.SetProgressToken("booking-" + protocol)
			res = mcpCallParams(t, cs, params)
			if res.IsError {
				t.Fatalf("the last answer: %s", mcpText(res))
			}
			done := mcpTaskOf(t, res)
			wantBooking(t, done, "Porto")
			deadline := time.Now().Add(10 * time.Second)
			for {
				mu.Lock()
				got := slices.Clone(progress)
				mu.Unlock()
				if slices.ContainsFunc(got, func(m string) bool { return strings.HasPrefix(m, "Booking 2 traveller(s) to Porto") }) &&
					slices.Contains(got, done.Message) {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("progress notifications %q lack the booking step and the reply %q", got, done.Message)
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			// Read, then cancel: a completed task is not cancelable.
			if got := mcpTaskOf(t, mcpCall(t, cs, "a2aflow_get_task", map[string]any{"task_id": v.TaskID})); got.State != "completed" || got.Message != done.Message {
				t.Errorf("a2aflow_get_task of the completed task: %+v", got)
			}
			res = mcpCall(t, cs, "a2aflow_cancel_task", map[string]any{"task_id": v.TaskID})
			if e := mcpTaskOf(t, res).Error; !res.IsError || e == nil || e.Code != -32002 {
				t.Errorf("a2aflow_cancel_task of the completed task: isError %v, %+v", res.IsError, e)
			}
		})
	}

	t.Run("cancel", func(t *testing.T) {
		for _, protocol := range mcpProtocolVersions {
			cs := mcpSession(t, s.APIURL, protocol, nil, nil)
			v := mcpTaskOf(t, mcpCall(t, cs, "travel", map[string]any{"message": "Book a flight"}))
			res := mcpCall(t, cs, "a2aflow_cancel_task", map[string]any{"task_id": v.TaskID})
			if got := mcpTaskOf(t, res); res.IsError || got.State != "canceled" {
				t.Errorf("a2aflow_cancel_task over %s: isError %v, %+v", protocol, res.IsError, got)
			}
			// A canceled task takes no answer: a tool error, nothing recorded.
			res = mcpCall(t, cs, "a2aflow_reply", map[string]any{"task_id": v.TaskID, "message": "Lisbon"})
			if e := mcpTaskOf(t, res).Error; !res.IsError || e == nil || e.Code != -32004 {
				t.Errorf("a2aflow_reply to a canceled task over %s: isError %v, %+v", protocol, res.IsError, e)
			}
		}
	})

	t.Run("bad input", func(t *testing.T) {
		cs := mcpSession(t, s.APIURL, "2026-07-28", nil, nil)
		for _, c := range []struct {
			tool string
			args map[string]any
			code int
		}{
			{"travel", map[string]any{}, 0},
			{"travel", map[string]any{"message": "Lisbon", "task_id": "no-such-task"}, -32001},
			{"a2aflow_get_task", map[string]any{"task_id": "no-such-task"}, -32001},
			{"a2aflow_reply", map[string]any{"task_id": "no-such-task", "message": "Lisbon"}, -32001},
		} {
			res := mcpCall(t, cs, c.tool, c.args)
			if !res.IsError || (c.code != 0 && (mcpTaskOf(t, res).Error == nil || mcpTaskOf(t, res).Error.Code != c.code)) {
				t.Errorf("%s %v: isError %v, %q; want a tool error %d", c.tool, c.args, res.IsError, mcpText(res), c.code)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no-such-agent", Arguments: map[string]any{"message": "hi"}}); err == nil {
			t.Error("an agent that is not served answered as a tool")
		}
	})

	t.Run("shutdown", func(t *testing.T) { mcpShutdown(t, s) }) // last: it stops serve
}

// mcpShutdown: SIGTERM while a session's call waits for its user's answer
// (an elicitation left open) and the session's own stream is open: the
// call answers with the question, to answer after the restart with
// a2aflow_reply, and serve exits at once, cleanly. It stops s.
func mcpShutdown(t *testing.T, s *harness.Server) {
	asked := make(chan struct{})
	cs := mcpSession(t, s.APIURL, "2025-11-25", nil, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			close(asked)
			<-ctx.Done()
			return nil, ctx.Err()
		},
	})
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "travel", Arguments: map[string]any{"message": "Book a flight"}})
		done <- outcome{res, err}
	}()
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the question was not elicited")
	}
	p := s.Proc()
	sent := time.Now()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("the call failed at the shutdown: %v", o.err)
		}
		if v := mcpTaskOf(t, o.res); o.res.IsError || v.State != "input-required" || v.Question != "Where to?" {
			t.Errorf("the call answered %+v at the shutdown, want the question", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call still waits 10 s after SIGTERM")
	}
	select {
	case <-p.Done:
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not exit within 20 s of SIGTERM with an MCP session open")
	}
	if code := p.Cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("serve exited %d after SIGTERM, want 0", code)
	}
	t.Logf("SIGTERM with an MCP session open: serve exited after %s", time.Since(sent).Round(time.Millisecond))
}

// TestMCPCredential: a task asking for a credential (auth-required) is
// never asked by elicitation, even of a client that can show forms: MCP
// forbids asking secrets in a form. The result says what the task waits
// for; the credential sent with a2aflow_reply takes the A2A path (stored
// sealed, the task gets a reference), and is neither in the task's
// Temporal history nor in the server's logs (at debug).
func TestMCPCredential(t *testing.T) {
	const token = "ghp_McpTokenOfTheUser1234567890"
	github := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"message":"Bad credentials"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"number":7,"title":"Widgets wobble","html_url":"https://github.com/octo/widgets/issues/7","state":"open","user":{"login":"ann"}}]`)
	}))
	defer github.Close()
	s := harness.StartServeEnv(t, t.TempDir(), []string{"A2AFLOW_GITHUB_API_URL=" + github.URL}, "--log-level", "debug")

	for _, protocol := range mcpProtocolVersions {
		t.Run(protocol, func(t *testing.T) {
			var elicited []string
			var mu sync.Mutex
			cs := mcpSession(t, s.APIURL, protocol, nil, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					elicited = append(elicited, req.Params.Message)
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
			})
			res := mcpCall(t, cs, "issues", map[string]any{"message": "List the open issues of octo/widgets"})
			v := mcpTaskOf(t, res)
			if res.IsError || v.State != "auth-required" || !strings.Contains(mcpText(res), "a2aflow_reply") {
				t.Fatalf("issues: isError %v, %q, %+v", res.IsError, mcpText(res), v)
			}
			var raw map[string]any
			b, _ := json.Marshal(res.StructuredContent)
			_ = json.Unmarshal(b, &raw)
			if raw["credential"] != true {
				t.Errorf("the result %s does not say the task waits for a credential", b)
			}
			res = mcpCall(t, cs, "a2aflow_reply", map[string]any{"task_id": v.TaskID, "message": token})
			if done := mcpTaskOf(t, res); res.IsError || done.State != "completed" || done.Message != "1 open issue(s) in octo/widgets." {
				t.Fatalf("the credential's answer: isError %v, %q, %+v", res.IsError, mcpText(res), done)
			}
			mu.Lock()
			if len(elicited) > 0 {
				t.Errorf("the client was asked %q: a credential must not be elicited", elicited)
			}
			mu.Unlock()

			tc, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default"})
			if err != nil {
				t.Fatal(err)
			}
			defer tc.Close()
			var history bytes.Buffer
			iter := tc.GetWorkflowHistory(harness.Context(t), v.TaskID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for iter.HasNext() {
				e, err := iter.Next()
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := proto.Marshal(e)
				history.Write(raw)
			}
			if strings.Contains(history.String(), token) || !strings.Contains(history.String(), "credentialRef") {
				t.Errorf("the task's history holds the token, or no credential reference")
			}
		})
	}
	if strings.Contains(s.Proc().Out.String(), token) {
		t.Error("the token is in the server's logs")
	}
}
