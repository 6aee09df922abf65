package apierror

import (
	"fmt"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/api/serviceerror"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestGRPCError checks the gRPC form of the API's errors: the code
// codes.go names for HTTP+JSON, the ErrorInfo with the A2A (or a2aflow's)
// reason, a RetryInfo for a retry delay, and a Temporal status wrapped by
// the service never passed on with its own code.
func TestGRPCError(t *testing.T) {
	for _, tc := range []struct {
		name           string
		err            error
		code           codes.Code
		reason, domain string
		retry          time.Duration
	}{
		{"task not found", TaskNotFound(), codes.NotFound, "TASK_NOT_FOUND", a2a.ProtocolDomain, 0},
		{"not cancelable", a2a.NewError(a2a.ErrTaskNotCancelable, "done"), codes.FailedPrecondition, "TASK_NOT_CANCELABLE", a2a.ProtocolDomain, 0},
		{"unsupported", a2a.ErrUnsupportedOperation, codes.FailedPrecondition, "UNSUPPORTED_OPERATION", a2a.ProtocolDomain, 0},
		{"content type", a2a.ErrUnsupportedContentType, codes.InvalidArgument, "CONTENT_TYPE_NOT_SUPPORTED", a2a.ProtocolDomain, 0},
		{"unauthenticated", a2a.NewError(a2a.ErrUnauthenticated, "who?"), codes.Unauthenticated, "UNAUTHENTICATED", a2a.ProtocolDomain, 0},
		{"temporal unavailable", a2a.NewError(a2a.ErrServerError, "Temporal is unavailable"), codes.Unavailable, "SERVER_ERROR", a2a.ProtocolDomain, 0},
		{"rate limited", grpcRetryErrorCause(), codes.ResourceExhausted, "RATE_LIMITED", refusalDomain, 3 * time.Second},
		{"wrapped Temporal status", FromTemporal(fmt.Errorf("boom: %w", serviceerror.NewPermissionDenied("no", ""))), codes.Internal, "INTERNAL_ERROR", a2a.ProtocolDomain, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.retry > 0 {
				err = GRPCRetry(tc.err, tc.retry)
			} else {
				err = GRPC(tc.err)
			}
			st, ok := status.FromError(err)
			if !ok {
				t.Fatalf("%v is not a status", err)
			}
			if st.Code() != tc.code {
				t.Errorf("code = %s, want %s", st.Code(), tc.code)
			}
			var info *errdetails.ErrorInfo
			var retry *errdetails.RetryInfo
			for _, d := range st.Details() {
				switch d := d.(type) {
				case *errdetails.ErrorInfo:
					info = d
				case *errdetails.RetryInfo:
					retry = d
				}
			}
			if info == nil || info.Reason != tc.reason || info.Domain != tc.domain {
				t.Errorf("ErrorInfo = %v, want reason %s, domain %s", info, tc.reason, tc.domain)
			}
			if tc.retry > 0 && (retry == nil || retry.RetryDelay.AsDuration() != tc.retry) {
				t.Errorf("RetryInfo = %v, want %s", retry, tc.retry)
			}
		})
	}
	if GRPC(nil) != nil {
		t.Error("grpcError(nil) is not nil")
	}
}

func grpcRetryErrorCause() error { return a2a.NewError(ErrTooManyRequests, "over the rate limit") }
