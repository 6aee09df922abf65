package a2abinding

// The corrections of a2a-go v2.4.0. Each declaration below exists because
// a2a-go's transports answer a request otherwise than the JSON, JSON-RPC or
// A2A 1.0 specifications (or the 0.3 proto) have it; its comment names the
// upstream behaviour (file and function in a2a-go v2.4.0) and the row of the
// upstream canary table in internal/api/upstream_test.go (TestUpstreamA2AGo) that drives
// a2a-go's own handler, without a2aflow, and fails when a2a-go stops behaving
// so: the correction is then obsolete, to be removed or adjusted. a2aflow's
// own request checks (limits, media types, what Temporal cannot carry) are in
// validate.go; two more corrections live next to the code they serve:
// refuseSubscription (streams.go) and cardProducer (cards.go).
//
// Removed, as a2a-go v2.4.0 does not need them (their canary rows check that
// it still does not): restResponseGuard's rewriting of redirects into error
// bodies (canary rest-redirect-passes), fillMissingParams' rewriting of
// "params": null into {} (canaries jsonrpc-null-params-pass,
// jsonrpc-0.3-null-params-pass) and checkRESTSendMessage's validation of
// message:send, which the service does (canary rest-send-refused-pass).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
)

// --- Request bodies (both bindings, both versions) ---

// checkUTF8JSON refuses a body that is not UTF-8 with ParseError (JSON-RPC
// -32700; HTTP+JSON 400 PARSE_ERROR): JSON text is UTF-8 (RFC 8259 §8.1).
//
// Corrects a2a-go v2.4.0's transports, which decode bodies with
// encoding/json: it reads invalid UTF-8 in a string as U+FFFD and the
// request is served with the altered text (a2asrv/jsonrpc.go
// jsonrpcHandler.ServeHTTP, a2asrv/rest.go handleSendMessage and the other
// decoding handlers, and their a2acompat/a2av0 counterparts). Canaries
// jsonrpc-invalid-utf8, rest-invalid-utf8.
func checkUTF8JSON(body []byte) (msg string, sentinel error) {
	if !utf8.Valid(body) {
		return "the request body is not valid UTF-8", a2a.ErrParseError
	}
	return "", nil
}

// checkOneJSONValue refuses a JSON-RPC body that is not one JSON value with
// -32700 (parse error): a syntax error, as a2a-go answers it too, or data
// after the value.
//
// Corrects a2a-go v2.4.0's JSON-RPC transports, which decode the request
// with json.NewDecoder(body).Decode: it reads the first JSON value and
// ignores whatever follows, and the request is served (a2asrv/jsonrpc.go
// and a2acompat/a2av0/jsonrpc_server.go jsonrpcHandler.ServeHTTP). Canaries
// jsonrpc-trailing-data, jsonrpc-0.3-trailing-data. (parseJSONRPCEnvelope's
// json.Unmarshal refuses trailing data too; this check comes first, so that
// any body that is not JSON, an object or not, is a parse error.)
func checkOneJSONValue(body []byte) (msg string, sentinel error) {
	if json.Valid(body) {
		return "", nil
	}
	var v any
	return fmt.Sprintf("parse error: %v", json.Unmarshal(body, &v)), a2a.ErrParseError
}

// --- The JSON-RPC binding ---

// jsonrpcEnvelope is a JSON-RPC request's envelope as the guard reads it.
type jsonrpcEnvelope struct {
	ID      json.RawMessage // the id as sent, to answer with
	Version string
	Method  string
	Params  json.RawMessage // absent: nil
}

// parseJSONRPCEnvelope reads body's JSON-RPC envelope (body is one JSON
// value, checkOneJSONValue) and refuses an invalid request with -32600:
// a body that is not an object (A2A has no batches), an id that is neither
// a string nor a number a float64 holds (validJSONRPCID), a jsonrpc other
// than "2.0", a method that is not a non-empty string. On error, env.ID is
// the id to answer with (nil when unknown or invalid).
//
// Corrects two behaviours of a2a-go v2.4.0's JSON-RPC transports
// (a2asrv/jsonrpc.go and a2acompat/a2av0/jsonrpc_server.go
// jsonrpcHandler.ServeHTTP), which otherwise answer as this does:
//   - ServeHTTP hands the envelope's decoding error to handleUnmarshalError,
//     which answers a json.UnmarshalTypeError with -32602 (invalid params):
//     a batch or any body that is not an object, a method or jsonrpc that
//     is not a string, an id out of float64's range. Canaries jsonrpc-batch,
//     jsonrpc-0.3-batch, jsonrpc-method-not-a-string, jsonrpc-id-out-of-range.
//   - internal/jsonrpc IsValidID accepts a nil id: a request without one
//     (or with null), a JSON-RPC notification, is served and answered with
//     id null. Canaries jsonrpc-notification, jsonrpc-0.3-notification.
func parseJSONRPCEnvelope(body []byte) (env jsonrpcEnvelope, msg string, sentinel error) {
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return env, "invalid request: a JSON-RPC request must be a JSON object (A2A has no batches)", a2a.ErrInvalidRequest
	}
	var raw struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return env, fmt.Sprintf("parse error: %v", err), a2a.ErrParseError
	}
	if !validJSONRPCID(raw.ID) {
		return env, "invalid request: id must be a string or a number (A2A has no JSON-RPC notifications)", a2a.ErrInvalidRequest
	}
	env.ID, env.Params = raw.ID, raw.Params
	if json.Unmarshal(raw.JSONRPC, &env.Version) != nil || env.Version != "2.0" {
		return env, `invalid request: jsonrpc must be "2.0"`, a2a.ErrInvalidRequest
	}
	if json.Unmarshal(raw.Method, &env.Method) != nil || env.Method == "" {
		return env, "invalid request: method must be a non-empty string", a2a.ErrInvalidRequest
	}
	return env, "", nil
}

// validJSONRPCID accepts the ids JSON-RPC allows A2A requests: a string or a
// number that fits a float64 (a2a-go decodes it as one). A missing or null id
// would make the request a notification, which A2A does not have. Part of
// parseJSONRPCEnvelope's correction.
func validJSONRPCID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case '"':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		_, err := strconv.ParseFloat(string(raw), 64)
		return err == nil
	}
	return false
}

// fillMissingParams returns the body of a request that omits params (as
// JSON-RPC lets it) with an empty object as its params, and nil when params
// are present.
//
// Corrects a2a-go v2.4.0's JSON-RPC transports, whose method handlers
// (a2asrv/jsonrpc.go onGetTask, onGetExtendedAgentCard..., and
// a2acompat/a2av0/jsonrpc_server.go's) unmarshal absent params, a nil
// json.RawMessage: "unexpected end of JSON input", which handleUnmarshalError
// answers with -32700 (parse error). Canaries jsonrpc-missing-params,
// jsonrpc-0.3-missing-params. "params": null needs no rewriting: a2a-go
// decodes it as an empty request (canaries jsonrpc-null-params-pass,
// jsonrpc-0.3-null-params-pass).
func fillMissingParams(env jsonrpcEnvelope) ([]byte, error) {
	if len(bytes.TrimSpace(env.Params)) != 0 {
		return nil, nil
	}
	return withParams(env, json.RawMessage("{}"))
}

// withParams returns the JSON-RPC request of env with params.
func withParams(env jsonrpcEnvelope, params json.RawMessage) ([]byte, error) {
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}{env.Version, env.ID, env.Method, params})
}

// v1ParamsTypes gives the params type of each A2A 1.0 JSON-RPC method, for
// checkV1Params.
var v1ParamsTypes = map[string]func() any{
	"SendMessage":                      func() any { return new(a2a.SendMessageRequest) },
	"SendStreamingMessage":             func() any { return new(a2a.SendMessageRequest) },
	"GetTask":                          func() any { return new(a2a.GetTaskRequest) },
	"ListTasks":                        func() any { return new(a2a.ListTasksRequest) },
	"CancelTask":                       func() any { return new(a2a.CancelTaskRequest) },
	"SubscribeToTask":                  func() any { return new(a2a.SubscribeToTaskRequest) },
	"CreateTaskPushNotificationConfig": func() any { return new(a2a.PushConfig) },
	"GetTaskPushNotificationConfig":    func() any { return new(a2a.GetTaskPushConfigRequest) },
	"ListTaskPushNotificationConfigs":  func() any { return new(a2a.ListTaskPushConfigRequest) },
	"DeleteTaskPushNotificationConfig": func() any { return new(a2a.DeleteTaskPushConfigRequest) },
	"GetExtendedAgentCard":             func() any { return new(a2a.GetExtendedAgentCardRequest) },
}

// checkV1Params decodes the params of an A2A 1.0 JSON-RPC method before
// a2a-go does and refuses those that do not decode with -32602 (invalid
// params): the JSON is valid, the params are what is wrong.
//
// Corrects a2a-go v2.4.0's a2asrv/jsonrpc.go handleUnmarshalError, which
// answers -32700 (parse error) for any decoding error but a type mismatch
// (json.UnmarshalTypeError): a part of no known kind, refused by
// a2a.Part's UnmarshalJSON, is a parse error there. Canary
// jsonrpc-params-not-decodable. (The 0.3 methods are not corrected: a2av0's
// handleUnmarshalError does the same.)
func checkV1Params(r *http.Request, env jsonrpcEnvelope) error {
	newParams, ok := v1ParamsTypes[env.Method]
	if !ok || protocolVersion(r) != "1.0" {
		return nil
	}
	if err := json.Unmarshal(env.Params, newParams()); err != nil {
		return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("invalid params: %v", err))
	}
	return nil
}

// --- The HTTP+JSON binding: requests ---

// parseRESTQuery parses an HTTP+JSON request's query string and refuses a
// malformed one (a bad escape, a semicolon) with InvalidRequest (400).
//
// Corrects a2a-go v2.4.0's HTTP+JSON transports, which read the query with
// req.URL.Query() (a2asrv/rest.go handleGetTask, handleListTasks;
// a2acompat/a2av0/rest_server.go's): it drops malformed pairs without a
// word, so that historyLength=%zz reads the whole history. Canary
// rest-malformed-query.
func parseRESTQuery(rawQuery string) (url.Values, error) {
	query, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, a2a.NewError(a2a.ErrInvalidRequest, fmt.Sprintf("the query string is malformed: %v", err))
	}
	return query, nil
}

// checkRESTSendMessage checks the body of an A2A 1.0 HTTP+JSON
// message:send or message:stream (body is JSON; a body that is not is left
// to a2a-go, which answers PARSE_ERROR itself). It refuses with
// InvalidParams (400):
//   - a body that does not decode as a SendMessageRequest. Corrects
//     a2a-go v2.4.0's a2asrv/rest.go handleSendMessage and
//     handleStreamMessage, which answer PARSE_ERROR for every decoding
//     error, of valid JSON too (a field of the wrong type, a part of no
//     known kind). Canary rest-send-not-decodable.
//   - on message:stream, a message the service would refuse
//     (taskservice.ValidateSendMessageRequest). Corrects a2a-go v2.4.0's a2asrv/rest.go
//     handleStreamingRequest, which writes the stream's headers (200,
//     text/event-stream) before the service's first event, so that a
//     refusal is an error event in a 200 stream (which @a2a-js/sdk reads
//     as an empty event). Canary rest-stream-refused. (On message:send,
//     a2a-go answers the service's refusal with its status: canary
//     rest-send-refused-pass.)
func checkRESTSendMessage(r *http.Request, body []byte) error {
	stream := strings.HasSuffix(r.URL.Path, "/message:stream")
	send := stream || strings.HasSuffix(r.URL.Path, "/message:send")
	if !send || r.Method != http.MethodPost || protocolVersion(r) != "1.0" || !json.Valid(body) {
		return nil
	}
	var req a2a.SendMessageRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("invalid params: %v", err))
	}
	if stream {
		return taskservice.ValidateSendMessageRequest(&req)
	}
	return nil
}

// createPushConfigBody03 returns the body of a 0.3 HTTP+JSON
// CreateTaskPushNotificationConfig as a2a-go's 0.3 server reads it: the
// whole CreateTaskPushNotificationConfigRequest ({"parent", "configId",
// "config"}). A body that is the TaskPushNotificationConfig alone
// ({"name", "pushNotificationConfig"}), as the 0.3 proto's HTTP rule has it
// (body: "config") and @a2a-js/sdk sends it, is wrapped as its config; any
// other body is left as it is.
//
// Corrects a2a-go v2.4.0's a2acompat/a2av0/rest_server.go
// handleCreateTaskPushConfig, whose a2apb/v0/pbjson
// FromProtoCreatePushConfigRequest refuses a body without "config" with
// PARSE_ERROR (400). Canary rest-0.3-push-config-alone.
func createPushConfigBody03(body []byte) []byte {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return body
	}
	if _, ok := fields["config"]; ok {
		return body
	}
	if _, ok := fields["pushNotificationConfig"]; !ok {
		return body
	}
	wrapped, err := json.Marshal(map[string]json.RawMessage{"config": body})
	if err != nil {
		return body
	}
	return wrapped
}

// --- The HTTP+JSON binding: responses ---

// maxErrorBodyBytes bounds the error body a transport writes that the guard
// holds back to correct its status.
const maxErrorBodyBytes = 64 << 10

// restResponseGuard passes an HTTP+JSON response through, except errors
// (status 400 and over):
//   - an error whose body is not JSON becomes a google.rpc.Status body with
//     the same status. Corrects a2a-go v2.4.0's a2asrv/rest.go
//     NewRESTHandler (and a2acompat/a2av0/rest_server.go's), whose
//     http.ServeMux answers an unknown path (404) or method (405) with
//     net/http's text/plain http.Error. Canaries rest-unknown-path,
//     rest-0.3-unknown-path, rest-method-not-allowed.
//   - an error whose HTTP status a2a-go writes otherwise gets its own
//     (correctStatus).
//   - a2aflow's own, no correction: a retryable error (apierror.Retryable: no
//     worker answered in time, too many requests in flight) answers 503
//     with Retry-After, as HTTP has it.
//   - an A2A 0.3 error (v03) is application/json, where a2a-go v2.4.0's
//     a2acompat/a2av0/rest_server.go writeRESTCompatError says
//     application/problem+json, which a2a-go's own 0.3 client refuses
//     (internal/rest/rest.go FromRESTError reads application/json only) and
//     which its google.rpc.Status body is not (RFC 9457). Canary
//     rest-0.3-error-content-type. Its body gets the members the other
//     official 0.3 clients type an error by (body03, rest03errors.go:
//     a2aflow's own).
//
// Streams (text/event-stream), successes and redirects go through
// untouched. a2a-go's redirects of unclean paths (its http.ServeMux's 307)
// keep the application/json Content-Type a2asrv/rest.go NewRESTHandler sets
// before the mux, so that http.Redirect writes no HTML body: the guard,
// which rewrote redirects that are not JSON into error bodies, no longer
// does (canary rest-redirect-passes).
//
// And a success without a body (emptyAsObject, for DELETE) gets the empty
// JSON object: a2a-go v2.4.0's a2asrv/rest.go handleDeleteTaskPushConfig
// answers DeleteTaskPushNotificationConfig with 200, Content-Type
// application/json and no body at all, which is not JSON; the method's
// answer is google.protobuf.Empty, whose JSON is {} (what a2a-sdk's REST
// client, which decodes every answer, reads). Canary
// rest-delete-push-config-empty-body.
type restResponseGuard struct {
	http.ResponseWriter
	wroteHeader   bool
	status        int
	hold          int // 0 pass through, holdPlain or holdJSON
	held          bytes.Buffer
	emptyAsObject bool // a success with no body answers {}
	wrote         int  // bytes passed through
	// v03 marks an A2A 0.3 request: its error bodies get the members the
	// official 0.3 clients type an error by (body03, rest03errors.go), as
	// application/json. a2aflow's own, no correction.
	v03 bool
}

const (
	holdPlain = 1 + iota
	holdJSON
)

func (g *restResponseGuard) WriteHeader(status int) {
	if g.wroteHeader {
		return
	}
	g.wroteHeader, g.status = true, status
	ct := g.Header().Get("Content-Type")
	isJSON := strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "application/problem+json")
	switch {
	case status >= 400 && !isJSON:
		g.hold = holdPlain
	case status >= 400:
		g.hold = holdJSON
	default:
		g.ResponseWriter.WriteHeader(status)
	}
}

func (g *restResponseGuard) Write(p []byte) (int, error) {
	if !g.wroteHeader {
		g.WriteHeader(http.StatusOK)
	}
	if g.hold == 0 {
		g.wrote += len(p)
		return g.ResponseWriter.Write(p)
	}
	if g.held.Len()+len(p) > maxErrorBodyBytes {
		// Too large to be an error body worth correcting: let it through
		// as it is.
		held := g.hold
		g.hold = 0
		g.ResponseWriter.WriteHeader(g.status)
		if held == holdJSON {
			if _, err := g.ResponseWriter.Write(g.held.Bytes()); err != nil {
				return 0, err
			}
		}
		return g.ResponseWriter.Write(p)
	}
	g.held.Write(p)
	return len(p), nil
}

// Flush lets a2a-go's SSE writer flush events through the guard.
func (g *restResponseGuard) Flush() {
	if g.hold != 0 {
		return
	}
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (g *restResponseGuard) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// finish writes a held response.
func (g *restResponseGuard) finish() {
	if g.hold == 0 && g.emptyAsObject && g.wrote == 0 && (!g.wroteHeader || g.status == http.StatusOK) {
		if !g.wroteHeader {
			g.ResponseWriter.Header().Set("Content-Type", "application/json")
		}
		_, _ = g.ResponseWriter.Write([]byte("{}"))
		return
	}
	switch g.hold {
	case holdPlain:
		msg := strings.TrimSpace(g.held.String())
		sentinel := a2a.ErrInvalidRequest
		switch g.status {
		case http.StatusNotFound:
			sentinel, msg = a2a.ErrMethodNotFound, "no A2A HTTP+JSON method at this path: "+msg
		case http.StatusMethodNotAllowed:
			sentinel, msg = a2a.ErrMethodNotFound, "the HTTP method is not allowed at this path (allowed: "+g.Header().Get("Allow")+")"
		}
		if !g.v03 {
			apierror.Write(g.ResponseWriter, apierror.HTTPJSON, nil, g.status, a2a.NewError(sentinel, msg))
			return
		}
		status, doc := apierror.Body(apierror.HTTPJSON, nil, g.status, a2a.NewError(sentinel, msg))
		body, err := json.Marshal(doc)
		if err != nil {
			apierror.Write(g.ResponseWriter, apierror.HTTPJSON, nil, g.status, a2a.NewError(sentinel, msg))
			return
		}
		g.ResponseWriter.Header().Set("Content-Type", "application/json")
		g.ResponseWriter.Header().Del("Content-Length")
		g.ResponseWriter.WriteHeader(status)
		_, _ = g.ResponseWriter.Write(body03(body))
	case holdJSON:
		g.ResponseWriter.Header().Del("Content-Length")
		body := g.held.Bytes()
		if status, corrected := correctStatus(body); corrected != nil {
			g.status, body = status, corrected
		}
		if after, ok := retryableAfter(body); ok {
			// a2aflow's own: a retryable error (no worker answered in
			// time, too many requests in flight) is 503 with Retry-After,
			// as HTTP has it.
			g.status = http.StatusServiceUnavailable
			g.ResponseWriter.Header().Set("Retry-After", after)
			if fixed := withStatus(body, g.status, apierror.GRPCCodeName(g.status)); fixed != nil {
				body = fixed
			}
		}
		if g.v03 {
			body = body03(body)
			g.ResponseWriter.Header().Set("Content-Type", "application/json")
		}
		g.ResponseWriter.WriteHeader(g.status)
		_, _ = g.ResponseWriter.Write(body)
	}
}

// correctStatus returns the status and body of a google.rpc.Status error
// body whose A2A error a2a-go answers with another HTTP status than ours
// (errorCodes' fixesA2AGo), or a nil body when nothing needs correcting.
//
// Corrects a2a-go v2.4.0's internal/rest/rest.go ToRESTError (its error to
// status table), which a2asrv/rest.go writeRESTError writes:
//   - ServerError 500 INTERNAL, where a2aflow answers 503 UNAVAILABLE so that
//     clients retry: a2aflow's choice (apierror.FromTemporal uses ServerError only for
//     Temporal being unavailable or too slow), not the specification's.
//     Canary rest-server-error-status.
//
// Removed: TaskNotCancelable 400 and UnsupportedContentType 400, which
// were corrected to A2A 1.0.0's 409 and 415; A2A 1.0.1's §5.4 gives 400
// for both, as a2a-go does. Canaries rest-task-not-cancelable-status and
// rest-content-type-not-supported-status check that a2a-go still does.
func correctStatus(body []byte) (int, []byte) {
	var doc map[string]any
	if json.Unmarshal(body, &doc) != nil {
		return 0, nil
	}
	inner, _ := doc["error"].(map[string]any)
	details, _ := inner["details"].([]any)
	for _, d := range details {
		info, _ := d.(map[string]any)
		if info["@type"] != errordetails.ErrorInfoType || info["domain"] != a2a.ProtocolDomain {
			continue
		}
		reason, _ := info["reason"].(string)
		fix, ok := apierror.CodeOfInfo(reason, a2a.ProtocolDomain)
		if !ok || !fix.FixesA2AGo {
			return 0, nil
		}
		inner["code"], inner["status"] = fix.Status, fix.GRPC
		out, err := json.Marshal(doc)
		if err != nil {
			return 0, nil
		}
		return fix.Status, append(out, '\n')
	}
	return 0, nil
}

// retryableAfter reports whether a google.rpc.Status error body carries the
// details of apierror.Retryable, and the Retry-After value they give. a2aflow's
// own (restResponseGuard), no correction.
func retryableAfter(body []byte) (string, bool) {
	var doc struct {
		Error struct {
			Details []map[string]any `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return "", false
	}
	for _, d := range doc.Error.Details {
		if d["retryable"] == true {
			after := "5"
			if n, ok := d["retryAfterSeconds"].(float64); ok && n > 0 {
				after = fmt.Sprint(int(n))
			}
			return after, true
		}
	}
	return "", false
}

// withStatus rewrites the code and status of a google.rpc.Status error body.
func withStatus(body []byte, code int, status string) []byte {
	var doc map[string]any
	if json.Unmarshal(body, &doc) != nil {
		return nil
	}
	inner, ok := doc["error"].(map[string]any)
	if !ok {
		return nil
	}
	inner["code"], inner["status"] = code, status
	out, err := json.Marshal(doc)
	if err != nil {
		return nil
	}
	return append(out, '\n')
}

// emptyResultGuard holds a JSON-RPC answer and gives a success that has
// neither "result" nor "error" the member "result": null, as JSON-RPC 2.0
// (§5: "result ... is REQUIRED on success") has it and as a2aflow's 0.3
// JSON-RPC answers the same method.
//
// Corrects a2a-go v2.4.0's a2asrv/jsonrpc.go, whose response's result is
// omitempty: DeleteTaskPushNotificationConfig, whose result is nil, answers
// {"jsonrpc":"2.0","id":ID}, which a2a-sdk's JSON-RPC client refuses ("it
// has neither 'result' nor 'error'"). guardBinding uses it for that method
// alone. Canary jsonrpc-delete-push-config-no-result.
//
// With emptyList it corrects a2a-go's 0.3 binding instead (a2acompat/a2av0
// onListTaskPushConfigs, whose nil slice marshals as null): a 0.3
// tasks/pushNotificationConfig/list of no configs answers "result": []
// rather than null, which A2A 0.3's result (an array) is not and
// a2a-java 0.3.3.Final refuses ("Invalid JSON-RPC success response").
// Canary jsonrpc-0.3-push-config-list-null.
type emptyResultGuard struct {
	http.ResponseWriter
	emptyList bool
	status    int
	held      bytes.Buffer
}

func (g *emptyResultGuard) WriteHeader(status int) {
	if g.status == 0 {
		g.status = status
	}
}

func (g *emptyResultGuard) Write(p []byte) (int, error) {
	if g.status == 0 {
		g.status = http.StatusOK
	}
	return g.held.Write(p)
}

// Unwrap gives http.ResponseController the underlying writer.
func (g *emptyResultGuard) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// finish writes the held answer, with "result": null when it lacks both.
func (g *emptyResultGuard) finish() {
	body := g.held.Bytes()
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) == nil && doc["jsonrpc"] != nil {
		result, hasResult := doc["result"]
		_, hasError := doc["error"]
		if g.emptyList && hasResult && string(bytes.TrimSpace(result)) == "null" {
			if fixed, err := json.Marshal(mergeRaw(doc, "result", "[]")); err == nil {
				body = fixed
				g.ResponseWriter.Header().Del("Content-Length")
			}
		} else if !g.emptyList && !hasResult && !hasError {
			doc["result"] = json.RawMessage("null")
			if fixed, err := json.Marshal(doc); err == nil {
				body = fixed
				g.ResponseWriter.Header().Del("Content-Length")
			}
		}
	}
	if g.status != 0 {
		g.ResponseWriter.WriteHeader(g.status)
	}
	_, _ = g.ResponseWriter.Write(body)
}

// mergeRaw sets doc[key] to the JSON value raw and returns doc.
func mergeRaw(doc map[string]json.RawMessage, key, raw string) map[string]json.RawMessage {
	doc[key] = json.RawMessage(raw)
	return doc
}
