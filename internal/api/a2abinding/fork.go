package a2abinding

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
)

// The fork extension's routes and methods (docs/guides/fork.md) on an
// agent's endpoint: POST /tasks/{id}:fork and /tasks/{id}:retry over
// HTTP+JSON (under a tenant prefix too), the JSON-RPC methods ForkTask and
// RetryTask of the extension ForkExtensionURI. TaskService.Fork does the
// fork.

// JSON-RPC methods of the fork extension.
const (
	MethodForkTask  = "ForkTask"
	MethodRetryTask = "RetryTask"
)

// ForkRequest is the body of POST /tasks/{id}:fork (and, with ID, the
// params of ForkTask; RetryTask takes the ID only).
type ForkRequest struct {
	// ID is the task to fork (JSON-RPC only: the path names it over REST).
	ID string `json:"id,omitempty"`
	// AtMessage is the fork point: the fork holds the original's history up
	// to its AtMessage-th message (1 is the first message only). Every
	// input the original received while its history held fewer messages is
	// replayed from its record.
	AtMessage int `json:"atMessage"`
	// ContextID puts the fork in another context (default: the original's).
	ContextID string `json:"contextId,omitempty"`
}

// forkPath matches the fork and retry routes of the HTTP+JSON binding,
// with an optional tenant prefix.
var forkPath = regexp.MustCompile(`^(?:/[^/]+)?/tasks/([^/]+):(fork|retry)$`)

// serveForkREST answers POST /tasks/{id}:fork and :retry; false when the
// request is no such route.
func serveForkREST(w http.ResponseWriter, r *http.Request, svc *taskservice.TaskService) bool {
	m := forkPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		return false
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		apierror.Write(w, apierror.HTTPJSON, nil, http.StatusMethodNotAllowed, a2a.NewError(a2a.ErrMethodNotFound,
			fmt.Sprintf("method %s is not allowed: %s takes POST", r.Method, r.URL.Path)))
		return true
	}
	var req ForkRequest
	if body, _, err := guard.ReadBody(r); err != nil {
		apierror.Write(w, apierror.HTTPJSON, nil, 0, a2a.NewError(a2a.ErrParseError, err.Error()))
		return true
	} else if len(body) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			apierror.Write(w, apierror.HTTPJSON, nil, 0, a2a.NewError(a2a.ErrInvalidParams, "invalid body: "+err.Error()))
			return true
		}
	}
	task, err := forkOrRetry(r.Context(), svc, a2a.TaskID(m[1]), m[2] == "retry", req)
	if err != nil {
		apierror.Write(w, apierror.HTTPJSON, nil, 0, err)
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(task)
	return true
}

// serveForkRPC answers the JSON-RPC methods ForkTask and RetryTask; false
// when the request is another method.
func serveForkRPC(w http.ResponseWriter, r *http.Request, svc *taskservice.TaskService) bool {
	body, _, err := guard.ReadBody(r)
	guard.SetBody(r, body)
	if err != nil {
		return false // the endpoint answers it
	}
	env, _, sentinel := parseJSONRPCEnvelope(body)
	if sentinel != nil || (env.Method != MethodForkTask && env.Method != MethodRetryTask) {
		return false
	}
	var req ForkRequest
	if len(env.Params) > 0 && string(env.Params) != "null" {
		if err := json.Unmarshal(env.Params, &req); err != nil {
			apierror.Write(w, apierror.JSONRPC, env.ID, 0, a2a.NewError(a2a.ErrInvalidParams, "invalid params: "+err.Error()))
			return true
		}
	}
	task, err := forkOrRetry(r.Context(), svc, a2a.TaskID(req.ID), env.Method == MethodRetryTask, req)
	if err != nil {
		apierror.Write(w, apierror.JSONRPC, env.ID, 0, err)
		return true
	}
	id := env.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  *a2a.Task       `json:"result"`
	}{"2.0", id, task})
	return true
}

// forkOrRetry checks the caller and the request, then forks.
func forkOrRetry(ctx context.Context, svc *taskservice.TaskService, id a2a.TaskID, retry bool, req ForkRequest) (*a2a.Task, error) {
	if err := guard.PermitAgent(ctx, svc.Agent().Name); err != nil {
		return nil, err
	}
	if id == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "id is required")
	}
	if req.ContextID != "" {
		if err := taskservice.CheckTaskID(req.ContextID); err != nil {
			return nil, a2a.NewError(a2a.ErrInvalidParams, "contextId: "+err.Error())
		}
	}
	return svc.Fork(ctx, id, retry, req.AtMessage, req.ContextID)
}
