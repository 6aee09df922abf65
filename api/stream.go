package api

import (
	"context"
	"iter"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/workflows"
)

// SendStreamingMessage implements A2A SendStreamingMessage: the message is
// delivered like SendMessage (returning at once), then the stream carries the
// task and every later status and artifact event until the task is
// interrupted again or terminal.
func (s *TaskService) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		snap, err := s.send(ctx, req, true)
		if err != nil {
			yield(nil, err)
			return
		}
		if !yield(snap.Task, nil) {
			return
		}
		// The snapshot was taken when the message arrived, before the skill
		// took it; the stream ends at the first interruption after the task
		// has worked on it, or at the end.
		worked := false
		s.follow(ctx, snap.Task.ID, snap.EventSeq, func(e workflows.Event) bool {
			if e.Status == nil {
				return false
			}
			state := e.Status.Status.State
			if state == a2a.TaskStateWorking {
				worked = true
			}
			return state.Terminal() || (worked && interrupted(state))
		}, yield)
	}
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
		snap, err := s.events(ctx, req.ID, workflows.EventsInput{WithTask: true})
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
		s.follow(ctx, req.ID, snap.EventSeq, func(e workflows.Event) bool {
			return e.Status != nil && e.Status.Status.State.Terminal()
		}, yield)
	}
}

// follow yields the task's events after seq until stop accepts one, the
// caller stops reading or ctx ends. It queries the workflow when the
// in-process notifier hints a new event, and otherwise every poll interval.
func (s *TaskService) follow(ctx context.Context, taskID a2a.TaskID, seq int64, stop func(workflows.Event) bool, yield func(a2a.Event, error) bool) {
	var hints <-chan struct{}
	if s.notifier != nil {
		sub := s.notifier.Subscribe(string(taskID))
		defer sub.Close()
		hints = sub.C
	}
	poll := time.NewTimer(0) // query at once: events may have come before the subscription
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hints:
		case <-poll.C:
		}
		out, err := s.queryEvents(ctx, taskID, workflows.EventsInput{After: seq})
		if err != nil {
			if ctx.Err() == nil {
				yield(nil, err)
			}
			return
		}
		if out.Task != nil && len(out.Events) == 0 {
			// Too far behind the retained events: resynchronise with the task.
			if !yield(out.Task, nil) || out.Task.Status.State.Terminal() {
				return
			}
		}
		for _, e := range out.Events {
			if !yield(e.A2A(), nil) || stop(e) {
				return
			}
		}
		seq = out.Last
		poll.Reset(s.pollInterval)
	}
}

func interrupted(s a2a.TaskState) bool {
	return s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}
