package a2abinding

import (
	"context"
	"iter"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/metrics"
)

// notedService records on the request log the A2A method of each call
// and the task it is about, then calls the service.
type notedService struct{ svc agentService }

var _ a2asrv.RequestHandler = notedService{}

func noteCall(ctx context.Context, method string, taskID a2a.TaskID) {
	guard.NoteMethod(ctx, method)
	guard.NoteTask(ctx, taskID, "")
}

func noteResult(ctx context.Context, t *a2a.Task) {
	if t != nil {
		guard.NoteTask(ctx, t.ID, t.ContextID)
	}
}

// noteEvents notes the task of a stream's events.
func noteEvents(ctx context.Context, events iter.Seq2[a2a.Event, error]) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		noted := false
		for e, err := range events {
			if t, ok := e.(*a2a.Task); ok && !noted {
				noteResult(ctx, t)
				noted = true
			}
			if !yield(e, err) {
				return
			}
		}
	}
}

func (n notedService) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	noteCall(ctx, "GetTask", req.ID)
	t, err := n.svc.GetTask(ctx, req)
	noteResult(ctx, t)
	return t, err
}

func (n notedService) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	guard.NoteMethod(ctx, "ListTasks")
	if req.ContextID != "" {
		guard.NoteTask(ctx, "", req.ContextID)
	}
	return n.svc.ListTasks(ctx, req)
}

func (n notedService) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	noteCall(ctx, "CancelTask", req.ID)
	t, err := n.svc.CancelTask(ctx, req)
	noteResult(ctx, t)
	return t, err
}

func (n notedService) noteMessage(ctx context.Context, method string, req *a2a.SendMessageRequest) {
	guard.NoteMethod(ctx, method)
	if req != nil && req.Message != nil {
		guard.NoteTask(ctx, req.Message.TaskID, req.Message.ContextID)
	}
}

func (n notedService) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	n.noteMessage(ctx, "SendMessage", req)
	res, err := n.svc.SendMessage(ctx, req)
	if t, ok := res.(*a2a.Task); ok {
		noteResult(ctx, t)
	}
	return res, err
}

func (n notedService) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	n.noteMessage(ctx, "SendStreamingMessage", req)
	return countStream(noteEvents(ctx, n.svc.SendStreamingMessage(ctx, req)))
}

func (n notedService) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	noteCall(ctx, "SubscribeToTask", req.ID)
	return countStream(noteEvents(ctx, n.svc.SubscribeToTask(ctx, req)))
}

func (n notedService) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	noteCall(ctx, "GetTaskPushNotificationConfig", req.TaskID)
	return n.svc.GetTaskPushConfig(ctx, req)
}

func (n notedService) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	noteCall(ctx, "ListTaskPushNotificationConfigs", req.TaskID)
	return n.svc.ListTaskPushConfigs(ctx, req)
}

func (n notedService) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	var taskID a2a.TaskID
	if req != nil {
		taskID = req.TaskID
	}
	noteCall(ctx, "CreateTaskPushNotificationConfig", taskID)
	return n.svc.CreateTaskPushConfig(ctx, req)
}

func (n notedService) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	noteCall(ctx, "DeleteTaskPushNotificationConfig", req.TaskID)
	return n.svc.DeleteTaskPushConfig(ctx, req)
}

func (n notedService) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	guard.NoteMethod(ctx, "GetExtendedAgentCard")
	return n.svc.GetExtendedAgentCard(ctx, req)
}

// countStream counts events' stream among the SSE subscribers while it
// is read.
func countStream(events iter.Seq2[a2a.Event, error]) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		metrics.SSESubscriber(1)
		defer metrics.SSESubscriber(-1)
		for e, err := range events {
			if !yield(e, err) {
				return
			}
		}
	}
}
