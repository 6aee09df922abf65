package a2abinding

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
)

// Streams on an agent's endpoint: which requests open one (they take one
// of the client's stream slots, Guard.OpenStream), and the refusal of a
// subscription before its stream opens.

// streamMethods are the JSON-RPC methods answered with a stream, in A2A 1.0
// and 0.3.
var streamMethods = map[string]bool{
	"SendStreamingMessage": true, "SubscribeToTask": true,
	"message/stream": true, "tasks/resubscribe": true,
}

// streamRequest reports whether r, on an agent's endpoint (its path with
// the agent's prefix stripped), opens a stream, and for JSON-RPC returns the
// request's id. The JSON-RPC body was buffered by guardBinding.
func streamRequest(r *http.Request, jsonRPC bool) (bool, json.RawMessage) {
	if !jsonRPC {
		p := r.URL.Path
		subscribe := strings.Contains(p, "/tasks/") && strings.HasSuffix(p, ":subscribe") &&
			(r.Method == http.MethodGet || r.Method == http.MethodPost)
		return subscribe || (r.Method == http.MethodPost && strings.HasSuffix(p, "/message:stream")), nil
	}
	body, _, err := guard.ReadBody(r)
	if err != nil {
		return false, nil
	}
	guard.SetBody(r, body)
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &env) != nil || !streamMethods[env.Method] {
		return false, nil
	}
	return true, env.ID
}

// subscribeTarget reports whether r subscribes to a task (JSON-RPC
// SubscribeToTask / tasks/resubscribe, or HTTP+JSON /tasks/{id}:subscribe,
// /v1/tasks/{id}:subscribe in A2A 0.3) and which one. The JSON-RPC body was
// buffered by guardBinding.
func subscribeTarget(r *http.Request, jsonRPC bool) (id a2a.TaskID, rpcID json.RawMessage, ok bool) {
	if !jsonRPC {
		prefix := "/tasks/"
		if protocolVersion(r) == "0.3" {
			prefix = "/v1/tasks/"
		}
		rest, found := strings.CutPrefix(r.URL.Path, prefix)
		taskID, isSub := strings.CutSuffix(rest, ":subscribe")
		if !found || !isSub || taskID == "" {
			return "", nil, false
		}
		return a2a.TaskID(taskID), nil, true
	}
	body, _, err := guard.ReadBody(r)
	if err != nil {
		return "", nil, false
	}
	guard.SetBody(r, body)
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ID string `json:"id"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &env) != nil || (env.Method != "SubscribeToTask" && env.Method != "tasks/resubscribe") || env.Params.ID == "" {
		return "", nil, false
	}
	return a2a.TaskID(env.Params.ID), env.ID, true
}

// refuseSubscription answers, before a stream opens, a subscription to a
// task that does not exist (for this caller) or has ended. It returns true
// when it answered.
//
// Over HTTP+JSON it corrects a2a-go v2.4.0's a2asrv/rest.go
// handleSubscribeToTask, whose handleStreamingRequest writes the stream's
// headers (200, text/event-stream) before the service's first event, so
// that a refusal is an error event in a 200 stream, which @a2a-js/sdk reads
// as an empty event. Canary rest-subscribe-refused. a2av0's 0.3
// handleGetOrSubscribeTask and handleCancelOrSubscribeTask do the same
// (a2acompat/a2av0/rest_server.go handleStreamingRequest), and the event
// {"error": ...} is no 0.3 StreamResponse: @a2a-js/sdk's 0.3 client reads
// it as an invalid event (InvalidAgentResponse), a2a-sdk's (Python) as
// "Unsupported StreamResponse type" (a2a/compat/v0_3/proto_utils.py
// FromProto.stream_response, after Parse with ignore_unknown_fields).
// Canary rest-0.3-subscribe-refused.
//
// agentEndpoint calls it for HTTP+JSON only. Over JSON-RPC a subscription
// to an unknown or ended task answers 200 text/event-stream whose first
// and only event is the JSON-RPC error (UnsupportedOperation -32004 for an
// ended task, as A2A §3.1.6 has it). A2A allows that or a plain JSON-RPC
// error response before any stream; the official clients decided:
//   - a2a-go v2.4.0's JSON-RPC client reads a streaming answer as SSE only
//     (a2aclient/jsonrpc.go, internal/sse ParseDataStream): the error event
//     reaches its caller typed (errors.Is UnsupportedOperation), while a
//     plain error response is no event and no error, the subscription
//     ending as if the task had said nothing (with a status other than 200,
//     an untyped "unexpected HTTP status");
//   - @a2a-js/sdk 1.3.0 reads both: the plain error typed, the error event
//     as an Error naming its code whose cause is the typed error.
//
// Only the error event reaches both. TestSubscribeEndedJSONRPC and
// TestSubscribeRefusalBeforeStreamLost (internal/api) hold a2a-go's side,
// the JS clients' matrix (tests/js_test.go) @a2a-js/sdk's.
func refuseSubscription(w http.ResponseWriter, r *http.Request, svc *taskservice.TaskService, jsonRPC bool, id a2a.TaskID, rpcID json.RawMessage) bool {
	noteCall(r.Context(), "SubscribeToTask", id)            // for the access log (guard/accesslog.go)
	err := guard.PermitAgent(r.Context(), svc.Agent().Name) // as gatedService does (guard/permissions.go)
	if err == nil {
		err = svc.Subscribable(r.Context(), id)
	}
	if err == nil {
		return false
	}
	status := 0
	if !jsonRPC && errors.Is(err, a2a.ErrUnsupportedOperation) {
		// 400 INVALID_ARGUMENT, as this refusal has always read (a2a-go
		// reads UnsupportedOperation as FAILED_PRECONDITION).
		status = http.StatusBadRequest
	}
	apierror.Write(w, apierror.ShapeOf(jsonRPC), rpcID, status, err)
	return true
}
