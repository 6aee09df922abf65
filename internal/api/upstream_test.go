package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// The upstream canaries: each row of upstreamCanaries is one behaviour of
// a2a-go v2.4.0 that a correction of a2aflow's exists for (a2abinding/a2agofixes.go,
// and refuseSubscription and cardProducer). The row sends its request to
// a2a-go's own handler (a2asrv's or a2av0's JSON-RPC or HTTP+JSON
// transport around a stub service, without a2aflow's guard) and asserts
// a2a-go's uncorrected answer: when a2a-go stops answering so (an upgrade
// fixed it, or changed it), the row fails and says which correction may be
// obsolete. It then sends the same request to a2aflow's server and asserts
// a2aflow's corrected answer. Rows marked removed are for corrections taken
// out because a2a-go v2.4.0 does not need them: they fail when a2a-go starts
// needing them again.

// canaryTransport is the a2a-go handler a row drives.
type canaryTransport int

const (
	jsonRPC10 canaryTransport = iota // a2asrv.NewJSONRPCHandler
	jsonRPC03                        // a2av0.NewJSONRPCHandler
	rest10                           // a2asrv.NewRESTHandler
	rest03                           // a2av0.NewRESTHandler
	card03                           // a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(card))
)

func (c canaryTransport) handler(svc a2asrv.RequestHandler) http.Handler {
	switch c {
	case jsonRPC10:
		return a2asrv.NewJSONRPCHandler(svc)
	case jsonRPC03:
		return a2av0.NewJSONRPCHandler(svc)
	case rest10:
		return a2asrv.NewRESTHandler(svc)
	case rest03:
		return a2av0.NewRESTHandler(svc)
	}
	return a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(canaryCard))
}

// version is the A2A-Version the request is sent to a2aflow with.
func (c canaryTransport) version() string {
	if c == jsonRPC03 || c == rest03 || c == card03 {
		return "0.3"
	}
	return "1.0"
}

func (c canaryTransport) jsonRPC() bool { return c == jsonRPC10 || c == jsonRPC03 }

// canaryCard declares a security scheme, as a2aflow's cards do with
// authentication on.
var canaryCard = &a2a.AgentCard{
	Name: "canary",
	SupportedInterfaces: []*a2a.AgentInterface{
		{URL: "http://canary.example/", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
	},
	SecuritySchemes: a2a.NamedSecuritySchemes{
		guard.APIKeySchemeName: a2a.APIKeySecurityScheme{Location: "header", Name: "X-API-Key"},
	},
}

// canaryRun is what one request got: the answer and, for a2a-go, the calls
// its stub service received, for a2aflow the updates its fake Temporal did.
type canaryRun struct {
	rec   *httptest.ResponseRecorder
	calls []string
}

// canaryAnswer is an expected answer. Zero fields are not checked, but
// rpcCode on a JSON-RPC transport: 0 wants a result, no error.
type canaryAnswer struct {
	status      int
	contentType string // a prefix of the Content-Type
	rpcCode     int    // the JSON-RPC error code
	reason      string // the ErrorInfo reason of a google.rpc.Status body
	message     string // a part of the error's message
	call        string // a call the stub service (a2a-go) or fake Temporal (a2aflow) received
	resultless  bool   // JSON-RPC: a success with neither result nor error
	check       func(canaryRun) error
}

type upstreamCanary struct {
	// name is the row's name; the correction's comment names it ("canary
	// <name>").
	name string
	// correction is the declaration that corrects upstream, in file (of
	// package a2abinding).
	correction, file string
	// removed: the correction was taken out, as a2a-go v2.4.0 did not need
	// it; the row checks that a2a-go still does not.
	removed bool
	// upstream is what a2a-go v2.4.0 does, and where; it completes "a2a-go
	// no longer ...".
	upstream string

	transport          canaryTransport
	method, path, body string
	// serviceErr is the error the stub service answers a2a-go with.
	serviceErr error

	a2aGo canaryAnswer // a2a-go's uncorrected answer
	ours  canaryAnswer // a2aflow's answer to the same request
	// oursIn names the test showing a2aflow's answer, where ours is not
	// checked here.
	oursIn string
}

const canaryGetTask = `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}`

const canaryGetTask03 = `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t"}}`

// canarySend is an HTTP+JSON SendMessage body with parts and extra fields
// of the message, and more after it.
func canarySend(parts, message, after string) string {
	return `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":` + parts + message + `}` + after + `}`
}

var upstreamCanaries = []upstreamCanary{
	// JSON-RPC bodies.
	{
		name: "jsonrpc-trailing-data", correction: "checkOneJSONValue", file: "a2agofixes.go",
		upstream: "serves a JSON-RPC request followed by more data, which it ignores " +
			"(a2asrv/jsonrpc.go jsonrpcHandler.ServeHTTP decodes the body with json.NewDecoder(body).Decode)",
		transport: jsonRPC10, method: "POST", path: "/", body: canaryGetTask + `}}`,
		a2aGo: canaryAnswer{status: 200, call: `GetTask "t"`},
		ours:  canaryAnswer{status: 200, rpcCode: -32700},
	},
	{
		name: "jsonrpc-0.3-trailing-data", correction: "checkOneJSONValue", file: "a2agofixes.go",
		upstream: "serves a 0.3 JSON-RPC request followed by more data, which it ignores " +
			"(a2acompat/a2av0/jsonrpc_server.go jsonrpcHandler.ServeHTTP decodes the body with json.NewDecoder(body).Decode)",
		transport: jsonRPC03, method: "POST", path: "/", body: canaryGetTask03 + `]`,
		a2aGo: canaryAnswer{status: 200, call: `GetTask "t"`},
		ours:  canaryAnswer{status: 200, rpcCode: -32700},
	},
	{
		name: "jsonrpc-invalid-utf8", correction: "checkUTF8JSON", file: "a2agofixes.go",
		upstream: "serves a JSON-RPC body that is not UTF-8, its invalid bytes read as U+FFFD " +
			"(a2asrv/jsonrpc.go jsonrpcHandler.ServeHTTP and onGetTask decode with encoding/json)",
		transport: jsonRPC10, method: "POST", path: "/", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"a` + "\xff" + `"}}`,
		a2aGo: canaryAnswer{status: 200, call: fmt.Sprintf("GetTask %q", "a\uFFFD")},
		ours:  canaryAnswer{status: 200, rpcCode: -32700, message: "UTF-8"},
	},
	{
		name: "rest-invalid-utf8", correction: "checkUTF8JSON", file: "a2agofixes.go",
		upstream: "serves an HTTP+JSON body that is not UTF-8, its invalid bytes read as U+FFFD " +
			"(a2asrv/rest.go handleSendMessage decodes with encoding/json)",
		transport: rest10, method: "POST", path: "/message:send", body: canarySend(`[{"text":"B`+"\xff"+`ok"}]`, "", ""),
		a2aGo: canaryAnswer{status: 200, call: fmt.Sprintf("SendMessage %q", "B\uFFFDok")},
		ours:  canaryAnswer{status: 400, reason: "PARSE_ERROR"},
	},

	{
		name: "jsonrpc-proto-field-names", correction: "protoFieldNames", file: "protonames.go",
		upstream: "reads A2A 1.0 JSON-RPC params by their JSON names only, so that a field written with its proto name, " +
			"as ProtoJSON parsers accept, is ignored (a2asrv/jsonrpc.go decodes params with encoding/json)",
		transport: jsonRPC10, method: "POST", path: "/",
		body:  `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"task_id":"t","url":"https://93.184.215.14/hook"}}`,
		a2aGo: canaryAnswer{status: 200, call: `CreateTaskPushConfig "" https://93.184.215.14/hook`},
		// The config reached the task's workflow (the fake is unavailable).
		ours: canaryAnswer{status: 200, rpcCode: -32000, call: wire.UpdateCreatePushConfig + " https://93.184.215.14/hook"},
	},

	{
		name: "rest-proto-field-names", correction: "restProtoFieldNames", file: "protonames.go",
		upstream: "reads a 0.3 HTTP+JSON body by its JSON names only, so that a SendMessageRequest written with the proto names " +
			"(\"request\" for \"message\", \"message_id\"), as a2a-sdk's 0.3 client writes it, has no message " +
			"(a2acompat/a2av0/rest_server.go handleSendMessage: a2apb/v0/pbjson FromProtoSendMessageRequest decodes with encoding/json)",
		transport: rest03, method: "POST", path: "/v1/message:send",
		body: `{"request":{"message_id":"m-1","role":"ROLE_USER","content":[{"text":"hi"}]},"configuration":{"blocking":true,"accepted_output_modes":["text/plain"]}}`,
		// a2a-go hands the service a message without text.
		a2aGo: canaryAnswer{status: 200, call: `SendMessage ""`},
		// The message reached Temporal (the fake is unavailable).
		ours: canaryAnswer{status: 503},
	},
	{
		name: "rest-proto-field-names-push-config", correction: "restProtoFieldNames", file: "protonames.go",
		upstream: "reads a 0.3 HTTP+JSON CreateTaskPushNotificationConfigRequest by its JSON names only, so that its config " +
			"written with the proto names (\"push_notification_config\"), as a2a-sdk's 0.3 client writes it, has no URL " +
			"(a2acompat/a2av0/rest_server.go handleCreateTaskPushConfig: a2apb/v0/pbjson decodes with encoding/json)",
		transport: rest03, method: "POST", path: "/v1/tasks/t/pushNotificationConfigs",
		body: `{"parent":"tasks/t","config_id":"c","config":{"name":"tasks/t/pushNotificationConfigs/c","push_notification_config":{"url":"https://93.184.215.14/hook"}}}`,
		// a2a-go hands the service a config without a URL.
		a2aGo: canaryAnswer{status: 200, call: `CreateTaskPushConfig "t" `},
		// The config reached Temporal (the fake is unavailable).
		ours: canaryAnswer{status: 503, reason: "SERVER_ERROR", call: wire.UpdateCreatePushConfig + " https://93.184.215.14/hook"},
	},

	// JSON-RPC envelopes.
	{
		name: "jsonrpc-batch", correction: "parseJSONRPCEnvelope", file: "a2agofixes.go",
		upstream: "answers a JSON-RPC body that is not an object (a batch) with -32602, invalid params " +
			"(a2asrv/jsonrpc.go jsonrpcHandler.ServeHTTP hands the json.UnmarshalTypeError to handleUnmarshalError)",
		transport: jsonRPC10, method: "POST", path: "/", body: `[` + canaryGetTask + `]`,
		a2aGo: canaryAnswer{status: 200, rpcCode: -32602},
		ours:  canaryAnswer{status: 200, rpcCode: -32600},
	},
	{
		name: "jsonrpc-0.3-batch", correction: "parseJSONRPCEnvelope", file: "a2agofixes.go",
		upstream: "answers a 0.3 JSON-RPC body that is not an object (a batch) with -32602, invalid params " +
			"(a2acompat/a2av0/jsonrpc_server.go jsonrpcHandler.ServeHTTP hands the json.UnmarshalTypeError to handleUnmarshalError)",
		transport: jsonRPC03, method: "POST", path: "/", body: `[` + canaryGetTask03 + `]`,
		a2aGo: canaryAnswer{status: 200, rpcCode: -32602},
		ours:  canaryAnswer{status: 200, rpcCode: -32600},
	},
	{
		name: "jsonrpc-method-not-a-string", correction: "parseJSONRPCEnvelope", file: "a2agofixes.go",
		upstream: "answers a JSON-RPC method that is not a string with -32602, invalid params " +
			"(a2asrv/jsonrpc.go jsonrpcHandler.ServeHTTP hands the json.UnmarshalTypeError to handleUnmarshalError)",
		transport: jsonRPC10, method: "POST", path: "/", body: `{"jsonrpc":"2.0","id":1,"method":5,"params":{"id":"t"}}`,
		a2aGo: canaryAnswer{status: 200, rpcCode: -32602},
		ours:  canaryAnswer{status: 200, rpcCode: -32600},
	},
	{
		name: "jsonrpc-id-out-of-range", correction: "parseJSONRPCEnvelope", file: "a2agofixes.go",
		upstream: "answers a JSON-RPC id beyond float64's range with -32602, invalid params " +
			"(a2asrv/jsonrpc.go jsonrpcHandler.ServeHTTP hands the json.UnmarshalTypeError to handleUnmarshalError)",
		transport: jsonRPC10, method: "POST", path: "/", body: `{"jsonrpc":"2.0","id":1e400,"method":"GetTask","params":{"id":"t"}}`,
		a2aGo: canaryAnswer{status: 200, rpcCode: -32602},
		ours:  canaryAnswer{status: 200, rpcCode: -32600},
	},
	{
		name: "jsonrpc-notification", correction: "parseJSONRPCEnvelope", file: "a2agofixes.go",
		upstream: "serves a JSON-RPC request without an id (a notification) and answers it with id null " +
			"(a2asrv/jsonrpc.go jsonrpcHandler.ServeHTTP; internal/jsonrpc IsValidID accepts a nil id)",
		transport: jsonRPC10, method: "POST", path: "/", body: `{"jsonrpc":"2.0","method":"GetTask","params":{"id":"t"}}`,
		a2aGo: canaryAnswer{status: 200, call: `GetTask "t"`, check: answersID("null")},
		ours:  canaryAnswer{status: 200, rpcCode: -32600},
	},
	{
		name: "jsonrpc-0.3-notification", correction: "parseJSONRPCEnvelope", file: "a2agofixes.go",
		upstream: "serves a 0.3 JSON-RPC request without an id (a notification) and answers it with id null " +
			"(a2acompat/a2av0/jsonrpc_server.go jsonrpcHandler.ServeHTTP; internal/jsonrpc IsValidID accepts a nil id)",
		transport: jsonRPC03, method: "POST", path: "/", body: `{"jsonrpc":"2.0","method":"tasks/get","params":{"id":"t"}}`,
		a2aGo: canaryAnswer{status: 200, call: `GetTask "t"`, check: answersID("null")},
		ours:  canaryAnswer{status: 200, rpcCode: -32600},
	},

	// JSON-RPC params.
	{
		name: "jsonrpc-missing-params", correction: "fillMissingParams", file: "a2agofixes.go",
		upstream: "answers a JSON-RPC request without params with -32700, parse error " +
			"(a2asrv/jsonrpc.go onGetExtendedAgentCard unmarshals the nil json.RawMessage: unexpected end of JSON input)",
		transport: jsonRPC10, method: "POST", path: "/", body: `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}`,
		a2aGo: canaryAnswer{status: 200, rpcCode: -32700},
		// The service answered: without authentication there is no
		// extended card.
		ours: canaryAnswer{status: 200, rpcCode: -32007},
	},
	{
		name: "jsonrpc-0.3-missing-params", correction: "fillMissingParams", file: "a2agofixes.go",
		upstream: "answers a 0.3 JSON-RPC request without params with -32700, parse error " +
			"(a2acompat/a2av0/jsonrpc_server.go onGetTask unmarshals the nil json.RawMessage: unexpected end of JSON input)",
		transport: jsonRPC03, method: "POST", path: "/", body: `{"jsonrpc":"2.0","id":1,"method":"tasks/get"}`,
		a2aGo: canaryAnswer{status: 200, rpcCode: -32700},
		// The service answered: the params name no task.
		ours: canaryAnswer{status: 200, rpcCode: -32602, message: "id is required"},
	},
	{
		name: "jsonrpc-null-params-pass", correction: "fillMissingParams' rewriting of null params", file: "a2agofixes.go", removed: true,
		upstream: "serves \"params\": null as an empty request " +
			"(a2asrv/jsonrpc.go onGetTask unmarshals the json.RawMessage null into a2a.GetTaskRequest, which leaves it empty)",
		transport: jsonRPC10, method: "POST", path: "/", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":null}`,
		a2aGo: canaryAnswer{status: 200, call: `GetTask ""`},
		// As for {}: the params name no task.
		ours: canaryAnswer{status: 200, rpcCode: -32602, message: "id is required"},
	},
	{
		name: "jsonrpc-0.3-null-params-pass", correction: "fillMissingParams' rewriting of null params", file: "a2agofixes.go", removed: true,
		upstream: "serves a 0.3 \"params\": null as an empty request " +
			"(a2acompat/a2av0/jsonrpc_server.go onGetTask unmarshals the json.RawMessage null, which leaves the request empty)",
		transport: jsonRPC03, method: "POST", path: "/", body: `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":null}`,
		a2aGo: canaryAnswer{status: 200, call: `GetTask ""`},
		ours:  canaryAnswer{status: 200, rpcCode: -32602, message: "id is required"},
	},
	{
		name: "jsonrpc-params-not-decodable", correction: "checkV1Params", file: "a2agofixes.go",
		upstream: "answers params that do not decode, but for a type mismatch, with -32700, parse error " +
			"(a2asrv/jsonrpc.go handleUnmarshalError; here a2a.Part's UnmarshalJSON refuses a part of no known kind)",
		transport: jsonRPC10, method: "POST", path: "/",
		body:  `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + canarySend(`[{"foo":1}]`, "", "") + `}`,
		a2aGo: canaryAnswer{status: 200, rpcCode: -32700},
		ours:  canaryAnswer{status: 200, rpcCode: -32602},
	},

	// HTTP+JSON requests.
	{
		name: "rest-malformed-query", correction: "parseRESTQuery", file: "a2agofixes.go",
		upstream: "serves an HTTP+JSON request whose query is malformed, without the malformed parameter " +
			"(a2asrv/rest.go handleGetTask reads req.URL.Query(), which drops it)",
		transport: rest10, method: "GET", path: "/tasks/t?historyLength=%zz",
		a2aGo: canaryAnswer{status: 200, call: `GetTask "t"`},
		ours:  canaryAnswer{status: 400, reason: "INVALID_REQUEST"},
	},
	{
		name: "rest-send-not-decodable", correction: "checkRESTSendMessage", file: "a2agofixes.go",
		upstream: "answers an HTTP+JSON message:send whose JSON does not decode with PARSE_ERROR " +
			"(a2asrv/rest.go handleSendMessage answers every decoding error so)",
		transport: rest10, method: "POST", path: "/message:send", body: `{"message":{"messageId":5}}`,
		a2aGo: canaryAnswer{status: 400, reason: "PARSE_ERROR"},
		ours:  canaryAnswer{status: 400, reason: "INVALID_PARAMS"},
	},
	{
		name: "rest-stream-refused", correction: "checkRESTSendMessage", file: "a2agofixes.go",
		upstream: "answers a refused HTTP+JSON message:stream with a 200 stream holding the error " +
			"(a2asrv/rest.go handleStreamingRequest writes the stream's headers before the service's first event)",
		transport: rest10, method: "POST", path: "/message:stream", body: canarySend(`[]`, "", ""),
		serviceErr: a2a.NewError(a2a.ErrInvalidParams, "message.parts must not be empty"),
		a2aGo:      canaryAnswer{status: 200, contentType: "text/event-stream", reason: "INVALID_PARAMS"},
		ours:       canaryAnswer{status: 400, contentType: "application/json", reason: "INVALID_PARAMS"},
	},
	{
		name: "rest-send-refused-pass", correction: "checkRESTSendMessage's validation of message:send", file: "a2agofixes.go", removed: true,
		upstream: "answers a refused HTTP+JSON message:send with the refusal's status " +
			"(a2asrv/rest.go handleSendMessage: writeRESTError)",
		transport: rest10, method: "POST", path: "/message:send", body: canarySend(`[]`, "", ""),
		serviceErr: a2a.NewError(a2a.ErrInvalidParams, "message.parts must not be empty"),
		a2aGo:      canaryAnswer{status: 400, contentType: "application/json", reason: "INVALID_PARAMS"},
		// The service refuses it (taskservice.ValidateSendMessageRequest).
		ours: canaryAnswer{status: 400, contentType: "application/json", reason: "INVALID_PARAMS", message: "message.parts must not be empty"},
	},
	{
		name: "rest-subscribe-refused", correction: "refuseSubscription", file: "streams.go",
		upstream: "answers a refused HTTP+JSON subscription with a 200 stream holding the error " +
			"(a2asrv/rest.go handleSubscribeToTask: handleStreamingRequest writes the stream's headers before the service's first event)",
		transport: rest10, method: "GET", path: "/tasks/t:subscribe",
		serviceErr: a2a.NewError(a2a.ErrTaskNotFound, "task not found"),
		a2aGo:      canaryAnswer{status: 200, contentType: "text/event-stream", reason: "TASK_NOT_FOUND"},
		ours:       canaryAnswer{status: 404, contentType: "application/json", reason: "TASK_NOT_FOUND"},
	},
	{
		name: "rest-0.3-subscribe-refused", correction: "refuseSubscription", file: "streams.go",
		upstream: "answers a refused 0.3 HTTP+JSON subscription with a 200 stream holding the error as {\"error\": ...}, which is no 0.3 StreamResponse " +
			"(a2acompat/a2av0/rest_server.go handleGetOrSubscribeTask: handleStreamingRequest writes the stream's headers before the service's first event)",
		transport: rest03, method: "GET", path: "/v1/tasks/t:subscribe",
		serviceErr: a2a.NewError(a2a.ErrTaskNotFound, "task not found"),
		a2aGo:      canaryAnswer{status: 200, contentType: "text/event-stream", reason: "TASK_NOT_FOUND"},
		ours:       canaryAnswer{status: 404, contentType: "application/json", reason: "TASK_NOT_FOUND", check: errorBody03(-32001, "TaskNotFoundError")},
	},
	{
		name: "rest-0.3-error-content-type", correction: "restResponseGuard", file: "a2agofixes.go",
		upstream: "answers a 0.3 HTTP+JSON error as application/problem+json, which its own 0.3 client (a2acompat/a2av0 rest_client.go, " +
			"internal/rest/rest.go FromRESTError) refuses as a bare ServerError: it reads application/json only " +
			"(a2acompat/a2av0/rest_server.go writeRESTCompatError)",
		transport: rest03, method: "GET", path: "/v1/tasks/t",
		serviceErr: a2a.NewError(a2a.ErrTaskNotFound, "task not found"),
		a2aGo:      canaryAnswer{status: 404, contentType: "application/problem+json", reason: "TASK_NOT_FOUND"},
		ours:       canaryAnswer{status: 404, contentType: "application/json", reason: "TASK_NOT_FOUND", check: errorBody03(-32001, "TaskNotFoundError")},
	},
	{
		name: "rest-0.3-push-config-alone", correction: "createPushConfigBody03", file: "a2agofixes.go",
		upstream: "refuses a 0.3 HTTP+JSON CreateTaskPushNotificationConfig whose body is the config alone (the 0.3 proto's body: \"config\") with PARSE_ERROR " +
			"(a2acompat/a2av0/rest_server.go handleCreateTaskPushConfig: a2apb/v0/pbjson FromProtoCreatePushConfigRequest wants the whole request)",
		transport: rest03, method: "POST", path: "/v1/tasks/t/pushNotificationConfigs",
		body:  `{"name":"tasks/t/pushNotificationConfigs/c","pushNotificationConfig":{"url":"https://93.184.215.14/hook"}}`,
		a2aGo: canaryAnswer{status: 400, reason: "PARSE_ERROR"},
		// The config reached Temporal (the fake is unavailable).
		ours: canaryAnswer{status: 503, reason: "SERVER_ERROR", call: wire.UpdateCreatePushConfig + " https://93.184.215.14/hook"},
	},

	{
		name: "jsonrpc-delete-push-config-no-result", correction: "emptyResultGuard", file: "a2agofixes.go",
		upstream: "answers a successful DeleteTaskPushNotificationConfig over JSON-RPC without \"result\" " +
			"(a2asrv/jsonrpc.go's response has result omitempty)",
		transport: jsonRPC10, method: "POST", path: "/",
		body:   `{"jsonrpc":"2.0","id":1,"method":"DeleteTaskPushNotificationConfig","params":{"taskId":"t","id":"c"}}`,
		a2aGo:  canaryAnswer{status: 200, resultless: true, call: `DeleteTaskPushConfig "t" "c"`},
		oursIn: "TestDeletePushConfigAnswers",
	},

	{
		name: "jsonrpc-0.3-push-config-list-null", correction: "emptyResultGuard", file: "a2agofixes.go",
		upstream: "answers a 0.3 tasks/pushNotificationConfig/list of no configs with \"result\": null " +
			"(a2acompat/a2av0/jsonrpc_server.go onListTaskPushConfigs: FromV1PushConfigs of no configs is a nil slice)",
		transport: jsonRPC03, method: "POST", path: "/",
		body: `{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/list","params":{"id":"t"}}`,
		a2aGo: canaryAnswer{status: 200, call: `ListTaskPushConfigs "t"`, check: func(run canaryRun) error {
			var body struct {
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(run.rec.Body.Bytes(), &body); err != nil {
				return err
			}
			if string(body.Result) != "null" {
				return fmt.Errorf("result %s, want null", body.Result)
			}
			return nil
		}},
		oursIn: "TestEmptyPushConfigList03",
	},

	// HTTP+JSON responses.
	{
		name: "rest-delete-push-config-empty-body", correction: "restResponseGuard", file: "a2agofixes.go",
		upstream: "answers a successful DeleteTaskPushNotificationConfig over HTTP+JSON with 200 application/json and no body " +
			"(a2asrv/rest.go handleDeleteTaskPushConfig)",
		transport: rest10, method: "DELETE", path: "/tasks/t/pushNotificationConfigs/c",
		a2aGo: canaryAnswer{status: 200, contentType: "application/json", call: `DeleteTaskPushConfig "t" "c"`,
			check: func(run canaryRun) error {
				if run.rec.Body.Len() != 0 {
					return fmt.Errorf("body %q, want none", run.rec.Body.String())
				}
				return nil
			}},
		oursIn: "TestDeletePushConfigAnswers",
	},
	{
		name: "rest-unknown-path", correction: "restResponseGuard", file: "a2agofixes.go",
		upstream: "answers an unknown HTTP+JSON path with net/http's text/plain 404 " +
			"(a2asrv/rest.go NewRESTHandler's http.ServeMux)",
		transport: rest10, method: "GET", path: "/no/such/path",
		a2aGo: canaryAnswer{status: 404, contentType: "text/plain"},
		ours:  canaryAnswer{status: 404, contentType: "application/json", reason: "METHOD_NOT_FOUND"},
	},
	{
		name: "rest-0.3-unknown-path", correction: "restResponseGuard", file: "a2agofixes.go",
		upstream: "answers an unknown 0.3 HTTP+JSON path with net/http's text/plain 404 " +
			"(a2acompat/a2av0/rest_server.go NewRESTHandler's http.ServeMux)",
		transport: rest03, method: "GET", path: "/v1/no/such/path",
		a2aGo: canaryAnswer{status: 404, contentType: "text/plain"},
		ours:  canaryAnswer{status: 404, contentType: "application/json", reason: "METHOD_NOT_FOUND"},
	},
	{
		name: "rest-method-not-allowed", correction: "restResponseGuard", file: "a2agofixes.go",
		upstream: "answers an HTTP method a path does not take with net/http's text/plain 405 " +
			"(a2asrv/rest.go NewRESTHandler's http.ServeMux)",
		transport: rest10, method: "DELETE", path: "/message:send",
		a2aGo: canaryAnswer{status: 405, contentType: "text/plain"},
		ours:  canaryAnswer{status: 405, contentType: "application/json", reason: "METHOD_NOT_FOUND"},
	},
	{
		name: "rest-redirect-passes", correction: "restResponseGuard's rewriting of redirects", file: "a2agofixes.go", removed: true,
		upstream: "redirects an unclean HTTP+JSON path (307) without an HTML body, in its application/json Content-Type " +
			"(a2asrv/rest.go NewRESTHandler sets Content-Type before its http.ServeMux, so that http.Redirect writes no body)",
		transport: rest10, method: "GET", path: "/tasks/x/../t",
		a2aGo: canaryAnswer{status: http.StatusTemporaryRedirect, contentType: "application/json", check: redirects("/tasks/t", "")},
		ours:  canaryAnswer{status: http.StatusTemporaryRedirect, check: redirects("/tasks/t", "")},
	},
	{
		name: "rest-task-not-cancelable-status", correction: "correctStatus", file: "a2agofixes.go", removed: true,
		upstream: "answers TaskNotCancelable over HTTP+JSON with 400, as A2A 1.0.1's §5.4 gives (1.0.0: 409) " +
			"(internal/rest/rest.go ToRESTError's table, written by a2asrv/rest.go writeRESTError)",
		transport: rest10, method: "POST", path: "/tasks/t:cancel",
		serviceErr: a2a.NewError(a2a.ErrTaskNotCancelable, "task t is completed"),
		a2aGo:      canaryAnswer{status: 400, reason: "TASK_NOT_CANCELABLE"},
		ours:       canaryAnswer{status: 400, reason: "TASK_NOT_CANCELABLE"},
	},
	{
		name: "rest-content-type-not-supported-status", correction: "correctStatus", file: "a2agofixes.go", removed: true,
		upstream: "answers UnsupportedContentType over HTTP+JSON with 400, as A2A 1.0.1's §5.4 gives (1.0.0: 415) " +
			"(internal/rest/rest.go ToRESTError's table, written by a2asrv/rest.go writeRESTError)",
		transport: rest10, method: "POST", path: "/message:send",
		body:       canarySend(`[{"text":"hi"}]`, "", `,"configuration":{"acceptedOutputModes":["image/png"]}`),
		serviceErr: a2a.NewError(a2a.ErrUnsupportedContentType, "the agent produces no image/png"),
		a2aGo:      canaryAnswer{status: 400, reason: "CONTENT_TYPE_NOT_SUPPORTED"},
		ours:       canaryAnswer{status: 400, reason: "CONTENT_TYPE_NOT_SUPPORTED"},
	},
	{
		name: "rest-server-error-status", correction: "correctStatus", file: "a2agofixes.go",
		upstream: "answers ServerError over HTTP+JSON with 500 INTERNAL, where a2aflow answers 503 so that clients retry " +
			"(internal/rest/rest.go ToRESTError's table, written by a2asrv/rest.go writeRESTError)",
		transport: rest10, method: "POST", path: "/message:send", body: canarySend(`[{"text":"hi"}]`, `,"taskId":"t"`, ""),
		serviceErr: a2a.NewError(a2a.ErrServerError, "Temporal is unavailable"),
		a2aGo:      canaryAnswer{status: 500, reason: "SERVER_ERROR"},
		ours:       canaryAnswer{status: 503, reason: "SERVER_ERROR"},
	},

	// Agent cards.
	{
		name: "card-0.3-security-schemes", correction: "cardProducer", file: "cards.go",
		upstream: "serves a card whose security schemes a2a-go's own 1.0 card parser cannot read " +
			`(a2acompat/a2av0/agentcard.go mapToCompatSecuritySchemes nests each 1.0 scheme under "apiKey", "http"..., ` +
			`not "apiKeySecurityScheme", "httpAuthSecurityScheme"...)`,
		transport: card03, method: "GET", path: "/",
		a2aGo: canaryAnswer{status: 200, check: func(run canaryRun) error {
			if _, err := agentcard.DefaultCardParser(run.rec.Body.Bytes()); err == nil {
				return fmt.Errorf("a2a-go's 1.0 card parser reads the card")
			}
			return nil
		}},
		oursIn: "TestAuthCards",
	},
}

// errorBody03 checks the members of a 0.3 HTTP+JSON error body beside its
// google.rpc.Status (body03): the JSON-RPC code, the type and the message.
func errorBody03(code int, typ string) func(canaryRun) error {
	return func(run canaryRun) error {
		var body struct {
			Code    int    `json:"code"`
			Type    string `json:"type"`
			Message string `json:"message"`
			Error   struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(run.rec.Body.Bytes(), &body); err != nil {
			return err
		}
		if body.Code != code || body.Type != typ || body.Message == "" || body.Message != body.Error.Message {
			return fmt.Errorf("code %d, type %q, message %q (the status's %q): want %d, %q and the status's message",
				body.Code, body.Type, body.Message, body.Error.Message, code, typ)
		}
		return nil
	}
}

// answersID checks the JSON-RPC answer's id.
func answersID(want string) func(canaryRun) error {
	return func(run canaryRun) error {
		var resp struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(run.rec.Body.Bytes(), &resp); err != nil || string(resp.ID) != want {
			return fmt.Errorf("answered with id %s (%v), want %s", resp.ID, err, want)
		}
		return nil
	}
}

// redirects checks a redirect's Location and body.
func redirects(location, body string) func(canaryRun) error {
	return func(run canaryRun) error {
		if loc := run.rec.Header().Get("Location"); loc != location || run.rec.Body.String() != body {
			return fmt.Errorf("redirected to %q with body %q, want %q and %q", loc, run.rec.Body.String(), location, body)
		}
		return nil
	}
}

// TestUpstreamA2AGo runs the upstream canaries.
func TestUpstreamA2AGo(t *testing.T) {
	for _, c := range upstreamCanaries {
		t.Run(c.name, func(t *testing.T) {
			svc := &canaryService{err: c.serviceErr}
			rec := httptest.NewRecorder()
			c.transport.handler(svc).ServeHTTP(rec, c.request(false))
			if problem := c.a2aGo.mismatch(canaryRun{rec: rec, calls: svc.calls}, c.transport.jsonRPC()); problem != "" {
				if c.removed {
					t.Errorf("a2a-go no longer %s: the correction %s, removed from %s as a2a-go v2.4.0 did not need it, may be needed again.\n"+
						"a2a-go's answer: %s\n%d %s %q", c.upstream, c.correction, c.file, problem, rec.Code, rec.Header().Get("Content-Type"), clip(rec.Body.String(), 500))
				} else {
					t.Errorf("a2a-go no longer %s: the correction %s in %s may be obsolete; remove it or adjust it.\n"+
						"a2a-go's answer: %s\n%d %s %q", c.upstream, c.correction, c.file, problem, rec.Code, rec.Header().Get("Content-Type"), clip(rec.Body.String(), 500))
				}
			}

			if c.oursIn != "" {
				return
			}
			fake := &canaryTemporal{}
			srv := New(fake, testRegistry(t), Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			rec = httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, c.request(true))
			if problem := c.ours.mismatch(canaryRun{rec: rec, calls: fake.took()}, c.transport.jsonRPC()); problem != "" {
				t.Errorf("a2aflow's answer (%s, %s): %s\n%d %s %q", c.correction, c.file, problem,
					rec.Code, rec.Header().Get("Content-Type"), clip(rec.Body.String(), 500))
			}
		})
	}
}

// request is the row's request, to a2a-go's handler or, ours, to a2aflow's
// server (with the A2A-Version of the transport).
func (c upstreamCanary) request(ours bool) *http.Request {
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	r := httptest.NewRequest(c.method, c.path, body)
	if c.body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if ours {
		r.Header.Set("A2A-Version", c.transport.version())
	}
	return r
}

// mismatch describes how run's answer differs from a, or is "".
func (a canaryAnswer) mismatch(run canaryRun, jsonRPC bool) string {
	rec := run.rec
	var problems []string
	if a.status != 0 && rec.Code != a.status {
		problems = append(problems, fmt.Sprintf("status %d, want %d", rec.Code, a.status))
	}
	ct := rec.Header().Get("Content-Type")
	if a.contentType != "" && !strings.HasPrefix(ct, a.contentType) {
		problems = append(problems, fmt.Sprintf("Content-Type %q, want %s", ct, a.contentType))
	}
	body := rec.Body.Bytes()
	if strings.HasPrefix(ct, "text/event-stream") {
		body = firstSSEData(body)
	}
	if jsonRPC {
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		switch err := json.Unmarshal(body, &resp); {
		case err != nil:
			problems = append(problems, fmt.Sprintf("not a JSON-RPC response: %v", err))
		case a.resultless && (resp.Error != nil || resp.Result != nil):
			problems = append(problems, "a result or an error, want neither")
		case a.rpcCode == 0 && !a.resultless && (resp.Error != nil || resp.Result == nil):
			problems = append(problems, "an error, want a result")
		case a.rpcCode != 0 && (resp.Error == nil || resp.Error.Code != a.rpcCode):
			problems = append(problems, fmt.Sprintf("want error %d", a.rpcCode))
		case a.message != "" && !strings.Contains(resp.Error.Message, a.message):
			problems = append(problems, fmt.Sprintf("message %q, want it to say %q", resp.Error.Message, a.message))
		}
	}
	if !jsonRPC && (a.reason != "" || a.message != "") {
		var resp struct {
			Error struct {
				Message string `json:"message"`
				Details []struct {
					Reason string `json:"reason"`
				} `json:"details"`
			} `json:"error"`
		}
		switch err := json.Unmarshal(body, &resp); {
		case err != nil || len(resp.Error.Details) == 0:
			problems = append(problems, "not a google.rpc.Status error")
		case a.reason != "" && resp.Error.Details[0].Reason != a.reason:
			problems = append(problems, fmt.Sprintf("reason %s, want %s", resp.Error.Details[0].Reason, a.reason))
		case a.message != "" && !strings.Contains(resp.Error.Message, a.message):
			problems = append(problems, fmt.Sprintf("message %q, want it to say %q", resp.Error.Message, a.message))
		}
	}
	if a.call != "" && !slices.Contains(run.calls, a.call) {
		problems = append(problems, fmt.Sprintf("calls %q, want %q", run.calls, a.call))
	}
	if a.check != nil {
		if err := a.check(run); err != nil {
			problems = append(problems, err.Error())
		}
	}
	return strings.Join(problems, "; ")
}

// firstSSEData is the data of a stream's first event.
func firstSSEData(stream []byte) []byte {
	sc := bufio.NewScanner(bytes.NewReader(stream))
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			return []byte(strings.TrimSpace(data))
		}
	}
	return nil
}

// canaryService is the stub service a2a-go's transports serve in the
// canaries: it records each call and answers with err, or a plain success.
type canaryService struct {
	err   error
	calls []string
}

var _ a2asrv.RequestHandler = (*canaryService)(nil)

func (s *canaryService) note(format string, args ...any) {
	s.calls = append(s.calls, fmt.Sprintf(format, args...))
}

func canaryTask(id a2a.TaskID) *a2a.Task {
	return &a2a.Task{ID: id, ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
}

func (s *canaryService) GetTask(_ context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if req.HistoryLength != nil {
		s.note("GetTask %q historyLength=%d", req.ID, *req.HistoryLength)
	} else {
		s.note("GetTask %q", req.ID)
	}
	if s.err != nil {
		return nil, s.err
	}
	return canaryTask(req.ID), nil
}

func (s *canaryService) ListTasks(context.Context, *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	s.note("ListTasks")
	if s.err != nil {
		return nil, s.err
	}
	return &a2a.ListTasksResponse{}, nil
}

func (s *canaryService) CancelTask(_ context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	s.note("CancelTask %q", req.ID)
	if s.err != nil {
		return nil, s.err
	}
	return canaryTask(req.ID), nil
}

func (s *canaryService) SendMessage(_ context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	s.note("SendMessage %q", firstText(req))
	if s.err != nil {
		return nil, s.err
	}
	return canaryTask("t"), nil
}

func (s *canaryService) SendStreamingMessage(_ context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	s.note("SendStreamingMessage %q", firstText(req))
	return s.events()
}

func (s *canaryService) SubscribeToTask(_ context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	s.note("SubscribeToTask %q", req.ID)
	return s.events()
}

func (s *canaryService) events() iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if s.err != nil {
			yield(nil, s.err)
			return
		}
		yield(canaryTask("t"), nil)
	}
}

func (s *canaryService) GetTaskPushConfig(_ context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	s.note("GetTaskPushConfig %q %q", req.TaskID, req.ID)
	if s.err != nil {
		return nil, s.err
	}
	return &a2a.PushConfig{TaskID: req.TaskID, ID: req.ID, URL: "https://hooks.example/"}, nil
}

func (s *canaryService) ListTaskPushConfigs(_ context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	s.note("ListTaskPushConfigs %q", req.TaskID)
	if s.err != nil {
		return nil, s.err
	}
	return &a2a.ListTaskPushConfigResponse{}, nil
}

func (s *canaryService) CreateTaskPushConfig(_ context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	s.note("CreateTaskPushConfig %q %s", req.TaskID, req.URL)
	if s.err != nil {
		return nil, s.err
	}
	return req, nil
}

func (s *canaryService) DeleteTaskPushConfig(_ context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	s.note("DeleteTaskPushConfig %q %q", req.TaskID, req.ID)
	return s.err
}

func (s *canaryService) GetExtendedAgentCard(context.Context, *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	s.note("GetExtendedAgentCard")
	if s.err != nil {
		return nil, s.err
	}
	return canaryCard, nil
}

// firstText is the text of a message's first part.
func firstText(req *a2a.SendMessageRequest) string {
	if req.Message == nil || len(req.Message.Parts) == 0 || req.Message.Parts[0] == nil {
		return ""
	}
	return req.Message.Parts[0].Text()
}

// canaryTemporal is the Temporal behind a2aflow's server in the canaries:
// it knows no task (unavailableTemporal), finds every task ended when asked
// to cancel one, and is unavailable for other writes, after noting the URL
// of each push config it is given.
type canaryTemporal struct {
	unavailableTemporal
	mu    sync.Mutex
	calls []string
}

func (f *canaryTemporal) UpdateWorkflow(_ context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch o.UpdateName {
	case wire.UpdateCancelTask:
		return nil, temporal.NewApplicationError("task "+o.WorkflowID+" is completed", wire.ErrTypeTaskNotCancelable)
	case wire.UpdateCreatePushConfig:
		if in, ok := o.Args[0].(wire.CreatePushConfigInput); ok && in.Config != nil {
			f.calls = append(f.calls, o.UpdateName+" "+in.Config.URL)
		}
	}
	return nil, serviceerror.NewUnavailable("temporal is down")
}

func (f *canaryTemporal) took() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// canaryMention is a row's name in a comment: "jsonrpc-", "rest-" or
// "card-" and more.
var canaryMention = regexp.MustCompile(`\b(?:jsonrpc|rest|card)-[a-z0-9.-]*[a-z0-9]`)

// TestUpstreamCanariesNamed keeps the corrections and the canaries in step:
// every row's correction is declared in its file of package a2abinding,
// whose comments name the row (removed corrections are named in a comment
// too), every row a comment names exists, and every test a row names for
// a2aflow's answer.
func TestUpstreamCanariesNamed(t *testing.T) {
	fset := token.NewFileSet()
	decls := map[string]map[string]bool{}    // file -> its top-level names
	mentions := map[string]map[string]bool{} // file -> the rows its comments name
	// The corrections are the bindings'; a2aflow's answers are tested
	// there or through the server, here.
	files, err := filepath.Glob("a2abinding/*.go")
	if err != nil {
		t.Fatal(err)
	}
	here, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var tests []byte // the test files of this package and of a2abinding
	for _, path := range append(files, here...) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		if strings.HasSuffix(name, "_test.go") {
			tests = append(tests, src...)
			continue
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		decls[name], mentions[name] = map[string]bool{}, map[string]bool{}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				decls[name][d.Name.Name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						decls[name][s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							decls[name][n.Name] = true
						}
					}
				}
			}
		}
		for _, cg := range f.Comments {
			for _, m := range canaryMention.FindAllString(cg.Text(), -1) {
				mentions[name][m] = true
			}
		}
	}
	rows := map[string]bool{}
	for _, c := range upstreamCanaries {
		if rows[c.name] {
			t.Errorf("two canaries are named %s", c.name)
		}
		rows[c.name] = true
		if !c.removed && !decls[c.file][c.correction] {
			t.Errorf("canary %s: %s declares no %s; is the correction gone? Remove the row or mark it removed", c.name, c.file, c.correction)
		}
		if !mentions[c.file][c.name] {
			t.Errorf("canary %s: no comment in %s names it (the comment of %s should)", c.name, c.file, c.correction)
		}
		if c.oursIn != "" && !bytes.Contains(tests, []byte("func "+c.oursIn+"(t *testing.T)")) {
			t.Errorf("canary %s: a2aflow's answer is in %s, which is no test of this package nor of a2abinding", c.name, c.oursIn)
		}
	}
	for file, ms := range mentions {
		for m := range ms {
			if !rows[m] {
				t.Errorf("a comment in %s names canary %s, which upstream_test.go does not have", file, m)
			}
		}
	}
}

// clip is s cut to n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
