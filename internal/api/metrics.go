package api

import (
	"iter"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/metrics"
)

// GET /metrics serves the process's Prometheus series (package metrics):
// a2aflow's and the Temporal SDK's. It is public, like /healthz: the series
// carry no task, context nor principal.

// serveMetrics is GET /metrics.
var serveMetrics = gin.WrapH(metrics.Handler())

// a2aMethods are the A2A methods a request's series may name, JSON-RPC's
// (v1.0 and v0.3) and the services'; any other is "other", so that a
// client cannot grow the series.
var a2aMethods = map[string]bool{
	"SendMessage": true, "SendStreamingMessage": true, "GetTask": true, "ListTasks": true,
	"CancelTask": true, "SubscribeToTask": true, "GetExtendedAgentCard": true,
	"CreateTaskPushNotificationConfig": true, "GetTaskPushNotificationConfig": true,
	"ListTaskPushNotificationConfigs": true, "DeleteTaskPushNotificationConfig": true,
	"message/send": true, "message/stream": true, "tasks/get": true, "tasks/cancel": true,
	"tasks/resubscribe": true, "tasks/list": true, "agent/getAuthenticatedExtendedCard": true,
	"tasks/pushNotificationConfig/set": true, "tasks/pushNotificationConfig/get": true,
	"tasks/pushNotificationConfig/list": true, "tasks/pushNotificationConfig/delete": true,
}

// observeRequest counts a request the API served, with what its request
// log learned: the agent (one of the registry's: noteEndpoint), A2A method
// and binding ("" when not an A2A call).
func (s *Server) observeRequest(rl *requestLog, status int, d time.Duration) {
	rl.mu.Lock()
	agent, method, binding := rl.agent, rl.method, rl.binding
	rl.mu.Unlock()
	if method != "" && !a2aMethods[method] {
		method = "other"
	}
	if status < 100 || status > 599 {
		status = http.StatusInternalServerError
	}
	metrics.Request(agent, method, binding, status, d)
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
