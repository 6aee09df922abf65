package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/metrics"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// SendStreamingMessage implements A2A SendStreamingMessage: the message is
// delivered like SendMessage (returning at once), then the stream carries the
// task and every later status and artifact event until the task is
// interrupted again or terminal.
func (s *TaskService) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		res, err := s.send(ctx, req, true, nil)
		if err != nil {
			yield(nil, err)
			return
		}
		if res.Decision != nil {
			yield(decisionMessage(req.Message, res.Decision), nil)
			return
		}
		var historyLength *int
		if req.Config != nil {
			historyLength = req.Config.HistoryLength
		}
		historyLength = s.historyLimit(historyLength)
		// The stream starts from the task as it was when the message was
		// recorded, then carries every event since: the task is read now and
		// wound back to that moment (TaskUpdateResult.Status...), and the
		// events after it follow. A retried message (its task read as it is)
		// starts from the task now.
		after, query := res.EventSeq, historyLength
		if res.Status == nil {
			after = math.MaxInt64
		} else if historyLength != nil {
			query = ptr(*historyLength + rewindSlack)
		}
		qctx, cancel := context.WithTimeout(ctx, s.queryTimeout)
		metrics.StreamQuery(metrics.StreamQueryStart)
		out, err := s.queryEvents(qctx, res.taskID, wire.EventsInput{After: after, WithTask: true, HistoryLength: query})
		cancel()
		if err != nil {
			yield(nil, err)
			return
		}
		snap, err := s.withHistory(ctx, out.Task, query)
		if err != nil {
			yield(nil, err)
			return
		}
		task := rewind(snap, res.TaskUpdateResult, historyLength)
		if !yield(task, nil) {
			return
		}
		// The stream ends at the first interruption after the task has
		// worked on the message, or at the end.
		worked := false
		stop := func(e wire.Event) bool { return settles(true)(e, &worked) }
		for _, e := range out.Events {
			if !yield(e.A2A(), nil) || stop(e) {
				return
			}
		}
		if task.Status.State.Terminal() {
			return
		}
		s.follow(ctx, res.taskID, out.Last, task.ContextID, stop, yield)
	}
}

// rewindSlack is how many messages more than asked a stream reads, to wind
// the task back over the messages added since its message was recorded.
const rewindSlack = 8

// rewind returns snap's task as it was when an update answered with res:
// its status then, without the messages and artifacts added since (an
// artifact grown by chunks since keeps its chunks), with the last
// historyLength messages of that moment.
func rewind(snap *wire.TaskSnapshot, res wire.TaskUpdateResult, historyLength *int) *a2a.Task {
	task := *snap.Task
	if res.Status == nil {
		task.History = wire.LastMessages(task.History, historyLength)
		return &task
	}
	task.Status = *res.Status
	if extra := snap.HistoryLength - res.Messages; extra > 0 && snap.HistoryLength > 0 {
		task.History = task.History[:max(0, len(task.History)-extra)]
	}
	task.History = wire.LastMessages(task.History, historyLength)
	if res.Artifacts < len(task.Artifacts) {
		task.Artifacts = task.Artifacts[:res.Artifacts]
	}
	return &task
}

// SubscribeToTask implements A2A SubscribeToTask: the current task, then
// every later event until the task is terminal. Any API replica can serve it,
// and a client that reconnects after a restart misses nothing: the events
// are numbered and kept in the workflow.
func (s *TaskService) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if req.ID == "" {
			yield(nil, a2a.NewError(a2a.ErrInvalidParams, "id is required"))
			return
		}
		qctx, cancel := context.WithTimeout(ctx, s.queryTimeout)
		metrics.StreamQuery(metrics.StreamQueryStart)
		snap, err := s.events(qctx, req.ID, wire.EventsInput{WithTask: true, HistoryLength: s.historyLimit(nil)})
		cancel()
		if err != nil {
			yield(nil, err)
			return
		}
		if snap.Task.Status.State.Terminal() {
			yield(nil, a2a.NewError(a2a.ErrUnsupportedOperation, "task "+string(req.ID)+" is "+string(snap.Task.Status.State)+"; there is nothing to subscribe to"))
			return
		}
		if !yield(snap.Task, nil) {
			return
		}
		s.follow(ctx, req.ID, snap.EventSeq, snap.Task.ContextID, func(e wire.Event) bool {
			return e.Status != nil && e.Status.Status.State.Terminal()
		}, yield)
	}
}

// maxQueryBackoff is the longest wait, in seconds, between the failed
// queries of a stream.
const maxQueryBackoff = 5

func interrupted(s a2a.TaskState) bool {
	return s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
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
	body, _, err := readBody(r)
	if err != nil {
		return "", nil, false
	}
	setBody(r, body)
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
// Canary rest-0.3-subscribe-refused. (agentEndpoint calls it
// for HTTP+JSON only: over JSON-RPC the error stays inside the stream, as
// a2a-go's client reads it.)
func (s *TaskService) refuseSubscription(w http.ResponseWriter, r *http.Request, jsonRPC bool, id a2a.TaskID, rpcID json.RawMessage) bool {
	noteCall(r.Context(), "SubscribeToTask", id)  // for the access log (accesslog.go)
	err := permitAgent(r.Context(), s.agent.Name) // as gatedService does (permissions.go)
	if err == nil {
		err = checkTaskID(string(id))
	}
	if err == nil {
		var snap *wire.TaskSnapshot
		ctx, cancel := context.WithTimeout(r.Context(), s.queryTimeout)
		metrics.StreamQuery(metrics.StreamQueryStart)
		snap, err = s.events(ctx, id, wire.EventsInput{WithTask: true, HistoryLength: new(int)})
		cancel()
		if err == nil && snap.Task.Status.State.Terminal() {
			err = a2a.NewError(a2a.ErrUnsupportedOperation, fmt.Sprintf("task %s is %s; there is nothing to subscribe to", id, snap.Task.Status.State))
		}
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
	writeA2AError(w, bindingOf(jsonRPC), rpcID, status, err)
	return true
}

func ptr[T any](v T) *T { return &v }
