package api_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/workflows"
)

// grpcRecorder keeps the last error status a client connection received,
// before a2a-go's client reads it.
type grpcRecorder struct {
	mu  sync.Mutex
	err error
}

func (r *grpcRecorder) set(err error) {
	if err != nil && err != io.EOF {
		r.mu.Lock()
		r.err = err
		r.mu.Unlock()
	}
}

// last returns the code and ErrorInfo reason of the last error status.
func (r *grpcRecorder) last() (codes.Code, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := status.Convert(r.err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return st.Code(), info.Reason
		}
	}
	return st.Code(), ""
}

type recordingStream struct {
	grpc.ClientStream
	rec *grpcRecorder
}

func (s recordingStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	s.rec.set(err)
	return err
}

// grpcClient serves srv on a loopback listener and returns a2a-go's gRPC
// client transport (lf.a2a.v1.A2AService) to it, over a connection whose
// recorder keeps the raw status of every error.
func grpcClient(t *testing.T, srv *grpc.Server) (a2aclient.Transport, *grpcRecorder) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	rec := &grpcRecorder{}
	unary := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		rec.set(err)
		return err
	}
	stream := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		s, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil {
			rec.set(err)
			return nil, err
		}
		return recordingStream{ClientStream: s, rec: rec}, nil
	}
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(unary), grpc.WithStreamInterceptor(stream))
	if err != nil {
		t.Fatal(err)
	}
	tr := grpcv1.NewGRPCTransport(conn)
	t.Cleanup(func() { _ = tr.Destroy() })
	return tr, rec
}

// firstError returns the first error of a stream.
func firstError(seq func(func(a2a.Event, error) bool)) error {
	var first error
	seq(func(_ a2a.Event, err error) bool {
		first = err
		return err == nil
	})
	return first
}

// TestGRPCErrorsTyped drives the whole API's gRPC binding (over a fake
// Temporal that knows one finished task) with a2a-go's gRPC client, and
// checks each A2A error a2aflow answers there: the status code of A2A
// 1.0.1's §5.4 table (apierror's gRPC column), the ErrorInfo reason, and
// a2a-go's client reading it as that error (errors.Is), which it does only
// when code and reason are the pair its own table has.
func TestGRPCErrorsTyped(t *testing.T) {
	handle := func(workflow.Context, *workflows.Task) error { return nil }
	reg, err := engine.NewRegistry(&workflows.Agent{Name: "echo", Handle: handle})
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(fuzzTemporal{}, reg, api.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	tr, rec := grpcClient(t, srv.GRPCServer())
	v10 := a2aclient.ServiceParams{"a2a-version": {"1.0"}}
	for _, tc := range []struct {
		name     string
		call     func(ctx context.Context) error
		sentinel error
		code     codes.Code
		reason   string
	}{
		{"GetTask of an unknown task", func(ctx context.Context) error {
			_, err := tr.GetTask(ctx, v10, &a2a.GetTaskRequest{ID: "no-such-task"})
			return err
		}, a2a.ErrTaskNotFound, codes.NotFound, "TASK_NOT_FOUND"},
		{"CancelTask of a finished task", func(ctx context.Context) error {
			_, err := tr.CancelTask(ctx, v10, &a2a.CancelTaskRequest{ID: fuzzKnownTask})
			return err
		}, a2a.ErrTaskNotCancelable, codes.FailedPrecondition, "TASK_NOT_CANCELABLE"},
		{"SubscribeToTask of a finished task", func(ctx context.Context) error {
			return firstError(tr.SubscribeToTask(ctx, v10, &a2a.SubscribeToTaskRequest{ID: fuzzKnownTask}))
		}, a2a.ErrUnsupportedOperation, codes.FailedPrecondition, "UNSUPPORTED_OPERATION"},
		{"an unknown a2a-version", func(ctx context.Context) error {
			_, err := tr.GetTask(ctx, a2aclient.ServiceParams{"a2a-version": {"9.9"}}, &a2a.GetTaskRequest{ID: fuzzKnownTask})
			return err
		}, a2a.ErrVersionNotSupported, codes.FailedPrecondition, "VERSION_NOT_SUPPORTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := tc.call(ctx)
			if code, reason := rec.last(); code != tc.code || reason != tc.reason {
				t.Errorf("gRPC status %s %s, want %s %s (A2A 1.0.1 §5.4)", code, reason, tc.code, tc.reason)
			}
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("a2a-go's client reads %v, want %v", err, tc.sentinel)
			}
		})
	}
}

// unsupportedGetTask answers every GetTask with UnsupportedOperation.
type unsupportedGetTask struct{ a2asrv.RequestHandler }

func (unsupportedGetTask) GetTask(context.Context, *a2a.GetTaskRequest) (*a2a.Task, error) {
	return nil, a2a.NewError(a2a.ErrUnsupportedOperation, "no")
}

// TestGRPCUnimplementedUntyped is why a2aflow's gRPC column is A2A 1.0.1's
// and not 1.0.0's (UNIMPLEMENTED for UnsupportedOperation,
// PushNotificationNotSupported and VersionNotSupported): a2a-go's gRPC
// client, which pairs an ErrorInfo reason with its own table's code,
// reads UNIMPLEMENTED with reason UNSUPPORTED_OPERATION as no
// UnsupportedOperation. Served by a2a-go's own gRPC handler, its status
// recoded as 1.0.0 gives it; when a2a-go starts typing it, 1.0.0's code
// would no longer cost its clients anything.
func TestGRPCUnimplementedUntyped(t *testing.T) {
	recode := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		if st, ok := status.FromError(err); ok && st.Code() == codes.FailedPrecondition {
			p := st.Proto()
			p.Code = int32(codes.Unimplemented)
			err = status.FromProto(p).Err()
		}
		return resp, err
	}
	g := grpc.NewServer(grpc.UnaryInterceptor(recode))
	grpcv1.NewHandler(unsupportedGetTask{}).RegisterWith(g)
	tr, rec := grpcClient(t, g)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := tr.GetTask(ctx, nil, &a2a.GetTaskRequest{ID: "t"})
	if code, reason := rec.last(); code != codes.Unimplemented || reason != "UNSUPPORTED_OPERATION" {
		t.Fatalf("the recoded status is %s %s, want UNIMPLEMENTED UNSUPPORTED_OPERATION", code, reason)
	}
	if errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("a2a-go's gRPC client now reads UNIMPLEMENTED UNSUPPORTED_OPERATION as UnsupportedOperation (%v): "+
			"A2A 1.0.0's code would no longer cost its clients the error's type", err)
	}
	if !errors.Is(err, a2a.ErrInternalError) {
		t.Errorf("a2a-go's client reads %v, want it as an internal error (its fallback)", err)
	}
}
