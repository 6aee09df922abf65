package a2abinding

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/api/guard"
)

// TestPermissionsGateEveryMethod: the handler every binding serves
// (JSON-RPC, HTTP+JSON, gRPC; 1.0 and 0.3) refuses each method of an agent
// the caller may not use with PermissionDenied before the service sees it,
// and lets a permitted caller through.
func TestPermissionsGateEveryMethod(t *testing.T) {
	seen := 0
	handler := gatedService{RequestHandler: countingHandler{seen: &seen}, agent: "other"}
	a, err := guard.NewAuthenticator(t.Context(), guard.AuthConfig{
		APIKeys:      map[string]string{"alice": "alice-key-0123456789", "bob": "bob-key-0123456789", "carol": "carol-key-0123456789"},
		APIKeyAgents: map[string][]string{"alice": {"echo"}, "carol": {"echo", "other"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	limited := callerContext(t, a, "alice-key-0123456789")
	calls := permissionCalls(handler)
	for name, call := range calls {
		err := call(limited)
		if !errors.Is(err, a2a.ErrUnauthorized) || !strings.Contains(err.Error(), "alice may not use agent other: its API key is limited to echo") {
			t.Errorf("%s of a caller limited to echo: %v, want PermissionDenied", name, err)
		}
	}
	if seen != 0 {
		t.Errorf("the service saw %d calls of a caller without permission", seen)
	}
	for _, ctx := range []context.Context{
		t.Context(), // authentication off
		callerContext(t, a, "bob-key-0123456789"),   // every agent
		callerContext(t, a, "carol-key-0123456789"), // echo and other
	} {
		for name, call := range calls {
			if err := call(ctx); err != nil {
				t.Errorf("%s of a permitted caller: %v", name, err)
			}
		}
	}
	if seen != 3*len(calls) {
		t.Errorf("the service saw %d calls of permitted callers, want %d", seen, 3*len(calls))
	}
}

// callerContext is the context of a request that a authenticated with the
// API key key, as the guard hands it to the handlers.
func callerContext(t *testing.T, a *guard.Authenticator, key string) context.Context {
	t.Helper()
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest(http.MethodPost, "/", nil)
	c.Request.Header.Set(guard.DefaultAPIKeyHeader, key)
	guard.New(guard.Config{Auth: a}).Authenticate(c)
	if _, ok := guard.CallerOf(c.Request.Context()); !ok {
		t.Fatalf("API key %s: no caller", key)
	}
	return c.Request.Context()
}

// permissionCalls are the task methods of a2asrv.RequestHandler on h.
func permissionCalls(h a2asrv.RequestHandler) map[string]func(context.Context) error {
	first := func(seq iter.Seq2[a2a.Event, error]) error {
		var err error
		for _, e := range seq {
			err = e
			break
		}
		return err
	}
	return map[string]func(context.Context) error{
		"SendMessage": func(ctx context.Context) error { _, err := h.SendMessage(ctx, &a2a.SendMessageRequest{}); return err },
		"SendStreamingMessage": func(ctx context.Context) error {
			return first(h.SendStreamingMessage(ctx, &a2a.SendMessageRequest{}))
		},
		"GetTask":    func(ctx context.Context) error { _, err := h.GetTask(ctx, &a2a.GetTaskRequest{}); return err },
		"ListTasks":  func(ctx context.Context) error { _, err := h.ListTasks(ctx, &a2a.ListTasksRequest{}); return err },
		"CancelTask": func(ctx context.Context) error { _, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{}); return err },
		"SubscribeToTask": func(ctx context.Context) error {
			return first(h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{}))
		},
		"CreateTaskPushConfig": func(ctx context.Context) error { _, err := h.CreateTaskPushConfig(ctx, &a2a.PushConfig{}); return err },
		"GetTaskPushConfig": func(ctx context.Context) error {
			_, err := h.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{})
			return err
		},
		"ListTaskPushConfigs": func(ctx context.Context) error {
			_, err := h.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{})
			return err
		},
		"DeleteTaskPushConfig": func(ctx context.Context) error {
			return h.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{})
		},
	}
}

// countingHandler answers every task method and counts the calls.
type countingHandler struct {
	a2asrv.RequestHandler
	seen *int
}

func (h countingHandler) SendMessage(context.Context, *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	*h.seen++
	return &a2a.Task{}, nil
}

func (h countingHandler) SendStreamingMessage(context.Context, *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	*h.seen++
	return func(func(a2a.Event, error) bool) {}
}

func (h countingHandler) GetTask(context.Context, *a2a.GetTaskRequest) (*a2a.Task, error) {
	*h.seen++
	return &a2a.Task{}, nil
}

func (h countingHandler) ListTasks(context.Context, *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	*h.seen++
	return &a2a.ListTasksResponse{}, nil
}

func (h countingHandler) CancelTask(context.Context, *a2a.CancelTaskRequest) (*a2a.Task, error) {
	*h.seen++
	return &a2a.Task{}, nil
}

func (h countingHandler) SubscribeToTask(context.Context, *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	*h.seen++
	return func(func(a2a.Event, error) bool) {}
}

func (h countingHandler) CreateTaskPushConfig(context.Context, *a2a.PushConfig) (*a2a.PushConfig, error) {
	*h.seen++
	return &a2a.PushConfig{}, nil
}

func (h countingHandler) GetTaskPushConfig(context.Context, *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	*h.seen++
	return &a2a.PushConfig{}, nil
}

func (h countingHandler) ListTaskPushConfigs(context.Context, *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	*h.seen++
	return &a2a.ListTaskPushConfigResponse{}, nil
}

func (h countingHandler) DeleteTaskPushConfig(context.Context, *a2a.DeleteTaskPushConfigRequest) error {
	*h.seen++
	return nil
}
