package taskservice

import (
	"context"
	"fmt"
	"iter"
	"math"

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
		if s.messageOnly(req) {
			// A message-only agent's answer is its reply, one event: the
			// stream is SendMessage's answer (the task, when it did not
			// complete at once, as it was then).
			answer, err := s.SendMessage(ctx, req)
			if err != nil {
				yield(nil, err)
				return
			}
			yield(answer, nil)
			return
		}
		res, err := s.Send(ctx, req, true, nil)
		if err != nil {
			yield(nil, err)
			return
		}
		if res.Decision != nil {
			yield(DecisionMessage(req.Message, res.Decision), nil)
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
		out, err := s.queryEvents(qctx, res.TaskID, wire.EventsInput{After: after, WithTask: true, HistoryLength: query})
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
		taskSeq := res.EventSeq
		if res.Status == nil {
			taskSeq = snap.EventSeq
		}
		if !yield(stampTask(ctx, task, taskSeq), nil) {
			return
		}
		// The stream ends at the first interruption after the task has
		// worked on the message, or at the end.
		worked := false
		stop := func(e wire.Event) bool { return Settles(true)(e, &worked) }
		for _, e := range out.Events {
			if !yield(stampEvent(ctx, e.A2A(), e.Seq), nil) || stop(e) {
				return
			}
		}
		if task.Status.State.Terminal() {
			return
		}
		s.Follow(ctx, res.TaskID, out.Last, liveOf(ctx, task.ContextID), stop, yield)
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
		if !yield(stampTask(ctx, snap.Task, snap.EventSeq), nil) {
			return
		}
		s.Follow(ctx, req.ID, snap.EventSeq, liveOf(ctx, snap.Task.ContextID), func(e wire.Event) bool {
			return e.Status != nil && e.Status.Status.State.Terminal()
		}, yield)
	}
}

// Subscribable checks a subscription to task id before its stream opens:
// nil when the task exists for the caller and has not ended, else
// TaskNotFound, or UnsupportedOperation for a task that has ended (there
// is nothing to subscribe to).
func (s *TaskService) Subscribable(ctx context.Context, id a2a.TaskID) error {
	if err := CheckTaskID(string(id)); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.queryTimeout)
	defer cancel()
	metrics.StreamQuery(metrics.StreamQueryStart)
	snap, err := s.events(ctx, id, wire.EventsInput{WithTask: true, HistoryLength: new(int)})
	if err != nil {
		return err
	}
	if snap.Task.Status.State.Terminal() {
		return a2a.NewError(a2a.ErrUnsupportedOperation, fmt.Sprintf("task %s is %s; there is nothing to subscribe to", id, snap.Task.Status.State))
	}
	return nil
}

// maxQueryBackoff is the longest wait, in seconds, between the failed
// queries of a stream.
const maxQueryBackoff = 5

// Interrupted reports whether a task in state s waits for its user: an
// answer (input-required) or a credential (auth-required).
func Interrupted(s a2a.TaskState) bool {
	return s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

func ptr[T any](v T) *T { return &v }
