package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// The MCP tests drive /mcp with the official Go SDK's client, over the
// API's real routes and TaskServices, on a fake Temporal (taskTemporal)
// that runs a few scripted agents the way the task workflow answers the
// API: updates whose validators check agent and owner, and numbered events.

// taskTemporal is a fake Temporal holding tasks. Its agents:
//
//   - echo: completes with the text it is sent;
//   - ask: asks "Where to?", then completes with a booking artifact (a
//     text, a data and a file part);
//   - slow: reports two steps while working, then completes;
//   - strict: like echo, but requires an extension (mcpStrictExt).
type taskTemporal struct {
	client.Client
	mu    sync.Mutex
	tasks map[string]*fakeTask
	// sent are the messages the tasks got, in order.
	sent []string
}

// fakeTask is one task of taskTemporal.
type fakeTask struct {
	task   *a2a.Task
	agent  string
	owner  string
	events []wire.Event
	msgIDs map[string]bool
}

func newTaskTemporal() *taskTemporal { return &taskTemporal{tasks: map[string]*fakeTask{}} }

func (*taskTemporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	return &client.CheckHealthResponse{}, nil
}

// fakeStartOp is the start of a task's workflow: its ID and input.
type fakeStartOp struct {
	id string
	in wire.TaskInput
}

func (*fakeStartOp) Get(context.Context) (client.WorkflowRun, error) {
	return nil, serviceerror.NewUnavailable("not kept")
}

func (f *taskTemporal) NewWithStartWorkflowOperation(opts client.StartWorkflowOptions, _ any, args ...any) client.WithStartWorkflowOperation {
	op := &fakeStartOp{id: opts.ID}
	if len(args) == 1 {
		op.in, _ = args[0].(wire.TaskInput)
	}
	return op
}

// fakeHandle is an update's outcome.
type fakeHandle struct {
	id     string
	result any
	err    error
}

func (h fakeHandle) WorkflowID() string { return h.id }
func (h fakeHandle) RunID() string      { return "run-1" }
func (h fakeHandle) UpdateID() string   { return "update" }
func (h fakeHandle) Get(_ context.Context, valuePtr any) error {
	if h.err != nil {
		return h.err
	}
	return fuzzValue{h.result}.Get(valuePtr)
}

func (f *taskTemporal) UpdateWithStartWorkflow(_ context.Context, opts client.UpdateWithStartWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	op := opts.StartWorkflowOperation.(*fakeStartOp)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.tasks[op.id]; !ok {
		in := opts.UpdateOptions.Args[0].(wire.SendMessageInput)
		ts := time.Now().UTC()
		f.tasks[op.id] = &fakeTask{
			task: &a2a.Task{ID: a2a.TaskID(op.id), ContextID: op.in.ContextID,
				Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &ts}},
			agent: op.in.Agent, owner: in.Owner, msgIDs: map[string]bool{},
		}
	}
	return f.update(op.id, opts.UpdateOptions)
}

func (f *taskTemporal) UpdateWorkflow(_ context.Context, opts client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.tasks[opts.WorkflowID]; !ok {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	return f.update(opts.WorkflowID, opts)
}

// update applies an update to task id, as the task workflow's validators
// and handlers do. Call with f.mu held.
func (f *taskTemporal) update(id string, opts client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	ft := f.tasks[id]
	refuse := func(msg, typ string) (client.WorkflowUpdateHandle, error) {
		return fakeHandle{id: id, err: temporal.NewApplicationError(msg, typ)}, nil
	}
	switch in := opts.Args[0].(type) {
	case wire.SendMessageInput:
		if (in.Agent != "" && in.Agent != ft.agent) || (in.Owner != "" && in.Owner != ft.owner) {
			return refuse("task not found", wire.ErrTypeTaskNotFound)
		}
		if ft.msgIDs[in.Message.ID] {
			return refuse("duplicate message", wire.ErrTypeDuplicateMessage)
		}
		if ft.task.Status.State.Terminal() {
			return refuse(fmt.Sprintf("task is %s and accepts no more messages", ft.task.Status.State), wire.ErrTypeUnsupportedOperation)
		}
		ft.msgIDs[in.Message.ID] = true
		status := ft.task.Status
		res := wire.TaskUpdateResult{EventSeq: int64(len(ft.events)), State: status.State, Settled: true, Status: &status,
			Messages: len(ft.task.History), Artifacts: len(ft.task.Artifacts)}
		f.sent = append(f.sent, workflows.MessageText(in.Message))
		f.run(ft, in.Message)
		if !in.ReturnImmediately {
			res.EventSeq, res.State = int64(len(ft.events)), ft.task.Status.State
		}
		return fakeHandle{id: id, result: res}, nil
	case wire.CancelTaskInput:
		if (in.Agent != "" && in.Agent != ft.agent) || (in.Owner != "" && in.Owner != ft.owner) {
			return refuse("task not found", wire.ErrTypeTaskNotFound)
		}
		if ft.task.Status.State.Terminal() {
			return refuse(fmt.Sprintf("task is %s", ft.task.Status.State), wire.ErrTypeTaskNotCancelable)
		}
		f.status(ft, a2a.TaskStateCanceled, "")
		return fakeHandle{id: id, result: wire.TaskUpdateResult{EventSeq: int64(len(ft.events)), State: a2a.TaskStateCanceled, Settled: true}}, nil
	}
	return nil, serviceerror.NewInvalidArgument("unknown update")
}

// run is the agent of ft at work on msg. Call with f.mu held.
func (f *taskTemporal) run(ft *fakeTask, msg *a2a.Message) {
	ft.task.History = append(ft.task.History, msg)
	text := workflows.MessageText(msg)
	f.status(ft, a2a.TaskStateWorking, "")
	switch ft.agent {
	case "ask":
		if len(ft.task.History) == 1 {
			f.status(ft, a2a.TaskStateInputRequired, "Where to?")
			return
		}
		ft.task.Artifacts = append(ft.task.Artifacts, &a2a.Artifact{ID: "booking-1", Name: "booking", Parts: a2a.ContentParts{
			a2a.NewTextPart("Trip to " + text),
			a2a.NewDataPart(map[string]any{"destination": text, "travellers": 2}),
			{Content: a2a.URL("https://files.example/ticket.pdf"), Filename: "ticket.pdf", MediaType: "application/pdf"},
		}})
		ft.events = append(ft.events, wire.Event{Seq: int64(len(ft.events) + 1), Artifact: &a2a.TaskArtifactUpdateEvent{
			TaskID: ft.task.ID, ContextID: ft.task.ContextID, Artifact: ft.task.Artifacts[0]}})
		f.status(ft, a2a.TaskStateCompleted, "Booked: "+text)
	case "hang":
		// Works on, never to end.
	case "slow":
		f.status(ft, a2a.TaskStateWorking, "Step 1 of 2")
		f.status(ft, a2a.TaskStateWorking, "Step 2 of 2")
		f.status(ft, a2a.TaskStateCompleted, "Done: "+text)
	default:
		f.status(ft, a2a.TaskStateCompleted, text)
	}
}

// status sets ft's status, with an agent message of text when not "", as
// an event. Call with f.mu held.
func (f *taskTemporal) status(ft *fakeTask, state a2a.TaskState, text string) {
	ts := time.Now().UTC()
	st := a2a.TaskStatus{State: state, Timestamp: &ts}
	if text != "" {
		st.Message = a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(text))
		ft.task.History = append(ft.task.History, st.Message)
	}
	ft.task.Status = st
	ft.events = append(ft.events, wire.Event{Seq: int64(len(ft.events) + 1), Status: &a2a.TaskStatusUpdateEvent{
		TaskID: ft.task.ID, ContextID: ft.task.ContextID, Status: st}})
}

// snapshot is ft as the GetTask and Events queries answer it. Call with
// f.mu held.
func (ft *fakeTask) snapshot(historyLength *int) *wire.TaskSnapshot {
	raw, _ := json.Marshal(ft.task)
	var t a2a.Task
	_ = json.Unmarshal(raw, &t)
	t.History = wire.LastMessages(t.History, historyLength)
	return &wire.TaskSnapshot{Task: &t, EventSeq: int64(len(ft.events)), Agent: ft.agent, Owner: ft.owner}
}

func (f *taskTemporal) QueryWorkflowWithOptions(_ context.Context, req *client.QueryWorkflowWithOptionsRequest) (*client.QueryWorkflowWithOptionsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ft, ok := f.tasks[req.WorkflowID]
	if !ok {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	denied := func(agent, owner string) bool {
		return (agent != "" && agent != ft.agent) || (owner != "" && owner != ft.owner)
	}
	var out any
	switch in := req.Args[0].(type) {
	case wire.GetTaskInput:
		if denied(in.Agent, in.Owner) {
			return nil, serviceerror.NewNotFound("workflow not found")
		}
		out = ft.snapshot(in.HistoryLength)
	case wire.EventsInput:
		if denied(in.Agent, in.Owner) {
			return nil, serviceerror.NewNotFound("workflow not found")
		}
		eo := wire.EventsOutput{Last: int64(len(ft.events))}
		for _, e := range ft.events {
			if e.Seq > in.After {
				eo.Events = append(eo.Events, e)
			}
		}
		if in.WithTask {
			eo.Task = ft.snapshot(in.HistoryLength)
		}
		out = eo
	default:
		return nil, serviceerror.NewInvalidArgument("unknown query")
	}
	return &client.QueryWorkflowWithOptionsResponse{QueryResult: fuzzValue{out}}, nil
}

// DescribeWorkflowExecution answers with the task's search attributes:
// its agent and owner.
func (f *taskTemporal) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	if id == "panic-task" {
		panic("a bug in the code under the call")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ft, ok := f.tasks[id]
	if !ok {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	fields := map[string]*commonpb.Payload{}
	for k, v := range map[string]string{wire.AgentKey.GetName(): ft.agent, wire.OwnerKey.GetName(): ft.owner} {
		if v == "" {
			continue
		}
		p, err := converter.GetDefaultDataConverter().ToPayload(v)
		if err != nil {
			return nil, err
		}
		fields[k] = p
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Execution:        &commonpb.WorkflowExecution{WorkflowId: id, RunId: "run-1"},
		Status:           enums.WORKFLOW_EXECUTION_STATUS_RUNNING,
		SearchAttributes: &commonpb.SearchAttributes{IndexedFields: fields},
	}}, nil
}

// messages returns the texts the tasks got, in order.
func (f *taskTemporal) messages() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sent)
}

// historyOf returns task id's history length, -1 when there is no such
// task.
func (f *taskTemporal) historyOf(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ft, ok := f.tasks[id]; ok {
		return len(ft.task.History)
	}
	return -1
}

const mcpStrictExt = "urn:a2aflow:test:mcp-required"

// mcpTestServer serves the API over taskTemporal; keys, when set, turn API
// key authentication on.
func mcpTestServer(t *testing.T, keys map[string]string) (*httptest.Server, *taskTemporal) {
	t.Helper()
	return mcpTestServerStopping(t, keys, nil)
}

// mcpTestServerStopping is mcpTestServer whose shutdown begins when
// shuttingDown closes (Config.ShuttingDown).
func mcpTestServerStopping(t *testing.T, keys map[string]string, shuttingDown <-chan struct{}) (*httptest.Server, *taskTemporal) {
	t.Helper()
	noop := func(workflow.Context, *workflows.Task) error { return nil }
	reg, err := engine.NewRegistry(
		&workflows.Agent{Name: "echo", Description: "Answers with the text it is sent.", Handle: noop,
			Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "Repeats the message.", Examples: []string{"hello"}}}},
		&workflows.Agent{Name: "ask", Description: "Books trips; asks where to.", Handle: noop},
		&workflows.Agent{Name: "slow", Description: "Works in steps.", Handle: noop},
		&workflows.Agent{Name: "hang", Description: "Works forever.", Handle: noop},
		&workflows.Agent{Name: "strict", Description: "Needs an extension.", Handle: noop,
			Extensions: []a2a.AgentExtension{{URI: mcpStrictExt, Required: true}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	cfg := api.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), PollInterval: 20 * time.Millisecond, WaitTimeout: 5 * time.Second,
		ShuttingDown: shuttingDown}
	if keys != nil {
		if cfg.Auth, err = guard.NewAuthenticator(context.Background(), guard.AuthConfig{APIKeys: keys}); err != nil {
			t.Fatal(err)
		}
	}
	fake := newTaskTemporal()
	srv := httptest.NewServer(api.New(fake, reg, cfg).Handler())
	t.Cleanup(srv.Close)
	return srv, fake
}

// keyTransport adds an API key (and other headers) to every request.
type keyTransport struct {
	header http.Header
}

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for name, v := range k.header {
		r.Header[name] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpProtocols are the protocol generations a client may speak: with a
// session (2025-11-25), and without (the SDK's latest, 2026-07-28).
var mcpProtocols = []string{"2025-11-25", "2026-07-28"}

// mcpConnect connects an MCP client with opts to srv, speaking protocol,
// with API key key ("" none) and extra headers.
func mcpConnect(t *testing.T, srv *httptest.Server, protocol, key string, opts *mcp.ClientOptions, extra ...string) *mcp.ClientSession {
	t.Helper()
	h := http.Header{}
	if key != "" {
		h.Set("X-API-Key", key)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	transport := &mcp.StreamableClientTransport{Endpoint: srv.URL + guard.MCPPath,
		HTTPClient: &http.Client{Transport: keyTransport{h}}, MaxRetries: -1}
	c := mcp.NewClient(&mcp.Implementation{Name: "a2aflow-test", Version: "1"}, opts)
	cs, err := c.Connect(mcpContext(t), transport, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connect (%s): %v", protocol, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != protocol {
		t.Fatalf("negotiated protocol %s, want %s", got, protocol)
	}
	return cs
}

func mcpContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// callTool calls tool with args and fails t on a protocol error.
func callTool(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(mcpContext(t), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return res
}

// taskView is a result's structured content.
type taskView struct {
	TaskID     string `json:"task_id"`
	ContextID  string `json:"context_id"`
	Agent      string `json:"agent"`
	State      string `json:"state"`
	Message    string `json:"message"`
	Question   string `json:"question"`
	Credential bool   `json:"credential"`
	Artifacts  []struct {
		Name  string           `json:"name"`
		Parts []map[string]any `json:"parts"`
	} `json:"artifacts"`
	Error *struct {
		Code    int    `json:"code"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"error"`
}

func viewOf(t *testing.T, res *mcp.CallToolResult) taskView {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var v taskView
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	return v
}

// texts are the text contents of res.
func texts(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

// TestMCPTools: every agent is a tool, with the helper tools.
func TestMCPTools(t *testing.T) {
	srv, _ := mcpTestServer(t, nil)
	for _, protocol := range mcpProtocols {
		t.Run(protocol, func(t *testing.T) {
			cs := mcpConnect(t, srv, protocol, "", nil)
			res, err := cs.ListTools(mcpContext(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			want := []string{"echo", "ask", "slow", "hang", "strict", "a2aflow_reply", "a2aflow_get_task", "a2aflow_cancel_task"}
			if diff := cmp.Diff(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(names))); diff != "" {
				t.Fatalf("tools (-want +got):\n%s", diff)
			}
			for _, tool := range res.Tools {
				if tool.Name != "echo" {
					continue
				}
				if !strings.Contains(tool.Description, "Answers with the text it is sent.") || !strings.Contains(tool.Description, "Echo: Repeats the message.") {
					t.Errorf("echo's description %q lacks the card's description or skills", tool.Description)
				}
				schema, _ := json.Marshal(tool.InputSchema)
				for _, want := range []string{`"message"`, `"task_id"`, `"context_id"`, `"required":["message"]`} {
					if !bytes.Contains(schema, []byte(want)) {
						t.Errorf("echo's input schema %s lacks %s", schema, want)
					}
				}
			}
		})
	}
}

// TestMCPEcho: a call completes with the agent's reply, the task in
// structured content, made by the A2A path (its ID is a task ID GetTask
// reads over JSON-RPC).
func TestMCPEcho(t *testing.T) {
	srv, _ := mcpTestServer(t, nil)
	for _, protocol := range mcpProtocols {
		t.Run(protocol, func(t *testing.T) {
			cs := mcpConnect(t, srv, protocol, "", nil)
			res := callTool(t, cs, "echo", map[string]any{"message": "hello " + protocol, "context_id": "ctx-" + protocol})
			v := viewOf(t, res)
			if res.IsError || v.State != "completed" || v.Agent != "echo" || v.ContextID != "ctx-"+protocol || v.TaskID == "" {
				t.Fatalf("echo: isError %v, %+v", res.IsError, v)
			}
			if got := texts(res); len(got) != 1 || got[0] != "hello "+protocol {
				t.Errorf("echo's text content %q, want the message", got)
			}
			body := rpc(t, srv.URL+"/agents/echo", "", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+v.TaskID+`"}}`)
			if !strings.Contains(body, `"TASK_STATE_COMPLETED"`) {
				t.Errorf("GetTask %s over JSON-RPC: %s", v.TaskID, body)
			}
		})
	}
}

// rpc posts an A2A 1.0 JSON-RPC request with API key key ("" none).
func rpc(t *testing.T, url, key, body string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestMCPQuestionWithoutElicitation: a client that cannot show a form gets
// the task's ID and question, answers with a2aflow_reply, reads the task
// and is refused cancelling the completed task.
func TestMCPQuestionWithoutElicitation(t *testing.T) {
	srv, fake := mcpTestServer(t, nil)
	for _, protocol := range mcpProtocols {
		t.Run(protocol, func(t *testing.T) {
			cs := mcpConnect(t, srv, protocol, "", nil)
			res := callTool(t, cs, "ask", map[string]any{"message": "Book a trip"})
			v := viewOf(t, res)
			if res.IsError || v.State != "input-required" || v.Question != "Where to?" {
				t.Fatalf("ask: isError %v, %+v", res.IsError, v)
			}
			if got := strings.Join(texts(res), "\n"); !strings.Contains(got, "Where to?") || !strings.Contains(got, v.TaskID) || !strings.Contains(got, "a2aflow_reply") {
				t.Errorf("the question's text %q lacks the question, the task ID or the tool to answer", got)
			}
			got := viewOf(t, callTool(t, cs, "a2aflow_get_task", map[string]any{"task_id": v.TaskID}))
			if got.State != "input-required" || got.Question != "Where to?" {
				t.Errorf("a2aflow_get_task: %+v", got)
			}

			res = callTool(t, cs, "a2aflow_reply", map[string]any{"task_id": v.TaskID, "message": "Lisbon"})
			done := viewOf(t, res)
			if res.IsError || done.State != "completed" || done.Message != "Booked: Lisbon" || len(done.Artifacts) != 1 {
				t.Fatalf("a2aflow_reply: isError %v, %+v", res.IsError, done)
			}
			var kinds []string
			for _, c := range res.Content {
				switch c := c.(type) {
				case *mcp.TextContent:
					kinds = append(kinds, "text "+c.Text)
				case *mcp.ResourceLink:
					kinds = append(kinds, "link "+c.URI+" "+c.Name+" "+c.MIMEType)
				default:
					kinds = append(kinds, fmt.Sprintf("%T", c))
				}
			}
			want := []string{"text Booked: Lisbon", "text Trip to Lisbon", `text {"destination":"Lisbon","travellers":2}`,
				"link https://files.example/ticket.pdf ticket.pdf application/pdf"}
			if diff := cmp.Diff(want, kinds); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
			if parts := done.Artifacts[0].Parts; len(parts) != 3 || parts[1]["data"] == nil || parts[2]["url"] != "https://files.example/ticket.pdf" {
				t.Errorf("the artifact's parts in structured content: %v", parts)
			}

			// A completed task cannot be canceled, nor take another message.
			res = callTool(t, cs, "a2aflow_cancel_task", map[string]any{"task_id": v.TaskID})
			if e := viewOf(t, res).Error; !res.IsError || e == nil || e.Code != -32002 || e.Reason != "TASK_NOT_CANCELABLE" {
				t.Errorf("a2aflow_cancel_task on a completed task: isError %v, %+v", res.IsError, e)
			}
			res = callTool(t, cs, "ask", map[string]any{"message": "again", "task_id": v.TaskID})
			if e := viewOf(t, res).Error; !res.IsError || e == nil || e.Code != -32004 {
				t.Errorf("a message to a completed task: isError %v, %+v", res.IsError, e)
			}
		})
	}
	if got := fake.messages(); len(got) != 4 {
		t.Errorf("the tasks got %q, want a first message and an answer per protocol", got)
	}
}

// TestMCPElicitation: a client that can show a form is asked the task's
// question and the call goes on with the answer; one that declines gets
// the question back.
func TestMCPElicitation(t *testing.T) {
	srv, fake := mcpTestServer(t, nil)
	for _, protocol := range mcpProtocols {
		t.Run(protocol, func(t *testing.T) {
			var asked []string
			var mu sync.Mutex
			action := "accept"
			cs := mcpConnect(t, srv, protocol, "", &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, req.Params.Message)
					return &mcp.ElicitResult{Action: action, Content: map[string]any{"answer": "Porto"}}, nil
				},
			})
			res := callTool(t, cs, "ask", map[string]any{"message": "Book a trip"})
			v := viewOf(t, res)
			if res.IsError || v.State != "completed" || v.Message != "Booked: Porto" {
				t.Fatalf("ask with elicitation: isError %v, %+v", res.IsError, v)
			}
			if diff := cmp.Diff([]string{"Where to?"}, asked); diff != "" {
				t.Errorf("elicited (-want +got):\n%s", diff)
			}
			if n := fake.historyOf(v.TaskID); n != 4 {
				t.Errorf("the task has %d messages, want 4 (request, question, answer, reply)", n)
			}

			action = "decline"
			res = callTool(t, cs, "ask", map[string]any{"message": "Book another trip"})
			if v := viewOf(t, res); res.IsError || v.State != "input-required" || v.Question != "Where to?" {
				t.Errorf("ask, declined: isError %v, %+v", res.IsError, v)
			}
		})
	}
}

// TestMCPProgress: a call with a progress token gets a notification per
// status change of its task, with the status's text.
func TestMCPProgress(t *testing.T) {
	srv, _ := mcpTestServer(t, nil)
	for _, protocol := range mcpProtocols {
		t.Run(protocol, func(t *testing.T) {
			var mu sync.Mutex
			var got []string
			var last float64
			cs := mcpConnect(t, srv, protocol, "", &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					defer mu.Unlock()
					if req.Params.ProgressToken != "p-1" || req.Params.Progress <= last {
						t.Errorf("progress %+v after %v", req.Params, last)
					}
					last = req.Params.Progress
					got = append(got, req.Params.Message)
				},
			})
			params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"message": "go"}}
			params.SetProgressToken("p-1")
			res, err := cs.CallTool(mcpContext(t), params)
			if err != nil || res.IsError {
				t.Fatalf("slow: %v %v", err, res)
			}
			want := []string{"The task is working.", "Step 1 of 2", "Step 2 of 2", "Done: go"}
			waitFor := time.Now().Add(5 * time.Second)
			for {
				mu.Lock()
				n := len(got)
				mu.Unlock()
				if n >= len(want) || time.Now().After(waitFor) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("progress messages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMCPBadInput: what a request gets wrong is answered with a clear
// error: a tool error for arguments, a JSON-RPC error for the rest.
func TestMCPBadInput(t *testing.T) {
	srv, _ := mcpTestServer(t, nil)
	for _, protocol := range mcpProtocols {
		t.Run(protocol, func(t *testing.T) {
			cs := mcpConnect(t, srv, protocol, "", nil)
			for _, c := range []struct {
				tool string
				args map[string]any
				code int    // the A2A error's JSON-RPC code; 0: a schema error
				text string // in the message
			}{
				{"echo", map[string]any{}, 0, "message"},
				{"echo", map[string]any{"message": 42}, 0, "message"},
				{"echo", map[string]any{"message": "  "}, -32602, "message must not be empty"},
				{"echo", map[string]any{"message": "hi", "task_id": "no-such-task"}, -32001, "task not found"},
				{"ask", map[string]any{"message": "hi", "task_id": strings.Repeat("x", 2000)}, -32602, ""},
				{"a2aflow_get_task", map[string]any{"task_id": "no-such-task"}, -32001, "task not found"},
				{"a2aflow_get_task", map[string]any{"task_id": ""}, -32602, "task_id is required"},
				{"a2aflow_reply", map[string]any{"task_id": "no-such-task", "message": "x"}, -32001, "task not found"},
				{"a2aflow_cancel_task", map[string]any{"task_id": "no-such-task"}, -32001, "task not found"},
				{"strict", map[string]any{"message": "hi"}, -32008, mcpStrictExt},
			} {
				res := callTool(t, cs, c.tool, c.args)
				msg := strings.Join(texts(res), " ")
				if !res.IsError || !strings.Contains(msg, c.text) {
					t.Errorf("%s %v: isError %v, %q; want a tool error saying %q", c.tool, c.args, res.IsError, msg, c.text)
				}
				if c.code != 0 {
					if e := viewOf(t, res).Error; e == nil || e.Code != c.code {
						t.Errorf("%s %v: structured error %+v, want code %d", c.tool, c.args, e, c.code)
					}
				}
			}
			_, err := cs.CallTool(mcpContext(t), &mcp.CallToolParams{Name: "no-such-agent", Arguments: map[string]any{"message": "hi"}})
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("an agent that is not served: %v, want a JSON-RPC error %d", err, jsonrpc.CodeInvalidParams)
			}
		})
	}
	// The extension activated, the call goes through.
	cs := mcpConnect(t, srv, "2025-11-25", "", nil, "A2A-Extensions", mcpStrictExt)
	if res := callTool(t, cs, "strict", map[string]any{"message": "hi"}); res.IsError {
		t.Errorf("strict with its extension: %v", texts(res))
	}

	// Raw requests the SDK refuses are answered as JSON-RPC errors.
	for _, c := range []struct {
		name, method, body string
		header             map[string]string
		status             int
		code               int
	}{
		{"malformed JSON", http.MethodPost, `{"jsonrpc":`, nil, 400, -32700},
		{"not JSON-RPC", http.MethodPost, `[1,2]`, nil, 400, -32700},
		{"unknown session", http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": "nope"}, 404, -32001},
		{"GET without a session", http.MethodGet, "", nil, 400, -32600},
		{"DELETE of an unknown session", http.MethodDelete, "", map[string]string{"Mcp-Session-Id": "nope"}, 404, -32001},
		{"a call before initialize", http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`,
			map[string]string{"MCP-Protocol-Version": "2026-07-28"}, 400, -32602},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, srv.URL+guard.MCPPath, strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var env struct {
				Error *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &env); err != nil || env.Error == nil || resp.StatusCode != c.status || env.Error.Code != c.code || env.Error.Message == "" {
				t.Errorf("%s %s: %d %s %s; want %d and JSON-RPC error %d", c.method, c.body, resp.StatusCode, resp.Header.Get("Content-Type"), body, c.status, c.code)
			}
		})
	}
}

// TestMCPOwners: over MCP as everywhere, a caller sees and changes its own
// tasks only: another owner's task (made over MCP or JSON-RPC) answers as
// an unknown one and is left unchanged; a session is its creator's; a
// request without credentials is refused.
func TestMCPOwners(t *testing.T) {
	keys := map[string]string{"alice": "alice-key-0123", "bob": "bob-key-0123"}
	srv, fake := mcpTestServer(t, keys)
	for _, protocol := range mcpProtocols {
		t.Run(protocol, func(t *testing.T) {
			alice := mcpConnect(t, srv, protocol, keys["alice"], nil)
			bob := mcpConnect(t, srv, protocol, keys["bob"], nil)
			overMCP := viewOf(t, callTool(t, alice, "ask", map[string]any{"message": "Book a trip"})).TaskID
			body := rpc(t, srv.URL+"/agents/ask", keys["alice"],
				`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-`+protocol+`","role":"ROLE_USER","parts":[{"text":"Book a trip"}]}}}`)
			var sent struct {
				Result struct {
					Task struct {
						ID string `json:"id"`
					} `json:"task"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(body), &sent); err != nil || sent.Result.Task.ID == "" {
				t.Fatalf("SendMessage as alice: %s", body)
			}
			overRPC := sent.Result.Task.ID
			for _, task := range []string{overMCP, overRPC, "no-such-task"} {
				before := fake.historyOf(task)
				for _, c := range []struct {
					tool string
					args map[string]any
				}{
					{"a2aflow_get_task", map[string]any{"task_id": task}},
					{"a2aflow_reply", map[string]any{"task_id": task, "message": "Mars, says bob"}},
					{"a2aflow_cancel_task", map[string]any{"task_id": task}},
					{"ask", map[string]any{"task_id": task, "message": "Mars, says bob"}},
					{"echo", map[string]any{"task_id": task, "message": "Mars, says bob"}},
				} {
					res := callTool(t, bob, c.tool, c.args)
					e := viewOf(t, res).Error
					if !res.IsError || e == nil || e.Code != -32001 || e.Message != "task not found" {
						t.Errorf("%s on %s as bob: isError %v %+v %q; want task not found", c.tool, task, res.IsError, e, texts(res))
					}
				}
				if after := fake.historyOf(task); after != before {
					t.Errorf("alice's task %s has %d messages after bob tried, %d before", task, after, before)
				}
			}
			for _, task := range []string{overMCP, overRPC} {
				if v := viewOf(t, callTool(t, alice, "a2aflow_get_task", map[string]any{"task_id": task})); v.State != "input-required" {
					t.Errorf("alice reads her task %s: %+v", task, v)
				}
			}
			// bob's call over JSON-RPC on alice's MCP task: not found either.
			if body := rpc(t, srv.URL+"/agents/ask", keys["bob"], `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+overMCP+`"}}`); !strings.Contains(body, "-32001") {
				t.Errorf("GetTask as bob of alice's MCP task: %s", body)
			}
		})
	}
	for _, m := range fake.messages() {
		if strings.Contains(m, "bob") {
			t.Errorf("a task got bob's message %q", m)
		}
	}

	t.Run("no credentials", func(t *testing.T) {
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			req, _ := http.NewRequest(method, srv.URL+guard.MCPPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" || !strings.Contains(string(body), "-31401") {
				t.Errorf("%s /mcp without credentials: %d %s", method, resp.StatusCode, body)
			}
		}
	})

	t.Run("another principal's session", func(t *testing.T) {
		// alice's session ID, sent by bob: not found, as an unknown one.
		var sessionID string
		h := http.Header{"X-Api-Key": {keys["alice"]}}
		transport := &mcp.StreamableClientTransport{Endpoint: srv.URL + guard.MCPPath, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: sessionSpy{keyTransport{h}, &sessionID}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "alice"}, nil).Connect(mcpContext(t), transport,
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if sessionID == "" {
			t.Fatal("no session ID")
		}
		for _, method := range []string{http.MethodPost, http.MethodDelete} {
			req, _ := http.NewRequest(method, srv.URL+guard.MCPPath, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", sessionID)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			req.Header.Set("X-API-Key", keys["bob"])
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "session not found") {
				t.Errorf("%s with alice's session as bob: %d %s", method, resp.StatusCode, body)
			}
		}
		if _, err := cs.ListTools(mcpContext(t), nil); err != nil {
			t.Errorf("alice's session after bob tried it: %v", err)
		}
	})
}

// sessionSpy notes the session ID a server gives.
type sessionSpy struct {
	next http.RoundTripper
	id   *string
}

func (s sessionSpy) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err == nil && resp.Header.Get("Mcp-Session-Id") != "" {
		*s.id = resp.Header.Get("Mcp-Session-Id")
	}
	return resp, err
}

// TestMCPShutdown: when the server shuts down, a call waiting for its task
// answers with the task as it is (still working, to read later), one
// waiting for its user's answer with the question, and the sessions
// close, so that nothing holds the HTTP server's shutdown.
func TestMCPShutdown(t *testing.T) {
	shuttingDown := make(chan struct{})
	srv, fake := mcpTestServerStopping(t, nil, shuttingDown)
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	var calls []chan outcome
	for _, protocol := range mcpProtocols {
		cs := mcpConnect(t, srv, protocol, "", nil)
		done := make(chan outcome, 1)
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hang", Arguments: map[string]any{"message": "go"}})
			done <- outcome{res, err}
		}()
		calls = append(calls, done)
	}
	// A call waiting for its user's answer to a question (a session's
	// elicitation the user leaves open).
	asked := make(chan struct{})
	cs := mcpConnect(t, srv, "2025-11-25", "", &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			close(asked)
			<-ctx.Done()
			return nil, ctx.Err()
		},
	})
	elicited := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"message": "Book a trip"}})
		elicited <- outcome{res, err}
	}()
	select {
	case <-asked:
	case <-time.After(5 * time.Second):
		t.Fatal("the question was not elicited")
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(fake.messages()) < len(calls)+1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the calls follow their tasks
	close(shuttingDown)
	for i, done := range calls {
		select {
		case o := <-done:
			if o.err != nil {
				t.Fatalf("%s: the call failed at shutdown: %v", mcpProtocols[i], o.err)
			}
			v := viewOf(t, o.res)
			if o.res.IsError || v.State != "working" || !strings.Contains(strings.Join(texts(o.res), " "), "a2aflow_get_task") {
				t.Errorf("%s: the call answered %+v %q at shutdown, want the working task to read later", mcpProtocols[i], v, texts(o.res))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the call still waits after the shutdown began", mcpProtocols[i])
		}
	}
	select {
	case o := <-elicited:
		if o.err != nil {
			t.Fatalf("the call waiting for an elicitation failed at shutdown: %v", o.err)
		}
		if v := viewOf(t, o.res); o.res.IsError || v.State != "input-required" || v.Question != "Where to?" {
			t.Errorf("the call waiting for an elicitation answered %+v at shutdown, want the question to answer later", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call waiting for an elicitation still waits after the shutdown began")
	}
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the HTTP server's shutdown waits for MCP requests")
	}
}

// TestMCPPanic: a panic under a tool call (the SDK runs calls outside any
// HTTP middleware) is a JSON-RPC internal error, and the server serves on.
func TestMCPPanic(t *testing.T) {
	srv, _ := mcpTestServer(t, nil)
	for _, protocol := range mcpProtocols {
		cs := mcpConnect(t, srv, protocol, "", nil)
		_, err := cs.CallTool(mcpContext(t), &mcp.CallToolParams{Name: "a2aflow_get_task", Arguments: map[string]any{"task_id": "panic-task"}})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError {
			t.Errorf("%s: a call that panicked answered %v, want a JSON-RPC internal error", protocol, err)
		}
		if res := callTool(t, cs, "echo", map[string]any{"message": "still here"}); res.IsError {
			t.Errorf("%s: after the panic: %v", protocol, texts(res))
		}
	}
}
