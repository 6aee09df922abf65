package a2abinding

import (
	"context"
	"iter"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/workflows"
)

// A2A extensions (A2A 1.0 §4.6): an agent declares the extensions it
// supports in its card (workflows.Agent.Extensions); a caller activates
// the ones it wants by listing their URIs in the A2A-Extensions header
// (X-A2A-Extensions in 0.3); the answer names the activated ones in the
// same header. An agent's Required extension must be requested: a request
// without it is refused with ExtensionSupportRequired (-32008 over JSON-RPC,
// HTTP 400 with reason EXTENSION_SUPPORT_REQUIRED over HTTP+JSON).
// The gRPC binding does not exist yet; it will put the same negotiation on
// its metadata.

// negotiateExtensions matches the request's A2A-Extensions against agent's
// extensions, answers with the activated ones in the response header (both
// names, so 0.3 and 1.0 clients read it) and returns the request carrying
// the outcome for the service (gatedService, TaskService.send).
func negotiateExtensions(w http.ResponseWriter, r *http.Request, agent *workflows.Agent) *http.Request {
	n := taskservice.Negotiate(r.Header, agent)
	if len(n.Activated) > 0 {
		list := strings.Join(n.Activated, ", ")
		w.Header().Set(a2a.SvcParamExtensions, list)
		if protocolVersion(r) == "0.3" {
			w.Header().Set(taskservice.LegacyExtensionsHeader, list)
		}
	}
	return r.WithContext(taskservice.WithNegotiated(r.Context(), n))
}

// gatedService refuses every task method of a caller that may not use the
// agent (guard/permissions.go) or of a request that lacks a required extension
// before the service sees it. GetExtendedAgentCard is
// not gated: a client reads cards to learn which extensions it needs.
type gatedService struct {
	a2asrv.RequestHandler
	agent string
}

var _ a2asrv.RequestHandler = gatedService{}

// check refuses a caller that may not use the agent (guard/permissions.go), then
// a request lacking a required extension.
func (g gatedService) check(ctx context.Context) error {
	if err := guard.PermitAgent(ctx, g.agent); err != nil {
		return err
	}
	return taskservice.CheckRequiredExtensions(ctx, g.agent)
}

func gate[Req, Resp any](g gatedService, f func(context.Context, Req) (Resp, error)) func(context.Context, Req) (Resp, error) {
	return func(ctx context.Context, req Req) (Resp, error) {
		if err := g.check(ctx); err != nil {
			var zero Resp
			return zero, err
		}
		return f(ctx, req)
	}
}

func gateStream[Req any](g gatedService, f func(context.Context, Req) iter.Seq2[a2a.Event, error]) func(context.Context, Req) iter.Seq2[a2a.Event, error] {
	return func(ctx context.Context, req Req) iter.Seq2[a2a.Event, error] {
		if err := g.check(ctx); err != nil {
			return errorEvents(err)
		}
		return f(ctx, req)
	}
}

// GetTask implements a2asrv.RequestHandler.
func (g gatedService) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	return gate(g, g.RequestHandler.GetTask)(ctx, req)
}

// ListTasks implements a2asrv.RequestHandler.
func (g gatedService) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return gate(g, g.RequestHandler.ListTasks)(ctx, req)
}

// CancelTask implements a2asrv.RequestHandler.
func (g gatedService) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return gate(g, g.RequestHandler.CancelTask)(ctx, req)
}

// SendMessage implements a2asrv.RequestHandler.
func (g gatedService) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	return gate(g, g.RequestHandler.SendMessage)(ctx, req)
}

// SubscribeToTask implements a2asrv.RequestHandler.
func (g gatedService) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return gateStream(g, g.RequestHandler.SubscribeToTask)(ctx, req)
}

// SendStreamingMessage implements a2asrv.RequestHandler.
func (g gatedService) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return gateStream(g, g.RequestHandler.SendStreamingMessage)(ctx, req)
}

// GetTaskPushConfig implements a2asrv.RequestHandler.
func (g gatedService) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	return gate(g, g.RequestHandler.GetTaskPushConfig)(ctx, req)
}

// ListTaskPushConfigs implements a2asrv.RequestHandler.
func (g gatedService) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	return gate(g, g.RequestHandler.ListTaskPushConfigs)(ctx, req)
}

// CreateTaskPushConfig implements a2asrv.RequestHandler.
func (g gatedService) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	return gate(g, g.RequestHandler.CreateTaskPushConfig)(ctx, req)
}

// DeleteTaskPushConfig implements a2asrv.RequestHandler.
func (g gatedService) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	_, err := gate(g, func(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) (struct{}, error) {
		return struct{}{}, g.RequestHandler.DeleteTaskPushConfig(ctx, req)
	})(ctx, req)
	return err
}

func errorEvents(err error) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, err) }
}
