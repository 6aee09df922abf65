package a2abinding

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
)

// guardBinding and taskIDGuard stand between the HTTP server, a2a-go's
// transports and Temporal. This file holds a2aflow's own checks of a
// request: its limits (body size, JSON nesting), the media types it reads,
// what Temporal cannot carry (task IDs that do not fit a gRPC header, a path
// or query that is not UTF-8) and its routing (the JSON-RPC endpoint takes
// POST).
// None of them corrects a2a-go. The corrections of a2a-go v2.4.0 — requests
// it would answer otherwise than the specifications have it — are in
// a2agofixes.go, each naming the upstream behaviour it corrects and its
// upstream canary in internal/api/upstream_test.go. Every answer has the shape of its
// binding: a JSON-RPC error object, or the HTTP+JSON binding's
// google.rpc.Status body with the google.rpc.ErrorInfo a2a-go's clients read
// the A2A error from.

// maxJSONDepth bounds the nesting of request bodies. A2A requests need a few
// levels (a data part's JSON adds its own); thousands are an attack on every
// recursive decoder and encoder the value passes through on its way to
// Temporal's history. a2aflow's own limit (encoding/json's is 10,000).
const maxJSONDepth = 100

// guardBinding wraps one agent's endpoint (next): it checks each request
// before next decodes it and, over HTTP+JSON, corrects next's error answers
// (restResponseGuard).
func guardBinding(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jsonRPC := r.URL.Path == "" || r.URL.Path == "/"
		if jsonRPC && r.Method != http.MethodPost {
			// a2aflow's routing: the agent's base path is its JSON-RPC
			// endpoint, which takes POST only.
			w.Header().Set("Allow", http.MethodPost)
			apierror.Write(w, apierror.JSONRPC, nil, http.StatusMethodNotAllowed, a2a.NewError(a2a.ErrInvalidRequest,
				fmt.Sprintf("method %s is not allowed: the JSON-RPC endpoint takes POST", r.Method)))
			return
		}
		if !jsonRPC {
			inferV1(r, false, "") // versionless.go
			// Every answer of the request, its refusals here included,
			// goes through the guard.
			g := &restResponseGuard{ResponseWriter: w, emptyAsObject: r.Method == http.MethodDelete, v03: protocolVersion(r) == "0.3"}
			if checkRESTRequest(g, r) {
				next.ServeHTTP(g, r)
			}
			g.finish()
			return
		}
		method, ok := checkJSONRPCRequest(w, r)
		if !ok {
			return
		}
		// a2a-go's JSON-RPC transports answer every request in JSON,
		// with no response to correct. (a2av0's writeJSONRPCError, in
		// a2acompat/a2av0/jsonrpc_server.go, sets no Content-Type, so
		// that net/http sniffs a 0.3 error as text/plain: not
		// corrected.) But one: a result-less success (a correction,
		// emptyResultGuard).
		if method == "DeleteTaskPushNotificationConfig" && protocolVersion(r) == "1.0" {
			g := &emptyResultGuard{ResponseWriter: w}
			next.ServeHTTP(g, r)
			g.finish()
			return
		}
		if method == "tasks/pushNotificationConfig/list" && protocolVersion(r) == "0.3" {
			g := &emptyResultGuard{ResponseWriter: w, emptyList: true}
			next.ServeHTTP(g, r)
			g.finish()
			return
		}
		if method == "tasks/resubscribe" && protocolVersion(r) == "0.3" {
			// A correction (resubscribe03.go).
			next.ServeHTTP(notFinalInSubscription{w}, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkJSONRPCRequest checks a JSON-RPC request's body and envelope and, for
// A2A 1.0, its params. It answers the request itself and returns false when
// they are wrong; otherwise it leaves the (possibly normalised) body in r.
// The answer's HTTP status is 200, as JSON-RPC has it, but for a body that
// could not be read or is not JSON.
//
// It returns the request's JSON-RPC method.
func checkJSONRPCRequest(w http.ResponseWriter, r *http.Request) (string, bool) {
	fail := func(status int, id json.RawMessage, sentinel error, format string, args ...any) (string, bool) {
		apierror.Write(w, apierror.JSONRPC, id, status, a2a.NewError(sentinel, fmt.Sprintf(format, args...)))
		return "", false
	}
	// a2aflow's own: a JSON body (a2a-go reads any Content-Type).
	if ct := r.Header.Get("Content-Type"); !jsonContentType(ct) {
		what, sentinel := notJSONError(r)
		return fail(http.StatusUnsupportedMediaType, nil, sentinel, "%sContent-Type %q is not supported: send application/json", what, ct)
	}
	body, status, err := guard.ReadBody(r)
	if err != nil {
		return fail(status, nil, readBodyError(status), "%v", err)
	}
	if msg, sentinel := checkJSONText(body); sentinel != nil {
		return fail(0, nil, sentinel, "%s", msg)
	}
	// Corrections of a2a-go (a2agofixes.go).
	if msg, sentinel := checkOneJSONValue(body); sentinel != nil {
		return fail(0, nil, sentinel, "%s", msg)
	}
	env, msg, sentinel := parseJSONRPCEnvelope(body)
	if sentinel != nil {
		return fail(0, env.ID, sentinel, "%s", msg)
	}
	guard.NoteMethod(r.Context(), env.Method) // for the access log (guard/accesslog.go)
	inferV1(r, true, env.Method)              // versionless.go
	normalised, err := fillMissingParams(env)
	if err != nil {
		return fail(0, env.ID, a2a.ErrParseError, "parse error: %v", err)
	}
	if normalised != nil {
		body, env.Params = normalised, json.RawMessage("{}")
	}
	if protocolVersion(r) == "1.0" {
		// A correction (protonames.go): proto field names as JSON names.
		if params := protoFieldNames(env.Method, env.Params); params != nil {
			if rebuilt, err := withParams(env, params); err == nil {
				body, env.Params = rebuilt, params
			}
		}
	}
	// a2aflow's own: A2A's params are objects (or null, read as absent),
	// whatever the method and version (a2a-go refuses others with -32602
	// too, but inside the stream for a streaming method, and its 0.3
	// GetAuthenticatedExtendedCard ignores them).
	if params := bytes.TrimSpace(env.Params); string(params) != "null" && params[0] != '{' {
		return fail(0, env.ID, a2a.ErrInvalidParams, "invalid params: params must be a JSON object")
	}
	if err := checkV1Params(r, env); err != nil {
		apierror.Write(w, apierror.JSONRPC, env.ID, 0, err)
		return "", false
	}
	guard.SetBody(r, body)
	return env.Method, true
}

// checkRESTRequest checks an HTTP+JSON request's path, query and body. Its
// refusals have their error's status, but for a body that could not be
// read or is not JSON.
func checkRESTRequest(w http.ResponseWriter, r *http.Request) bool {
	fail := func(status int, sentinel error, format string, args ...any) bool {
		apierror.Write(w, apierror.HTTPJSON, nil, status, a2a.NewError(sentinel, fmt.Sprintf(format, args...)))
		return false
	}
	// a2aflow's own: the path and query reach Temporal (task IDs, context
	// IDs in visibility queries), whose strings are UTF-8; a2a-go passes
	// them on as they are.
	if !utf8.ValidString(r.URL.Path) {
		return fail(0, a2a.ErrInvalidParams, "the path is not valid UTF-8")
	}
	query, err := parseRESTQuery(r.URL.RawQuery) // a correction (a2agofixes.go)
	if err != nil {
		apierror.Write(w, apierror.HTTPJSON, nil, 0, err)
		return false
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
	body, status, err := guard.ReadBody(r)
	if err != nil {
		return fail(status, readBodyError(status), "%v", err)
	}
	if len(bytes.TrimSpace(body)) > 0 {
		// a2aflow's own: a JSON body, nested within bounds.
		if ct := r.Header.Get("Content-Type"); !jsonContentType(ct) {
			return fail(http.StatusUnsupportedMediaType, a2a.ErrInvalidRequest, "Content-Type %q is not supported: send application/json", ct)
		}
		// Corrections of a2a-go (a2agofixes.go) but the depth limit.
		if msg, sentinel := checkUTF8JSON(body); sentinel != nil {
			return fail(0, sentinel, "%s", msg)
		}
		if jsonDepthExceeds(body, maxJSONDepth) {
			return fail(0, a2a.ErrInvalidRequest, "the request body nests JSON deeper than %d levels", maxJSONDepth)
		}
		// A correction (protonames.go): proto field names as JSON names.
		if renamed := restProtoFieldNames(protocolVersion(r), r.Method, r.URL.Path, body); renamed != nil {
			body = renamed
		}
		if err := checkRESTSendMessage(r, body); err != nil {
			apierror.Write(w, apierror.HTTPJSON, nil, 0, err)
			return false
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/pushNotificationConfigs") && protocolVersion(r) == "0.3" {
			body = createPushConfigBody03(body)
		}
	}
	guard.SetBody(r, body)
	return true
}

// checkJSONText checks that body is UTF-8 text of bounded nesting, and
// returns the error to answer otherwise (nil when it is fine). An empty body
// is a parse error, as a2a-go answers it (its decoder's io.EOF). Whether it
// is one JSON value is checkOneJSONValue's correction.
func checkJSONText(body []byte) (msg string, sentinel error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return "parse error: the request body is empty", a2a.ErrParseError
	}
	if msg, sentinel := checkUTF8JSON(body); sentinel != nil { // a correction (a2agofixes.go)
		return "parse error: " + msg, sentinel
	}
	if jsonDepthExceeds(body, maxJSONDepth) {
		return fmt.Sprintf("invalid request: JSON nested deeper than %d levels", maxJSONDepth), a2a.ErrInvalidRequest
	}
	return "", nil
}

// notJSONError is the JSON-RPC error of a request whose Content-Type is no
// JSON type (415 either way): -32700 Parse error when its body is not JSON
// either, as JSON-RPC 2.0 has it for "invalid JSON was received by the
// server" (a client posting text/plain, a Python repr: the TCK's
// JSONRPC-SSE-002), -32600 Invalid Request when it is JSON under the wrong
// media type, or cannot be read (over the body limit).
//
// what begins the error's message: "parse error: the request body is not
// JSON; " for the first.
func notJSONError(r *http.Request) (what string, sentinel error) {
	body, _, err := guard.ReadBody(r)
	if err != nil || json.Valid(body) && utf8.Valid(body) {
		return "", a2a.ErrInvalidRequest
	}
	return "parse error: the request body is not JSON; ", a2a.ErrParseError
}

// readBodyError is the A2A error of a body that could not be read.
func readBodyError(status int) error {
	if status == http.StatusRequestEntityTooLarge {
		return a2a.ErrInvalidRequest
	}
	return a2a.ErrParseError
}

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
