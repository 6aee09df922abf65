package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// guardBinding and taskIDGuard stand between the HTTP server, a2a-go's
// transports and Temporal. They answer, with the code the A2A and JSON-RPC
// specifications give, the requests that a2a-go or Temporal would answer
// wrongly or not in JSON: -32700 for valid JSON whose params do not fit (a
// part of no known kind), -32603 for a task ID that Temporal's gRPC client
// cannot put in a header, net/http's text/plain 404 and 405 for an unknown
// path or method, 500 when Temporal is unavailable, 200 for a streaming
// message that is refused. Each answer has the shape of its binding: a
// JSON-RPC error object, or the HTTP+JSON binding's google.rpc.Status body
// with the google.rpc.ErrorInfo a2a-go's clients read the A2A error from.

// maxJSONDepth bounds the nesting of request bodies. A2A requests need a few
// levels (a data part's JSON adds its own); thousands are an attack on every
// recursive decoder and encoder the value passes through on its way to
// Temporal's history.
const maxJSONDepth = 100

// maxErrorBodyBytes bounds the error body a transport writes that the guard
// holds back to correct its status.
const maxErrorBodyBytes = 64 << 10

// v1ParamsTypes gives the params type of each A2A 1.0 JSON-RPC method, to
// decode the params before a2a-go does: a2a-go answers -32700 (parse error)
// for any decoding failure other than a type mismatch, though the JSON is
// valid and the params are what is wrong (-32602).
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

// guardBinding wraps one agent's endpoint (next): it checks each request
// before next decodes it and gives next's plain-text answers the shape of
// the binding.
func guardBinding(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jsonRPC := r.URL.Path == "" || r.URL.Path == "/"
		if jsonRPC && r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeA2AError(w, bindingJSONRPC, nil, http.StatusMethodNotAllowed, a2a.NewError(a2a.ErrInvalidRequest,
				fmt.Sprintf("method %s is not allowed: the JSON-RPC endpoint takes POST", r.Method)))
			return
		}
		var ok bool
		if jsonRPC {
			ok = checkJSONRPCRequest(w, r)
		} else {
			ok = checkRESTRequest(w, r)
		}
		if !ok {
			return
		}
		if jsonRPC {
			// a2a-go's JSON-RPC transport answers every request in JSON.
			next.ServeHTTP(w, r)
			return
		}
		g := &restResponseGuard{ResponseWriter: w}
		next.ServeHTTP(g, r)
		g.finish()
	})
}

// checkJSONRPCRequest checks a JSON-RPC request's body and envelope and, for
// A2A 1.0, its params. It answers the request itself and returns false when
// they are wrong; otherwise it leaves the (possibly normalised) body in r.
// The answer's HTTP status is 200, as JSON-RPC has it, but for a body that
// could not be read or is not JSON.
func checkJSONRPCRequest(w http.ResponseWriter, r *http.Request) bool {
	fail := func(status int, id json.RawMessage, sentinel error, format string, args ...any) bool {
		writeA2AError(w, bindingJSONRPC, id, status, a2a.NewError(sentinel, fmt.Sprintf(format, args...)))
		return false
	}
	if ct := r.Header.Get("Content-Type"); !jsonContentType(ct) {
		return fail(http.StatusUnsupportedMediaType, nil, a2a.ErrInvalidRequest, "Content-Type %q is not supported: send application/json", ct)
	}
	body, status, err := readBody(r)
	if err != nil {
		return fail(status, nil, readBodyError(status), "%v", err)
	}
	if sentinel, msg := checkJSONText(body); sentinel != nil {
		return fail(0, nil, sentinel, "%s", msg)
	}
	if t := bytes.TrimSpace(body); t[0] != '{' {
		return fail(0, nil, a2a.ErrInvalidRequest, "invalid request: a JSON-RPC request must be a JSON object (A2A has no batches)")
	}
	var env struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fail(0, nil, a2a.ErrParseError, "parse error: %v", err)
	}
	if !validJSONRPCID(env.ID) {
		return fail(0, nil, a2a.ErrInvalidRequest, "invalid request: id must be a string or a number (A2A has no JSON-RPC notifications)")
	}
	var version, method string
	if json.Unmarshal(env.JSONRPC, &version) != nil || version != "2.0" {
		return fail(0, env.ID, a2a.ErrInvalidRequest, `invalid request: jsonrpc must be "2.0"`)
	}
	if json.Unmarshal(env.Method, &method) != nil || method == "" {
		return fail(0, env.ID, a2a.ErrInvalidRequest, "invalid request: method must be a non-empty string")
	}
	noteMethod(r.Context(), method) // for the access log (accesslog.go)
	params := bytes.TrimSpace(env.Params)
	switch {
	case len(params) == 0 || string(params) == "null":
		// JSON-RPC lets a request omit params; a2a-go would fail to decode
		// nothing as a parse error, so an empty object stands in.
		params = []byte("{}")
		normalised, err := json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}{version, env.ID, method, params})
		if err != nil {
			return fail(0, env.ID, a2a.ErrParseError, "parse error: %v", err)
		}
		body = normalised
	case params[0] != '{':
		return fail(0, env.ID, a2a.ErrInvalidParams, "invalid params: params must be a JSON object")
	}
	if newParams, ok := v1ParamsTypes[method]; ok && protocolVersion(r) == "1.0" {
		if err := json.Unmarshal(params, newParams()); err != nil {
			return fail(0, env.ID, a2a.ErrInvalidParams, "invalid params: %v", err)
		}
	}
	setBody(r, body)
	return true
}

// checkRESTRequest checks an HTTP+JSON request's path, query and body. Its
// refusals have their error's status, but for a body that could not be
// read or is not JSON.
func checkRESTRequest(w http.ResponseWriter, r *http.Request) bool {
	fail := func(status int, sentinel error, format string, args ...any) bool {
		writeA2AError(w, bindingREST, nil, status, a2a.NewError(sentinel, fmt.Sprintf(format, args...)))
		return false
	}
	if !utf8.ValidString(r.URL.Path) {
		return fail(0, a2a.ErrInvalidParams, "the path is not valid UTF-8")
	}
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return fail(0, a2a.ErrInvalidRequest, "the query string is malformed: %v", err)
	}
	for key, values := range query {
		for _, v := range values {
			if !utf8.ValidString(key) || !utf8.ValidString(v) {
				return fail(0, a2a.ErrInvalidParams, "query parameter %q is not valid UTF-8", strings.ToValidUTF8(key, "\uFFFD"))
			}
		}
	}
	if r.Body == nil || r.Body == http.NoBody || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	body, status, err := readBody(r)
	if err != nil {
		return fail(status, readBodyError(status), "%v", err)
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if ct := r.Header.Get("Content-Type"); !jsonContentType(ct) {
			return fail(http.StatusUnsupportedMediaType, a2a.ErrInvalidRequest, "Content-Type %q is not supported: send application/json", ct)
		}
		if !utf8.Valid(body) {
			return fail(0, a2a.ErrParseError, "the request body is not valid UTF-8")
		}
		if jsonDepthExceeds(body, maxJSONDepth) {
			return fail(0, a2a.ErrInvalidRequest, "the request body nests JSON deeper than %d levels", maxJSONDepth)
		}
		sendPath := strings.HasSuffix(r.URL.Path, "/message:send") || strings.HasSuffix(r.URL.Path, "/message:stream")
		if sendPath && r.Method == http.MethodPost && protocolVersion(r) == "1.0" && json.Valid(body) {
			var req a2a.SendMessageRequest
			if err := json.Unmarshal(body, &req); err != nil {
				return fail(0, a2a.ErrInvalidParams, "invalid params: %v", err)
			}
			// a2a-go starts a stream (200) before the service sees the
			// request, so a malformed streaming message is refused here,
			// with its own status.
			if err := validateSendMessageRequest(&req); err != nil {
				return fail(0, a2a.ErrInvalidParams, "%s", errorMessage(err))
			}
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/pushNotificationConfigs") && protocolVersion(r) == "0.3" {
			body = createPushConfigBody03(body)
		}
	}
	setBody(r, body)
	return true
}

// createPushConfigBody03 returns the body of a 0.3 HTTP+JSON
// CreateTaskPushNotificationConfig as a2a-go's 0.3 server reads it: the
// whole CreateTaskPushNotificationConfigRequest ({"parent", "configId",
// "config"}). A body that is the TaskPushNotificationConfig alone
// ({"name", "pushNotificationConfig"}), as the 0.3 proto's HTTP rule has it
// (body: "config") and @a2a-js/sdk sends it, is wrapped as its config; any
// other body is left as it is.
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

// checkJSONText checks that body is one JSON value of UTF-8 text and bounded
// nesting, and returns the error to answer otherwise (nil when it is fine).
func checkJSONText(body []byte) (sentinel error, msg string) {
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return a2a.ErrParseError, "parse error: the request body is empty"
	case !utf8.Valid(body):
		return a2a.ErrParseError, "parse error: the request body is not valid UTF-8"
	case jsonDepthExceeds(body, maxJSONDepth):
		return a2a.ErrInvalidRequest, fmt.Sprintf("invalid request: JSON nested deeper than %d levels", maxJSONDepth)
	case !json.Valid(body):
		var v any
		return a2a.ErrParseError, fmt.Sprintf("parse error: %v", json.Unmarshal(body, &v))
	}
	return nil, ""
}

// readBodyError is the A2A error of a body that could not be read.
func readBodyError(status int) error {
	if status == http.StatusRequestEntityTooLarge {
		return a2a.ErrInvalidRequest
	}
	return a2a.ErrParseError
}

// maxTaskIDBytes bounds task IDs: Temporal's default limit on workflow IDs
// (a2aflow's own are 36-byte UUIDs).
const maxTaskIDBytes = 1000

// checkTaskID refuses an ID that cannot name a task: too long, or not
// printable ASCII. Temporal's gRPC client carries the workflow ID in a
// request header and fails on such bytes with an error that would reach the
// client as an internal error.
func checkTaskID(id string) error {
	if len(id) > maxTaskIDBytes {
		return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("task id is longer than %d bytes", maxTaskIDBytes))
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] > 0x7e {
			return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("task id %q is not printable ASCII", truncate(id, 64)))
		}
	}
	return nil
}

// taskIDGuard checks the workflow IDs of the Temporal calls that take one
// from a request (a task ID in params, a path or a message's taskId) before
// they reach Temporal. It wraps the client every TaskService uses, so every
// method, present and future, is covered in one place.
type taskIDGuard struct{ client.Client }

// QueryWorkflow queries the workflow of a well-formed task ID.
func (g taskIDGuard) QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error) {
	if err := checkTaskID(workflowID); err != nil {
		return nil, err
	}
	return g.Client.QueryWorkflow(ctx, workflowID, runID, queryType, args...)
}

// UpdateWorkflow updates the workflow of a well-formed task ID.
func (g taskIDGuard) UpdateWorkflow(ctx context.Context, opts client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	if err := checkTaskID(opts.WorkflowID); err != nil {
		return nil, err
	}
	return g.Client.UpdateWorkflow(ctx, opts)
}

// readBody reads r's body within the MaxBodyBytes limit that limitBody set,
// and returns the HTTP status to answer when it cannot.
func readBody(r *http.Request) ([]byte, int, error) {
	if r.Body == nil {
		return nil, 0, nil
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r.Body); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the request body is over the limit of %d bytes", tooLarge.Limit)
		}
		return nil, http.StatusBadRequest, fmt.Errorf("cannot read the request body: %w", err)
	}
	return buf.Bytes(), 0, nil
}

func setBody(r *http.Request, body []byte) {
	r.Body = http.NoBody
	if len(body) > 0 {
		r.Body = readCloser{bytes.NewReader(body)}
	}
	r.ContentLength = int64(len(body))
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// jsonContentType accepts the media types a JSON body may come with: none,
// application/json and any +json type, and application/x-www-form-urlencoded,
// which is what `curl -d` sends unless told otherwise (the README's examples
// rely on it; the body is read as JSON all the same).
func jsonContentType(ct string) bool {
	if strings.TrimSpace(ct) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "application/x-www-form-urlencoded"
}

// validJSONRPCID accepts the ids JSON-RPC allows A2A requests: a string or a
// number that fits a float64 (a2a-go decodes it as one). A missing or null id
// would make the request a notification, which A2A does not have.
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

// jsonDepthExceeds reports whether the JSON text b nests objects and arrays
// deeper than max. It only counts brackets outside strings, so it is cheap
// and safe on any input, valid JSON or not.
func jsonDepthExceeds(b []byte, max int) bool {
	depth := 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// writeTooLarge answers a request whose body is over the limit with 413, in
// the shape of the binding its path suggests.
func writeTooLarge(w http.ResponseWriter, r *http.Request, size, limit int64) {
	msg := fmt.Sprintf("the request body is over the limit of %d bytes", limit)
	if size > 0 {
		msg = fmt.Sprintf("the request body of %d bytes is over the limit of %d", size, limit)
	}
	writeA2AError(w, bindingOf(r.Method == http.MethodPost && jsonRPCPath(r.URL.Path)), nil, http.StatusRequestEntityTooLarge,
		a2a.NewError(a2a.ErrInvalidRequest, msg))
}

// jsonRPCPath reports whether path is a JSON-RPC endpoint: the default
// agent's "/" or an agent's "/agents/{name}".
func jsonRPCPath(path string) bool {
	if path == "" || path == "/" {
		return true
	}
	name, ok := strings.CutPrefix(path, "/agents/")
	return ok && name != "" && !strings.Contains(strings.TrimSuffix(name, "/"), "/")
}

// restResponseGuard passes an HTTP+JSON response through, except:
//   - a body that is not JSON (net/http's text/plain 404 and 405 for an
//     unknown path or method, a redirect's HTML) becomes a google.rpc.Status
//     body with the same status;
//   - an error whose HTTP status a2a-go writes otherwise (errorCodes'
//     fixesA2AGo) gets its own.
//
// Streams (text/event-stream) and successes go through untouched.
type restResponseGuard struct {
	http.ResponseWriter
	wroteHeader bool
	status      int
	hold        int // 0 pass through, holdPlain or holdJSON
	held        bytes.Buffer
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
	case status >= 300 && !isJSON:
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
		if loc := g.Header().Get("Location"); loc != "" {
			msg = "moved to " + loc
		}
		writeA2AError(g.ResponseWriter, bindingREST, nil, g.status, a2a.NewError(sentinel, msg))
	case holdJSON:
		g.ResponseWriter.Header().Del("Content-Length")
		body := g.held.Bytes()
		if status, corrected := correctStatus(body); corrected != nil {
			g.status, body = status, corrected
		}
		if after, ok := retryableAfter(body); ok {
			// A retryable error (no worker answered in time, too many
			// requests in flight): 503 with Retry-After, as HTTP has it.
			g.status = http.StatusServiceUnavailable
			g.ResponseWriter.Header().Set("Retry-After", after)
			if fixed := withStatus(body, g.status, grpcStatusOf(g.status)); fixed != nil {
				body = fixed
			}
		}
		g.ResponseWriter.WriteHeader(g.status)
		_, _ = g.ResponseWriter.Write(body)
	}
}

// correctStatus returns the status and body of a google.rpc.Status error
// body whose A2A error a2a-go answers with another HTTP status than ours
// (errorCodes' fixesA2AGo), or a nil body when nothing needs correcting.
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
		fix, ok := a2aGoFix(reason)
		if !ok {
			return 0, nil
		}
		inner["code"], inner["status"] = fix.status, fix.grpc
		out, err := json.Marshal(doc)
		if err != nil {
			return 0, nil
		}
		return fix.status, append(out, '\n')
	}
	return 0, nil
}

// a2aGoFix returns the code of the A2A error of reason when a2a-go answers
// it with another HTTP status than ours.
func a2aGoFix(reason string) (errorCode, bool) {
	for _, c := range errorCodes {
		if c.fixesA2AGo && c.reason == "" && a2a.ErrorReason(c.sentinel) == reason {
			return c, true
		}
	}
	return errorCode{}, false
}

// retryableAfter reports whether a google.rpc.Status error body carries the
// details of retryableError, and the Retry-After value they give.
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
