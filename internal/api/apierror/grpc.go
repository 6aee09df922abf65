package apierror

// The gRPC binding's errors: the code errorCodes names for each error, the
// google.rpc.ErrorInfo naming it and the details an HTTP+JSON answer
// carries, as a gRPC status.

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// HTTPStatusOfGRPC is the HTTP status the request metrics count a gRPC
// code as: that of the first error answering with it.
func HTTPStatusOfGRPC(c codes.Code) int {
	if c == codes.OK {
		return http.StatusOK
	}
	for _, e := range errorCodes {
		if grpcCodes[e.GRPC] == c {
			return e.Status
		}
	}
	return http.StatusInternalServerError
}

// grpcCodes are the codes errorCodes names.
var grpcCodes = map[string]codes.Code{
	"INVALID_ARGUMENT": codes.InvalidArgument, "UNIMPLEMENTED": codes.Unimplemented, "INTERNAL": codes.Internal,
	"UNAVAILABLE": codes.Unavailable, "NOT_FOUND": codes.NotFound, "FAILED_PRECONDITION": codes.FailedPrecondition,
	"UNAUTHENTICATED": codes.Unauthenticated, "PERMISSION_DENIED": codes.PermissionDenied,
	"RESOURCE_EXHAUSTED": codes.ResourceExhausted, "ABORTED": codes.Aborted,
}

// grpcCode is the gRPC code named name; INTERNAL for a name grpcCodes
// lacks, never OK, whose status is no error at all.
func grpcCode(name string) codes.Code {
	if c, ok := grpcCodes[name]; ok {
		return c
	}
	return codes.Internal
}

// GRPC is err as a gRPC status: the code errorCodes gives it (the
// same as over HTTP+JSON), its message, the details of the a2a.Error it
// is (Details as a Struct, as a2a-go's gRPC transport does), a RetryInfo
// for a retry delay, and the google.rpc.ErrorInfo naming it. Every error
// is mapped, a status included: a Temporal error the service passes on
// must not reach the client with Temporal's code.
func GRPC(err error) error {
	if err == nil {
		return nil
	}
	c := CodeOf(err)
	st := status.New(grpcCode(c.GRPC), Message(err))
	info := &errdetails.ErrorInfo{Reason: a2a.ErrorReason(c.Sentinel), Domain: a2a.ProtocolDomain}
	if c.Reason != "" {
		info.Reason, info.Domain = c.Reason, c.Domain
	}
	var details []protoadapt.MessageV1
	var a2aErr *a2a.Error
	if errors.As(err, &a2aErr) {
		if len(a2aErr.Details) > 0 {
			if s, err := structpb.NewStruct(a2aErr.Details); err == nil {
				details = append(details, s)
			}
		}
		for _, d := range a2aErr.TypedDetails {
			switch d.TypeURL {
			case errordetails.ErrorInfoType:
				if m, ok := d.Value["metadata"].(map[string]any); ok {
					info.Metadata = map[string]string{}
					for k, v := range m {
						info.Metadata[k] = fmt.Sprint(v)
					}
				}
			case "type.googleapis.com/google.rpc.RetryInfo":
				if delay, ok := d.Value["retryDelay"].(string); ok {
					if dur, err := time.ParseDuration(delay); err == nil {
						details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(dur)})
					}
				}
			}
		}
	}
	details = append(details, info)
	if withDetails, err := st.WithDetails(details...); err == nil {
		return withDetails.Err()
	}
	return st.Err()
}

// GRPCRetry is err, a refusal of guard/limits.go, with the RetryInfo of
// the wait it asks for.
func GRPCRetry(err error, wait time.Duration) error {
	return GRPC(WithRetryDelay(err, wait))
}

// WithErrorInfo gives the statuses a2agrpc makes itself (a request it
// cannot convert: INVALID_ARGUMENT) the ErrorInfo every error carries.
func WithErrorInfo(err error) error {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return err
	}
	for _, d := range st.Details() {
		if _, ok := d.(*errdetails.ErrorInfo); ok {
			return err
		}
	}
	var sentinel error
	switch st.Code() {
	case codes.InvalidArgument:
		sentinel = a2a.ErrInvalidParams
	case codes.Internal:
		sentinel = a2a.ErrInternalError
	default:
		return err
	}
	if withDetails, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: a2a.ErrorReason(sentinel), Domain: a2a.ProtocolDomain}); derr == nil {
		return withDetails.Err()
	}
	return err
}
