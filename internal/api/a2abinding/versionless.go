package a2abinding

import (
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/api/guard"
)

// A request without the A2A-Version header (or query parameter) is served
// as A2A 0.3, as the specification asks of a server (protocolVersion). But
// a request that only 1.0 has, a JSON-RPC method of 1.0's names or an
// HTTP+JSON path of 1.0's routes, has no 0.3 meaning: served as 0.3 it
// could only fail (MethodNotFound, 404). The official A2A Java SDK's 1.0
// client (a2a-java 1.0.0.Alpha3) sends no A2A-Version header at all, so
// such a request is served as the 1.0 it is (tests/java_test.go). A request
// that names a version is served in that version, whatever it looks like.

// v1JSONRPCMethods are A2A 1.0's JSON-RPC method names. 0.3's
// ("message/send", "tasks/get", ...) all have a slash; the two sets do not
// meet.
var v1JSONRPCMethods = map[string]bool{
	"SendMessage": true, "SendStreamingMessage": true, "GetTask": true, "ListTasks": true,
	"CancelTask": true, "SubscribeToTask": true, "GetExtendedAgentCard": true,
	"CreateTaskPushNotificationConfig": true, "GetTaskPushNotificationConfig": true,
	"ListTaskPushNotificationConfigs": true, "DeleteTaskPushNotificationConfig": true,
}

// unversioned reports whether r names no A2A version.
func unversioned(r *http.Request) bool {
	return strings.TrimSpace(r.Header.Get(a2a.SvcParamVersion)) == "" && r.URL.Query().Get(a2a.SvcParamVersion) == ""
}

// v1RESTPath reports whether path (the endpoint's, without /agents/{name})
// is one of A2A 1.0's HTTP+JSON routes. 0.3's are under /v1.
func v1RESTPath(path string) bool {
	switch {
	case path == "/message:send", path == "/message:stream", path == "/tasks", path == "/extendedAgentCard":
		return true
	case strings.HasPrefix(path, "/tasks/"):
		return true
	}
	return false
}

// inferV1 marks an unversioned request that only 1.0 has as 1.0 (its
// A2A-Version header), for everything after: jsonRPCMethod is the
// JSON-RPC method, "" for HTTP+JSON.
func inferV1(r *http.Request, jsonRPC bool, jsonRPCMethod string) {
	if !unversioned(r) {
		return
	}
	if jsonRPC && !v1JSONRPCMethods[jsonRPCMethod] || !jsonRPC && !v1RESTPath(r.URL.Path) {
		return
	}
	r.Header.Set(a2a.SvcParamVersion, "1.0")
	guard.NoteVersion(r.Context(), "1.0")
}
