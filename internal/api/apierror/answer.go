package apierror

// Writing an error as an answer, in the shape of the binding it answers
// on: JSON-RPC, HTTP+JSON's google.rpc.Status, or {"error": "..."}.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"
	"github.com/gin-gonic/gin"
)

// Shape is the shape of an error answer, which its binding gives.
type Shape int

const (
	// JSONRPC is a JSON-RPC 2.0 response holding an error object,
	// the google.rpc.ErrorInfo naming the A2A error in its data.
	JSONRPC Shape = iota
	// JSONRPCCodeOnly is a JSON-RPC error object without data: the
	// refusals of authentication and of an A2A version, which clients read
	// by their code, have always been written so.
	JSONRPCCodeOnly
	// HTTPJSON is the HTTP+JSON binding's google.rpc.Status body, the
	// ErrorInfo in its details.
	HTTPJSON
	// Plain is {"error": "message"}: the approvals API, and the
	// answers outside any agent's binding (no such agent, a panic).
	Plain
)

// ShapeOf is the binding of a request to an agent's endpoint.
func ShapeOf(jsonRPC bool) Shape {
	if jsonRPC {
		return JSONRPC
	}
	return HTTPJSON
}

// Body returns the HTTP status and the body answering err in
// binding b: the code, status and ErrorInfo of err's sentinel
// (CodeOf), its message (Message) and, after the ErrorInfo, the
// typed details of the a2a.Error it is (a RetryInfo). id is the JSON-RPC
// request's id, null when unknown. status, when not 0, is the HTTP status
// to answer with instead: a request refused before its binding read it (a
// body too large or not JSON, an unknown path or method) or the 401 of
// authentication; over HTTP+JSON the google.rpc code then follows it
// (GRPCCodeName). Otherwise a JSON-RPC error answers 200, as JSON-RPC over
// HTTP has it.
func Body(b Shape, id json.RawMessage, status int, err error) (int, any) {
	code, msg := CodeOf(err), Message(err)
	details := []any{code.Info()}
	var a2aErr *a2a.Error
	if errors.As(err, &a2aErr) {
		for _, d := range a2aErr.TypedDetails {
			if d.TypeURL != errordetails.ErrorInfoType {
				details = append(details, d)
			}
		}
	}
	switch b {
	case JSONRPC, JSONRPCCodeOnly:
		if status == 0 {
			status = http.StatusOK
		}
		if len(id) == 0 {
			id = json.RawMessage("null")
		}
		obj := map[string]any{"code": code.RPCCode, "message": msg}
		if b == JSONRPC {
			obj["data"] = details
		}
		return status, map[string]any{"jsonrpc": "2.0", "id": id, "error": obj}
	case HTTPJSON:
		grpc := code.GRPC
		if status == 0 {
			status = code.Status
		} else {
			grpc = GRPCCodeName(status)
		}
		return status, map[string]any{"error": map[string]any{
			"code": status, "status": grpc, "message": msg, "details": details,
		}}
	default:
		if status == 0 {
			status = code.Status
		}
		return status, map[string]any{"error": msg}
	}
}

// Write answers err on w in shape b (Body).
func Write(w http.ResponseWriter, b Shape, id json.RawMessage, status int, err error) {
	status, body := Body(b, id, status, err)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// Abort answers err in binding b through Gin (Body in
// Gin's JSON) and stops the request's handlers.
func Abort(c *gin.Context, b Shape, status int, err error) {
	c.AbortWithStatusJSON(Body(b, nil, status, err))
}

// Message is the message an A2A error carries to the client.
func Message(err error) string {
	var a2aErr *a2a.Error
	if errors.As(err, &a2aErr) && a2aErr.Message != "" {
		return a2aErr.Message
	}
	return err.Error()
}

// WithRetryDelay is err, a refusal asking the client to wait (a rate
// limit, the stream cap), with the google.rpc.RetryInfo of the wait beside
// its ErrorInfo, in whole seconds (RetrySeconds), which every binding
// carries: HTTP+JSON's details, JSON-RPC's data, a gRPC status's details.
func WithRetryDelay(err error, wait time.Duration) error {
	return a2a.NewError(err, Message(err)).WithTypedDetails(
		errordetails.NewTyped("type.googleapis.com/google.rpc.RetryInfo", map[string]any{"retryDelay": fmt.Sprintf("%ds", RetrySeconds(wait))}))
}

// RetrySeconds is a wait as the whole seconds of Retry-After, rounded up.
func RetrySeconds(wait time.Duration) int { return int(math.Ceil(wait.Seconds())) }
