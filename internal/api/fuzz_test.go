package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	querypb "go.temporal.io/api/query/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// The fuzz targets drive the whole HTTP API (Gin routes, the request guard,
// a2a-go's JSON-RPC and HTTP+JSON transports in 1.0 and 0.3, TaskService)
// over a fake Temporal. The property: no panic, no hang, no 5xx but the 503
// of Temporal being unavailable, no JSON-RPC internal error, and an answer
// in JSON (or an SSE stream of JSON events).

// fuzzKnownTask is the one task the fake Temporal knows: finished, so that
// no stream waits for its next event.
const fuzzKnownTask = "known-task"

// fuzzTemporal is a fake Temporal client: the embedded nil Client panics on
// any method the API calls that the fake does not override, and the
// fuzz targets report that panic.
type fuzzTemporal struct {
	client.Client
}

func fuzzTask() *a2a.Task {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &a2a.Task{
		ID: fuzzKnownTask, ContextID: "ctx-1",
		Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &ts},
		History: []*a2a.Message{
			a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi")),
			a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("hello")),
		},
		Artifacts: []*a2a.Artifact{{ID: "a-1", Parts: a2a.ContentParts{a2a.NewTextPart("result")}}},
	}
}

var errFuzzUnavailable = serviceerror.NewUnavailable("fake Temporal is unavailable")

func (fuzzTemporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	return nil, errFuzzUnavailable
}

func (fuzzTemporal) NewWithStartWorkflowOperation(client.StartWorkflowOptions, any, ...any) client.WithStartWorkflowOperation {
	return fuzzStartOp{}
}

func (fuzzTemporal) UpdateWithStartWorkflow(context.Context, client.UpdateWithStartWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	return nil, errFuzzUnavailable
}

func (fuzzTemporal) UpdateWorkflow(_ context.Context, opts client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	if opts.WorkflowID != fuzzKnownTask {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	if opts.UpdateName == wire.UpdateCancelTask {
		return nil, temporal.NewApplicationError("task is completed", wire.ErrTypeTaskNotCancelable)
	}
	return nil, temporal.NewApplicationError("task is completed and accepts no more messages", wire.ErrTypeUnsupportedOperation)
}

func (fuzzTemporal) QueryWorkflow(_ context.Context, workflowID, _ string, queryType string, _ ...any) (converter.EncodedValue, error) {
	switch {
	case workflowID == "down":
		return nil, errFuzzUnavailable
	case workflowID != fuzzKnownTask:
		return nil, serviceerror.NewNotFound("workflow not found")
	case queryType == wire.QueryEvents:
		return fuzzValue{wire.EventsOutput{Task: &wire.TaskSnapshot{Task: fuzzTask()}, Last: 3}}, nil
	case queryType == wire.QueryGetTask:
		return fuzzValue{fuzzTask()}, nil
	}
	// Other reads (push configs...) find nothing: null decodes into any result.
	return fuzzValue{nil}, nil
}

// DescribeWorkflowExecution answers as the queries do for unknown and
// unreachable workflows (the API describes a task whose read failed).
func (fuzzTemporal) DescribeWorkflowExecution(_ context.Context, workflowID, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	if workflowID == "down" {
		return nil, errFuzzUnavailable
	}
	return nil, serviceerror.NewNotFound("workflow not found")
}

// QueryWorkflowWithOptions answers as Temporal does for the finished known
// task: a read that rejects closed workflows is rejected with the status.
func (f fuzzTemporal) QueryWorkflowWithOptions(ctx context.Context, req *client.QueryWorkflowWithOptionsRequest) (*client.QueryWorkflowWithOptionsResponse, error) {
	if req.WorkflowID == fuzzKnownTask && req.QueryRejectCondition == enums.QUERY_REJECT_CONDITION_NOT_OPEN {
		return &client.QueryWorkflowWithOptionsResponse{QueryRejected: &querypb.QueryRejected{Status: enums.WORKFLOW_EXECUTION_STATUS_COMPLETED}}, nil
	}
	v, err := f.QueryWorkflow(ctx, req.WorkflowID, req.RunID, req.QueryType, req.Args...)
	if err != nil {
		return nil, err
	}
	return &client.QueryWorkflowWithOptionsResponse{QueryResult: v}, nil
}

func (fuzzTemporal) ListWorkflow(_ context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	if len(req.NextPageToken) > 0 {
		return &workflowservice.ListWorkflowExecutionsResponse{}, nil
	}
	return &workflowservice.ListWorkflowExecutionsResponse{
		Executions: []*workflowpb.WorkflowExecutionInfo{{
			Execution: &commonpb.WorkflowExecution{WorkflowId: fuzzKnownTask, RunId: "run-1"},
			Status:    enums.WORKFLOW_EXECUTION_STATUS_COMPLETED,
		}},
		NextPageToken: []byte(`{"page":2}`),
	}, nil
}

func (fuzzTemporal) CountWorkflow(context.Context, *workflowservice.CountWorkflowExecutionsRequest) (*workflowservice.CountWorkflowExecutionsResponse, error) {
	return &workflowservice.CountWorkflowExecutionsResponse{Count: 2}, nil
}

func (fuzzTemporal) GetWorkflow(_ context.Context, workflowID, runID string) client.WorkflowRun {
	return fuzzRun{id: workflowID, runID: runID}
}

type fuzzStartOp struct{}

func (fuzzStartOp) Get(context.Context) (client.WorkflowRun, error) { return nil, errFuzzUnavailable }

type fuzzRun struct{ id, runID string }

func (r fuzzRun) GetID() string    { return r.id }
func (r fuzzRun) GetRunID() string { return r.runID }
func (r fuzzRun) GetFirstExecutionRunID() string {
	return r.runID
}
func (r fuzzRun) Get(_ context.Context, valuePtr any) error {
	if r.id != fuzzKnownTask {
		return serviceerror.NewNotFound("workflow not found")
	}
	return fuzzValue{fuzzTask()}.Get(valuePtr)
}
func (r fuzzRun) GetWithOptions(ctx context.Context, valuePtr any, _ client.WorkflowRunGetOptions) error {
	return r.Get(ctx, valuePtr)
}

// fuzzValue is a query result, encoded as Temporal's JSON converter would.
type fuzzValue struct{ v any }

func (fuzzValue) HasValue() bool { return true }
func (f fuzzValue) Get(valuePtr any) error {
	b, err := json.Marshal(f.v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, valuePtr)
}

func fuzzHandler(t testing.TB) http.Handler {
	t.Helper()
	handle := func(workflow.Context, *workflows.Task) error { return nil }
	reg, err := engine.NewRegistry(
		&workflows.Agent{Name: "travel", Handle: handle},
		&workflows.Agent{Name: "echo", Handle: handle},
	)
	if err != nil {
		t.Fatal(err)
	}
	return api.New(fuzzTemporal{}, reg, api.Config{
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		MaxBodyBytes: 64 << 10,
	}).Handler()
}

// fuzzServe serves req with a deadline and checks the property on the answer.
func fuzzServe(t *testing.T, h http.Handler, req *http.Request) {
	t.Helper()
	const limit = 5 * time.Second
	ctx, cancel := context.WithTimeout(req.Context(), limit)
	defer cancel()
	rec := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(rec, req.WithContext(ctx))
	if took := time.Since(start); took >= limit {
		t.Fatalf("%s %s hung for %s", req.Method, req.URL, took)
	}
	if err := checkAnswer(rec); err != nil {
		t.Fatalf("%s %s: %v\nanswer %d %s: %q", req.Method, req.URL, err, rec.Code, rec.Header().Get("Content-Type"), truncateBody(rec.Body.Bytes()))
	}
}

// checkAnswer is the property every answer must have.
func checkAnswer(rec *httptest.ResponseRecorder) error {
	status, body := rec.Code, rec.Body.Bytes()
	if status >= 500 && status != http.StatusServiceUnavailable {
		return fmt.Errorf("status %d", status)
	}
	if status >= 300 && status < 400 && rec.Header().Get("Location") != "" {
		return nil // a redirect (Gin's trailing slash, net/http's path cleaning) is not an answer
	}
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			if err := checkJSONAnswer([]byte(data)); err != nil {
				return fmt.Errorf("SSE event: %w", err)
			}
		}
		return sc.Err()
	}
	if status == http.StatusNoContent {
		return nil
	}
	return checkJSONAnswer(body)
}

func checkJSONAnswer(body []byte) error {
	if !json.Valid(body) {
		return errors.New("the answer is not JSON")
	}
	var rpc struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &rpc) == nil && rpc.Error != nil && rpc.Error.Code == -32603 {
		return errors.New("JSON-RPC internal error")
	}
	return nil
}

func truncateBody(b []byte) []byte {
	if len(b) > 2000 {
		return b[:2000]
	}
	return b
}

// fuzzRPCSeeds are JSON-RPC bodies, valid and not, for both versions.
var fuzzRPCSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`,
	`{"jsonrpc":"2.0","id":"s","method":"SendMessage","params":{"message":{"messageId":"m-2","taskId":"known-task","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"historyLength":2,"returnImmediately":true}}}`,
	`{"jsonrpc":"2.0","id":2,"method":"SendStreamingMessage","params":{"message":{"messageId":"m-3","role":"ROLE_USER","parts":[{"data":{"a":[1,2]}}]}}}`,
	`{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"known-task","historyLength":1}}`,
	`{"jsonrpc":"2.0","id":4,"method":"GetTask","params":{"id":"down"}}`,
	`{"jsonrpc":"2.0","id":5,"method":"CancelTask","params":{"id":"known-task"}}`,
	`{"jsonrpc":"2.0","id":6,"method":"SubscribeToTask","params":{"id":"known-task"}}`,
	`{"jsonrpc":"2.0","id":7,"method":"ListTasks","params":{"contextId":"ctx-1","status":"TASK_STATE_COMPLETED","pageSize":3,"includeArtifacts":true}}`,
	`{"jsonrpc":"2.0","id":8,"method":"ListTasks","params":{"pageToken":"AQ"}}`,
	`{"jsonrpc":"2.0","id":9,"method":"GetTaskPushNotificationConfig","params":{"taskId":"known-task","id":"c"}}`,
	`{"jsonrpc":"2.0","id":10,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"known-task","url":"http://127.0.0.1:1/hook"}}`,
	`{"jsonrpc":"2.0","id":11,"method":"GetExtendedAgentCard"}`,
	`{"jsonrpc":"2.0","id":12,"method":"message/send","params":{"message":{"kind":"message","messageId":"m-4","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`,
	`{"jsonrpc":"2.0","id":13,"method":"tasks/get","params":{"id":"known-task"}}`,
	`{"jsonrpc":"2.0","id":14,"method":"SendMessage","params":{"message":{"messageId":"m-5","role":"ROLE_USER","parts":[{"foo":1}]}}}`,
	`{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[1]}`,
	`[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]`,
	`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":5}}`,
	`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"\xff\"}}",
	`{"jsonrpc":"2.0",`,
	``,
}

func FuzzJSONRPC(f *testing.F) {
	for _, body := range fuzzRPCSeeds {
		f.Add("1.0", "/", body)
		f.Add("", "/agents/echo", body)
	}
	f.Add("9.9", "/", fuzzRPCSeeds[0])
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, version, path, body string) {
		if path != "/agents/echo" {
			path = "/"
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if version != "" {
			req.Header.Set("A2A-Version", version)
		}
		fuzzServe(t, h, req)
	})
}

// fuzzMethods are the HTTP methods the REST target picks from.
var fuzzMethods = []string{http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodPut, http.MethodPatch, http.MethodHead, http.MethodOptions}

// fuzzRESTSend is a valid HTTP+JSON SendMessage body.
var fuzzRESTSend = `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`

// fuzzRESTSeeds are HTTP+JSON requests, valid and not, for both versions.
var fuzzRESTSeeds = []struct {
	method      uint8
	path, query string
	contentType string
	body        string
	version     string
}{
	{1, "/message:send", "", "application/json", fuzzRESTSend, "1.0"},
	{1, "/message:stream", "", "application/json", fuzzRESTSend, "1.0"},
	{1, "/message:send", "", "application/json", `{"message":{"messageId":"m","role":"ROLE_ROBOT","parts":[]}}`, "1.0"},
	{1, "/message:send", "", "text/xml", `<message/>`, "1.0"},
	{1, "/message:send", "", "application/json", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"foo":1}]}}`, "1.0"},
	{0, "/tasks/known-task", "historyLength=1", "", "", "1.0"},
	{0, "/tasks/known-task", "historyLength=-1", "", "", "1.0"},
	{0, "/tasks/nope", "", "", "", "1.0"},
	{0, "/tasks/down", "", "", "", "1.0"},
	{0, "/tasks/known-task:subscribe", "", "", "", "1.0"},
	{1, "/tasks/known-task:cancel", "", "", "", "1.0"},
	{1, "/tasks/nope:cancel", "", "", "", "1.0"},
	{0, "/tasks", "contextId=ctx-1&status=TASK_STATE_COMPLETED&pageSize=2", "", "", "1.0"},
	{0, "/tasks", "pageToken=%21%21", "", "", "1.0"},
	{0, "/tasks", "pageSize=1000", "", "", "1.0"},
	{0, "/tasks", "status=TASK_STATE_BOGUS", "", "", "1.0"},
	{0, "/tasks/known-task/pushNotificationConfigs", "", "", "", "1.0"},
	{1, "/tasks/known-task/pushNotificationConfigs", "", "application/json", `{"url":"http://127.0.0.1:1/hook"}`, "1.0"},
	{2, "/tasks/known-task/pushNotificationConfigs/c", "", "", "", "1.0"},
	{0, "/extendedAgentCard", "", "", "", "1.0"},
	{3, "/message:send", "", "application/json", fuzzRESTSend, "1.0"},
	{0, "/", "", "", "", "1.0"},
	{0, "/nope", "", "", "", "1.0"},
	{1, "/v1/message:send", "", "application/json", `{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"hi"}]}}`, ""},
	{0, "/v1/tasks/known-task", "", "", "", ""},
	{0, "/agents/echo/tasks/known-task", "", "", "", "1.0"},
	{0, "/agents/nope/tasks/x", "", "", "", "1.0"},
	{0, "/tasks/\xff", "", "", "", "1.0"},
	{0, "/healthz", "", "", "", ""},
	{0, "/agents", "", "", "", ""},
	{0, "/.well-known/agent-card.json", "", "", "", ""},
	{1, "/message:send", "", "application/json", `{"message":` + strings.Repeat(`{"a":`, 200), "1.0"},
	{1, "/message:send", "", "application/json", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, "9.9"},
}

func FuzzREST(f *testing.F) {
	for _, s := range fuzzRESTSeeds {
		f.Add(s.method, s.path, s.query, s.contentType, s.body, s.version)
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, method uint8, path, query, contentType, body, version string) {
		fuzzServe(t, h, fuzzRESTRequest(method, path, query, contentType, body, version))
	})
}

// fuzzRESTRequest builds a request field by field, so that no fuzzed path
// or query makes httptest.NewRequest panic on parsing.
func fuzzRESTRequest(method uint8, path, query, contentType, body, version string) *http.Request {
	req := httptest.NewRequest(http.MethodGet, "/", strings.NewReader(body))
	req.Method = fuzzMethods[int(method)%len(fuzzMethods)]
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	req.URL.Path, req.URL.RawQuery = path, query
	req.RequestURI = req.URL.RequestURI()
	req.ContentLength = int64(len(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	return req
}

// ScheduleClient answers the schedules routes as an unavailable Temporal.
func (fuzzTemporal) ScheduleClient() client.ScheduleClient { return fuzzSchedules{} }

type fuzzSchedules struct{}

func (fuzzSchedules) Create(context.Context, client.ScheduleOptions) (client.ScheduleHandle, error) {
	return nil, errFuzzUnavailable
}

func (fuzzSchedules) List(context.Context, client.ScheduleListOptions) (client.ScheduleListIterator, error) {
	return nil, errFuzzUnavailable
}

func (fuzzSchedules) GetHandle(_ context.Context, id string) client.ScheduleHandle {
	return fuzzSchedule{id: id}
}

// fuzzSchedule is a schedule handle whose every call finds Temporal
// unavailable (the embedded nil handle is never reached).
type fuzzSchedule struct {
	client.ScheduleHandle
	id string
}

func (s fuzzSchedule) GetID() string { return s.id }
func (fuzzSchedule) Describe(context.Context) (*client.ScheduleDescription, error) {
	return nil, errFuzzUnavailable
}
func (fuzzSchedule) Delete(context.Context) error { return errFuzzUnavailable }

// GetWorkflowHistory answers an empty history: a fork of a task the fake
// knows finds no run to read (404).
func (fuzzTemporal) GetWorkflowHistory(context.Context, string, string, bool, enums.HistoryEventFilterType) client.HistoryEventIterator {
	return emptyHistory{}
}

// WorkflowService answers the fork's page reads of a history the same:
// empty.
func (fuzzTemporal) WorkflowService() workflowservice.WorkflowServiceClient {
	return emptyHistoryService{}
}

// emptyHistoryService reads every history empty (the embedded nil client
// is never reached).
type emptyHistoryService struct {
	workflowservice.WorkflowServiceClient
}

func (emptyHistoryService) GetWorkflowExecutionHistory(context.Context, *workflowservice.GetWorkflowExecutionHistoryRequest, ...grpc.CallOption) (*workflowservice.GetWorkflowExecutionHistoryResponse, error) {
	return &workflowservice.GetWorkflowExecutionHistoryResponse{}, nil
}

type emptyHistory struct{}

func (emptyHistory) HasNext() bool                          { return false }
func (emptyHistory) Next() (*historypb.HistoryEvent, error) { return nil, io.EOF }
