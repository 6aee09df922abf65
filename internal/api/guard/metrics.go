package guard

import (
	"net/http"
	"time"

	"github.com/a2aflow/a2aflow/internal/metrics"
)

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

// CountRequest counts a request the API served, with what its request
// log learned: the agent (one of the registry's: noteEndpoint), A2A method
// and binding ("" when not an A2A call).
func CountRequest(rl *RequestLog, status int, d time.Duration) {
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
