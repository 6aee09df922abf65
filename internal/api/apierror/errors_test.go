package apierror

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/errordetails"
	"github.com/gin-gonic/gin"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// wantCode is how one error must read: the JSON-RPC code, and over
// HTTP+JSON the status, google.rpc code and ErrorInfo reason and domain.
type wantCode struct {
	err    error
	rpc    int
	status int
	grpc   string
	reason string
	domain string
}

// wantCodes spells out, independently of errorCodes, the answer to every
// sentinel of a2a (a2a/errors.go), a2aflow's own, and an error wrapping
// none.
var wantCodes = []wantCode{
	{a2a.ErrParseError, -32700, 400, "INVALID_ARGUMENT", "PARSE_ERROR", a2a.ProtocolDomain},
	{a2a.ErrInvalidRequest, -32600, 400, "INVALID_ARGUMENT", "INVALID_REQUEST", a2a.ProtocolDomain},
	{a2a.ErrMethodNotFound, -32601, 501, "UNIMPLEMENTED", "METHOD_NOT_FOUND", a2a.ProtocolDomain},
	{a2a.ErrInvalidParams, -32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS", a2a.ProtocolDomain},
	{a2a.ErrInternalError, -32603, 500, "INTERNAL", "INTERNAL_ERROR", a2a.ProtocolDomain},
	{a2a.ErrServerError, -32000, 503, "UNAVAILABLE", "SERVER_ERROR", a2a.ProtocolDomain},
	{a2a.ErrTaskNotFound, -32001, 404, "NOT_FOUND", "TASK_NOT_FOUND", a2a.ProtocolDomain},
	{a2a.ErrTaskNotCancelable, -32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE", a2a.ProtocolDomain},
	{a2a.ErrPushNotificationNotSupported, -32003, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", a2a.ProtocolDomain},
	{a2a.ErrUnsupportedOperation, -32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", a2a.ProtocolDomain},
	{a2a.ErrUnsupportedContentType, -32005, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED", a2a.ProtocolDomain},
	{a2a.ErrInvalidAgentResponse, -32006, 500, "INTERNAL", "INVALID_AGENT_RESPONSE", a2a.ProtocolDomain},
	{a2a.ErrExtendedCardNotConfigured, -32007, 400, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED", a2a.ProtocolDomain},
	{a2a.ErrExtensionSupportRequired, -32008, 400, "FAILED_PRECONDITION", "EXTENSION_SUPPORT_REQUIRED", a2a.ProtocolDomain},
	{a2a.ErrVersionNotSupported, -32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED", a2a.ProtocolDomain},
	{a2a.ErrUnauthenticated, -31401, 401, "UNAUTHENTICATED", "UNAUTHENTICATED", a2a.ProtocolDomain},
	{a2a.ErrUnauthorized, -31403, 403, "PERMISSION_DENIED", "UNAUTHORIZED", a2a.ProtocolDomain},
	{ErrDecisionRefused, -31409, 409, "FAILED_PRECONDITION", "DECISION_REFUSED", refusalDomain},
	{ErrForkRefused, -31409, 409, "FAILED_PRECONDITION", "FORK_REFUSED", refusalDomain},
	{ErrTooManyRequests, -31429, 429, "RESOURCE_EXHAUSTED", "RATE_LIMITED", refusalDomain},
	{ErrMisdirectedRequest, -31421, 421, "FAILED_PRECONDITION", "MISDIRECTED_REQUEST", refusalDomain},
	{ErrTaskGenerationMismatch, -32010, 409, "ABORTED", "TASK_GENERATION_MISMATCH", a2a.ProtocolDomain},
	{errors.New("no sentinel"), -32603, 500, "INTERNAL", "INTERNAL_ERROR", a2a.ProtocolDomain},
}

// a2aSentinel reports whether err is one of a2a's sentinels (not
// a2aflow's own, nor none).
func a2aSentinel(err error) bool {
	return a2a.ErrorReason(err) != "INTERNAL_ERROR" || err == a2a.ErrInternalError
}

// bodyOf renders what Body answers as Write writes it.
func bodyOf(t *testing.T, b Shape, id json.RawMessage, status int, err error) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	Write(rec, b, id, status, err)
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	return rec.Code, rec.Body.String()
}

func TestWriteA2AError(t *testing.T) {
	if len(errorCodes)+1 != len(wantCodes) {
		t.Errorf("errorCodes has %d rows, wantCodes %d sentinels: a row is missing on one side", len(errorCodes), len(wantCodes)-1)
	}
	for _, w := range wantCodes {
		t.Run(w.reason+"/"+w.err.Error(), func(t *testing.T) {
			// Wrapped, with a message of its own: the sentinel picks the
			// codes, the message is the A2A error's.
			err := fmt.Errorf("context: %w", a2a.NewError(w.err, `it <failed> & "why"`))
			const msg = `"it \u003cfailed\u003e \u0026 \"why\""`
			info := fmt.Sprintf(`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":%q,"reason":%q}`, w.domain, w.reason)

			tests := []struct {
				name       string
				b          Shape
				id         json.RawMessage
				status     int
				wantStatus int
				want       string
			}{
				{"JSON-RPC", JSONRPC, json.RawMessage(` "req-1" `), 0, 200,
					fmt.Sprintf(`{"error":{"code":%d,"data":[%s],"message":%s},"id":"req-1","jsonrpc":"2.0"}`, w.rpc, info, msg)},
				{"JSON-RPC without id", JSONRPC, nil, 0, 200,
					fmt.Sprintf(`{"error":{"code":%d,"data":[%s],"message":%s},"id":null,"jsonrpc":"2.0"}`, w.rpc, info, msg)},
				{"JSON-RPC with a status", JSONRPC, json.RawMessage(`7`), 413, 413,
					fmt.Sprintf(`{"error":{"code":%d,"data":[%s],"message":%s},"id":7,"jsonrpc":"2.0"}`, w.rpc, info, msg)},
				{"JSON-RPC code only", JSONRPCCodeOnly, nil, 0, 200,
					fmt.Sprintf(`{"error":{"code":%d,"message":%s},"id":null,"jsonrpc":"2.0"}`, w.rpc, msg)},
				{"HTTP+JSON", HTTPJSON, nil, 0, w.status,
					fmt.Sprintf(`{"error":{"code":%d,"details":[%s],"message":%s,"status":%q}}`, w.status, info, msg, w.grpc)},
				{"HTTP+JSON with a status", HTTPJSON, nil, 405, 405,
					fmt.Sprintf(`{"error":{"code":405,"details":[%s],"message":%s,"status":"UNIMPLEMENTED"}}`, info, msg)},
				{"plain", Plain, nil, 0, w.status, fmt.Sprintf(`{"error":%s}`, msg)},
				{"plain with a status", Plain, nil, 404, 404, fmt.Sprintf(`{"error":%s}`, msg)},
			}
			for _, tt := range tests {
				status, body := bodyOf(t, tt.b, tt.id, tt.status, err)
				if status != tt.wantStatus || body != tt.want+"\n" {
					t.Errorf("%s: %d %s\nwant %d %s", tt.name, status, body, tt.wantStatus, tt.want)
				}
			}
			if got := HTTPStatus(err); got != w.status {
				t.Errorf("httpStatusOf = %d, want %d", got, w.status)
			}
			// The bare sentinel: its own text is the message.
			if _, body := bodyOf(t, Plain, nil, 0, w.err); body != fmt.Sprintf("{\"error\":%q}\n", w.err.Error()) {
				t.Errorf("bare sentinel: %s", body)
			}
		})
	}
}

// TestWriteA2AErrorTypedDetails: an error's typed details follow the
// ErrorInfo, but an ErrorInfo of its own, which would be a second one.
func TestWriteA2AErrorTypedDetails(t *testing.T) {
	err := a2a.NewError(ErrTooManyRequests, "slow down").WithTypedDetails(
		errordetails.NewTyped("type.googleapis.com/google.rpc.RetryInfo", map[string]any{"retryDelay": "5s"}),
		errordetails.NewErrorInfo("OTHER", "elsewhere", nil))
	const details = `[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2aflow","reason":"RATE_LIMITED"},` +
		`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"5s"}]`
	for _, tt := range []struct {
		b    Shape
		want string
	}{
		{JSONRPC, `{"error":{"code":-31429,"data":` + details + `,"message":"slow down"},"id":null,"jsonrpc":"2.0"}`},
		{HTTPJSON, `{"error":{"code":429,"details":` + details + `,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}`},
	} {
		if _, body := bodyOf(t, tt.b, nil, 0, err); body != tt.want+"\n" {
			t.Errorf("binding %d: %s\nwant %s", tt.b, body, tt.want)
		}
	}
}

func TestAbortWithA2AError(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	Abort(c, HTTPJSON, 0, a2a.NewError(a2a.ErrTaskNotFound, "no such task"))
	want := `{"error":{"code":404,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org","reason":"TASK_NOT_FOUND"}],"message":"no such task","status":"NOT_FOUND"}}`
	if rec.Code != 404 || rec.Body.String() != want || !c.IsAborted() {
		t.Errorf("%d %s (aborted %t), want 404 %s", rec.Code, rec.Body.String(), c.IsAborted(), want)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
}

func TestGRPCStatusOf(t *testing.T) {
	for status, want := range map[int]string{
		400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
		405: "UNIMPLEMENTED", 409: "FAILED_PRECONDITION", 413: "INVALID_ARGUMENT", 415: "INVALID_ARGUMENT",
		307: "INVALID_ARGUMENT", 500: "INTERNAL", 501: "UNIMPLEMENTED", 502: "INTERNAL", 503: "UNAVAILABLE",
	} {
		if got := GRPCCodeName(status); got != want {
			t.Errorf("grpcStatusOf(%d) = %s, want %s", status, got, want)
		}
	}
}

// TestClientsReadOurErrors: a2a-go's clients read every A2A error written
// by Write as its sentinel, on both bindings.
func TestClientsReadOurErrors(t *testing.T) {
	for _, c := range Codes() {
		if !a2aSentinel(c.Sentinel) {
			continue
		}
		t.Run(a2a.ErrorReason(c.Sentinel), func(t *testing.T) {
			for _, b := range []Shape{JSONRPC, JSONRPCCodeOnly, HTTPJSON} {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
					Write(w, b, nil, 0, a2a.NewError(c.Sentinel, "refused"))
				}))
				var tr a2aclient.Transport
				if b == HTTPJSON {
					u, _ := url.Parse(srv.URL)
					tr = a2aclient.NewRESTTransport(u, srv.Client())
				} else {
					tr = a2aclient.NewJSONRPCTransport(srv.URL, srv.Client())
				}
				_, err := tr.GetTask(t.Context(), nil, &a2a.GetTaskRequest{ID: "t"})
				srv.Close()
				if !errors.Is(err, c.Sentinel) {
					t.Errorf("binding %d: the client read %v, want %v", b, err, c.Sentinel)
				}
			}
		})
	}
}

// TestWorkflowNotReadyIsRetryable: where the API does not send such an
// update again itself (approval decisions, cancel, push configs), the caller
// is told to: a retryable error, not an internal one.
func TestWorkflowNotReadyIsRetryable(t *testing.T) {
	err := FromTemporal(serviceerror.NewWorkflowNotReady("Unable to perform workflow execution update due to unexpected workflow task failure."))
	var a2aErr *a2a.Error
	if !errors.As(err, &a2aErr) || a2aErr.Details["retryable"] != true || a2aErr.Details["reason"] != "WORKFLOW_TASK_FAILED" {
		t.Fatalf("toA2AError = %#v, want a retryable error with reason WORKFLOW_TASK_FAILED", err)
	}
}

// TestFromResourceUpdate: the refusals of a resource's update, as the
// approvals and waitpoints routes answer them.
func TestFromResourceUpdate(t *testing.T) {
	other := errors.New("something else")
	for _, tc := range []struct {
		kind, typ string
		sentinel  error
		status    int
		message   string
		unchanged bool
	}{
		{"approval", wire.ErrTypeApprovalRefused, ErrDecisionRefused, http.StatusConflict, "refused by the validator", false},
		{"approval", wire.ErrTypeApprovalNotFound, a2a.ErrTaskNotFound, http.StatusNotFound, `approval "x-1" does not exist`, false},
		{"approval", wire.ErrTypeTaskNotFound, a2a.ErrTaskNotFound, http.StatusNotFound, `approval "x-1" does not exist`, false},
		{"waitpoint", wire.ErrTypeWaitpointNotFound, a2a.ErrTaskNotFound, http.StatusNotFound, `waitpoint "x-1" does not exist`, false},
		{"waitpoint", wire.ErrTypeInvalidParams, a2a.ErrInvalidParams, http.StatusBadRequest, "refused by the validator", false},
		{"waitpoint", wire.ErrTypeWaitpointTokenRefused, a2a.ErrUnauthorized, http.StatusForbidden, "the token does not open waitpoint x-1", false},
		{"waitpoint", wire.ErrTypeWaitpointSettled, nil, 0, "", true},
		{"approval", "", nil, 0, "", true},
	} {
		t.Run(tc.kind+" "+tc.typ, func(t *testing.T) {
			err := error(temporal.NewApplicationError("refused by the validator", tc.typ))
			if tc.typ == "" {
				err = other
			}
			got := FromResourceUpdate(tc.kind, "x-1", err)
			if tc.unchanged {
				if got != err {
					t.Errorf("%v, want the error unchanged", got)
				}
				return
			}
			if !errors.Is(got, tc.sentinel) || HTTPStatus(got) != tc.status || Message(got) != tc.message {
				t.Errorf("%v (%d %q), want %v %d %q", got, HTTPStatus(got), Message(got), tc.sentinel, tc.status, tc.message)
			}
		})
	}
}

// TestGRPCCodesNamed checks that every row's gRPC code is one grpcCodes
// knows: a name it lacks was read as OK, whose status is no error, so a
// refusal reached the client as an empty answer (ABORTED, A2A 1.1's
// generation mismatch, did).
func TestGRPCCodesNamed(t *testing.T) {
	for _, row := range errorCodes {
		if _, ok := grpcCodes[row.GRPC]; !ok {
			t.Errorf("%v: gRPC code %q is not in grpcCodes", row.Sentinel, row.GRPC)
		}
		if st, _ := status.FromError(GRPC(row.Sentinel)); st.Code() == codes.OK || st.Code().String() != grpcName(row.GRPC) {
			t.Errorf("%v: GRPC gives %v, want %s", row.Sentinel, st.Code(), row.GRPC)
		}
	}
}

// grpcName is the Go spelling of a gRPC code's name (ABORTED: Aborted).
func grpcName(name string) string {
	out := ""
	for _, w := range strings.Split(strings.ToLower(name), "_") {
		out += strings.ToUpper(w[:1]) + w[1:]
	}
	return out
}
