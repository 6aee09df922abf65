package tests

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestGRPCBinding checks what the gRPC binding (serve --grpc-addr) adds to
// the handler the other bindings share, with a raw gRPC client (a2apb):
// the standard health service, reflection off by default, refusals as
// statuses with their ErrorInfo (no credentials, an unknown agent as
// tenant, a message over the size limit), the A2A-Extensions negotiation
// on metadata, and the tenant routing a task to its agent.
func TestGRPCBinding(t *testing.T) {
	const key = "grpc-binding-key"
	addr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	harness.StartServe(t, t.TempDir(), "--api-keys", "alice="+key, "--grpc-addr", addr)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx := harness.Context(t)
	authed := metadata.AppendToOutgoingContext(ctx, "x-api-key", key)
	client := a2apb.NewA2AServiceClient(conn)
	send := func(ctx context.Context, tenant, text string, opts ...grpc.CallOption) (*a2apb.SendMessageResponse, error) {
		return client.SendMessage(ctx, &a2apb.SendMessageRequest{Tenant: tenant, Message: &a2apb.Message{
			MessageId: a2a.NewMessageID(), Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: text}}}}}, opts...)
	}
	errorInfo := func(err error) (codes.Code, string) {
		st, _ := status.FromError(err)
		for _, d := range st.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok {
				return st.Code(), info.Reason
			}
		}
		return st.Code(), ""
	}

	t.Run("health", func(t *testing.T) {
		for _, service := range []string{"", "lf.a2a.v1.A2AService", "a2a.v1.A2AService"} {
			resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
			if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Errorf("health of %q: %v, %v; want SERVING", service, resp.GetStatus(), err)
			}
		}
	})

	t.Run("reflection off", func(t *testing.T) {
		stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
		if err == nil {
			_ = stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}})
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.Unimplemented {
			t.Errorf("reflection: %v, want Unimplemented (off without --grpc-reflection)", err)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		var header metadata.MD
		_, err := send(ctx, "echo", "hi", grpc.Header(&header))
		if code, reason := errorInfo(err); code != codes.Unauthenticated || reason != "UNAUTHENTICATED" {
			t.Errorf("no credentials: %s %s (%v), want Unauthenticated UNAUTHENTICATED", code, reason, err)
		}
		if !slices.ContainsFunc(header.Get("www-authenticate"), func(v string) bool { return strings.HasPrefix(v, "APIKey") }) {
			t.Errorf("no credentials: www-authenticate metadata %q, want the APIKey challenge", header.Get("www-authenticate"))
		}
		_, err = send(metadata.AppendToOutgoingContext(ctx, "x-api-key", "wrong"), "echo", "hi")
		if code, _ := errorInfo(err); code != codes.Unauthenticated || !strings.Contains(err.Error(), "unknown API key") {
			t.Errorf("a wrong key: %v, want Unauthenticated naming it", err)
		}
		_, err = send(authed, "no-such-agent", "hi")
		if code, reason := errorInfo(err); code != codes.Unimplemented || reason != "METHOD_NOT_FOUND" {
			t.Errorf("unknown agent: %s %s (%v), want Unimplemented METHOD_NOT_FOUND", code, reason, err)
		}
		// The a2a-version metadata is checked as the HTTP bindings check the
		// A2A-Version header: FAILED_PRECONDITION, as A2A 1.0.1's table gives.
		_, err = send(metadata.AppendToOutgoingContext(authed, "a2a-version", "99.0"), "echo", "hi")
		if code, reason := errorInfo(err); code != codes.FailedPrecondition || reason != "VERSION_NOT_SUPPORTED" {
			t.Errorf("a2a-version 99.0: %s %s (%v), want FailedPrecondition VERSION_NOT_SUPPORTED", code, reason, err)
		}
		if _, err := send(metadata.AppendToOutgoingContext(authed, "a2a-version", "1.0"), "echo", "hi"); err != nil {
			t.Errorf("a2a-version 1.0: %v", err)
		}
		_, err = send(authed, "echo", strings.Repeat("x", 5<<20))
		if status.Code(err) != codes.ResourceExhausted {
			t.Errorf("a 5 MiB message: %v, want ResourceExhausted (the 4 MiB body limit)", err)
		}
		_, err = client.GetTask(authed, &a2apb.GetTaskRequest{Tenant: "echo", Id: "no-such-task"})
		if code, reason := errorInfo(err); code != codes.NotFound || reason != "TASK_NOT_FOUND" {
			t.Errorf("unknown task: %s %s (%v), want NotFound TASK_NOT_FOUND", code, reason, err)
		}
	})

	t.Run("tenant routes and extensions", func(t *testing.T) {
		var header metadata.MD
		resp, err := send(metadata.AppendToOutgoingContext(authed, "a2a-extensions", artifactVersionsExtension),
			"report", "Q3 review\nRevenue grew.", grpc.Header(&header))
		if err != nil {
			t.Fatalf("SendMessage to report: %v", err)
		}
		if got := header.Get("a2a-extensions"); !slices.Contains(got, artifactVersionsExtension) {
			t.Errorf("activated extensions metadata = %q, want %s", got, artifactVersionsExtension)
		}
		task := resp.GetTask()
		if task.GetStatus().GetState() != a2apb.TaskState_TASK_STATE_COMPLETED || len(task.GetArtifacts()) != 1 {
			t.Fatalf("report task: %v", task)
		}
		// The task is the report agent's: the echo agent does not know it.
		if _, err := client.GetTask(authed, &a2apb.GetTaskRequest{Tenant: "echo", Id: task.GetId()}); status.Code(err) != codes.NotFound {
			t.Errorf("report's task read as echo's: %v, want NotFound", err)
		}
		if _, err := client.GetTask(authed, &a2apb.GetTaskRequest{Tenant: "report", Id: task.GetId()}); err != nil {
			t.Errorf("report's task read as report's: %v", err)
		}
	})
}
