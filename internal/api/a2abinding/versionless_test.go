package a2abinding

import (
	"net/http/httptest"
	"testing"
)

// TestInferV1 checks which unversioned requests are served as 1.0: those
// that only 1.0 has. Every other request keeps the version it names, or
// 0.3 when it names none.
func TestInferV1(t *testing.T) {
	for _, c := range []struct {
		name, method, target, header, rpcMethod string
		jsonRPC                                 bool
		want                                    string
	}{
		{name: "1.0 JSON-RPC method", method: "POST", target: "/", rpcMethod: "SendMessage", jsonRPC: true, want: "1.0"},
		{name: "1.0 JSON-RPC push list", method: "POST", target: "/", rpcMethod: "ListTaskPushNotificationConfigs", jsonRPC: true, want: "1.0"},
		{name: "0.3 JSON-RPC method", method: "POST", target: "/", rpcMethod: "message/send", jsonRPC: true, want: "0.3"},
		{name: "unknown JSON-RPC method", method: "POST", target: "/", rpcMethod: "Nope", jsonRPC: true, want: "0.3"},
		{name: "draft JSON-RPC method", method: "POST", target: "/", rpcMethod: "ListTaskPushNotificationConfig", jsonRPC: true, want: "0.3"},
		{name: "1.0 JSON-RPC method, 0.3 named", method: "POST", target: "/", header: "0.3", rpcMethod: "SendMessage", jsonRPC: true, want: "0.3"},
		{name: "0.3 JSON-RPC method, 1.0 named", method: "POST", target: "/", header: "1.0", rpcMethod: "message/send", jsonRPC: true, want: "1.0"},
		{name: "1.0 JSON-RPC method, version in the query", method: "POST", target: "/?A2A-Version=0.3", rpcMethod: "SendMessage", jsonRPC: true, want: "0.3"},
		{name: "1.0 send", method: "POST", target: "/message:send", want: "1.0"},
		{name: "1.0 stream", method: "POST", target: "/message:stream", want: "1.0"},
		{name: "1.0 get task", method: "GET", target: "/tasks/t1?historyLength=2", want: "1.0"},
		{name: "1.0 list tasks", method: "GET", target: "/tasks?pageSize=1", want: "1.0"},
		{name: "1.0 subscribe", method: "POST", target: "/tasks/t1:subscribe", want: "1.0"},
		{name: "1.0 push configs", method: "GET", target: "/tasks/t1/pushNotificationConfigs", want: "1.0"},
		{name: "1.0 extended card", method: "GET", target: "/extendedAgentCard", want: "1.0"},
		{name: "0.3 send", method: "POST", target: "/v1/message:send", want: "0.3"},
		{name: "0.3 get task", method: "GET", target: "/v1/tasks/t1", want: "0.3"},
		{name: "unknown path", method: "GET", target: "/no/such/path", want: "0.3"},
		{name: "1.0 send, 0.3 named", method: "POST", target: "/message:send", header: "0.3", want: "0.3"},
		{name: "1.0 send, 9.9 named", method: "POST", target: "/message:send", header: "9.9", want: "9.9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, c.target, nil)
			if c.header != "" {
				r.Header.Set("A2A-Version", c.header)
			}
			inferV1(r, c.jsonRPC, c.rpcMethod)
			if got := protocolVersion(r); got != c.want {
				t.Errorf("served as %q, want %q", got, c.want)
			}
		})
	}
}
