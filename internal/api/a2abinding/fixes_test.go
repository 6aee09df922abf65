package a2abinding

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// pushStub is a service whose push configs a2a-go's transports serve in
// the tests below: deleting one succeeds, and a task has none.
type pushStub struct{ a2asrv.RequestHandler }

func (pushStub) DeleteTaskPushConfig(context.Context, *a2a.DeleteTaskPushConfigRequest) error {
	return nil
}

func (pushStub) ListTaskPushConfigs(context.Context, *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	return &a2a.ListTaskPushConfigResponse{}, nil
}

// TestDeletePushConfigAnswers drives a2a-go's 1.0 transports around the stub
// service (pushStub) through guardBinding, as a2aflow serves them: a successful
// DeleteTaskPushNotificationConfig answers JSON-RPC's "result": null and
// HTTP+JSON's {} (canaries jsonrpc-delete-push-config-no-result and
// rest-delete-push-config-empty-body show a2a-go's answers without them).
// Found by a2a-sdk, the official Python client (tests/python_test.go), which
// refuses both uncorrected answers.
func TestDeletePushConfigAnswers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		handler  http.Handler
		req      *http.Request
		wantBody string
	}{
		{"JSON-RPC", a2asrv.NewJSONRPCHandler(pushStub{}),
			httptest.NewRequest("POST", "/", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"DeleteTaskPushNotificationConfig","params":{"taskId":"t","id":"c"}}`)),
			`{"id":7,"jsonrpc":"2.0","result":null}`},
		{"HTTP+JSON", a2asrv.NewRESTHandler(pushStub{}),
			httptest.NewRequest("DELETE", "/tasks/t/pushNotificationConfigs/c", nil), `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Header.Set("A2A-Version", "1.0")
			if tc.req.Method == "POST" {
				tc.req.Header.Set("Content-Type", "application/json")
			}
			rec := httptest.NewRecorder()
			guardBinding(tc.handler).ServeHTTP(rec, tc.req)
			if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
				t.Errorf("answer %d %q, want 200 application/json", rec.Code, rec.Header().Get("Content-Type"))
			}
			if got := strings.TrimSpace(rec.Body.String()); got != tc.wantBody {
				t.Errorf("body %s, want %s", got, tc.wantBody)
			}
		})
	}
}

// TestEmptyPushConfigList03 drives a2a-go's 0.3 JSON-RPC transport around
// the stub service (pushStub: no push configs) through guardBinding, as a2aflow serves
// it: tasks/pushNotificationConfig/list answers "result": [] (canary
// jsonrpc-0.3-push-config-list-null shows a2a-go's null). Found by
// a2a-java 0.3.3.Final (tests/java_test.go), which refuses the null.
func TestEmptyPushConfigList03(t *testing.T) {
	req := httptest.NewRequest("POST", "/", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tasks/pushNotificationConfig/list","params":{"id":"t"}}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	guardBinding(a2av0.NewJSONRPCHandler(pushStub{})).ServeHTTP(rec, req)
	if got, want := strings.TrimSpace(rec.Body.String()), `{"id":7,"jsonrpc":"2.0","result":[]}`; rec.Code != http.StatusOK || got != want {
		t.Errorf("answer %d %s, want 200 %s", rec.Code, got, want)
	}
}
