package api

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"go.temporal.io/api/serviceerror"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2aflow/a2aflow/workflows"
)

// TestGRPCError checks the gRPC form of the API's errors: the code
// errors.go names for HTTP+JSON, the ErrorInfo with the A2A (or a2aflow's)
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
		{"task not found", taskNotFound(), codes.NotFound, "TASK_NOT_FOUND", a2a.ProtocolDomain, 0},
		{"not cancelable", a2a.NewError(a2a.ErrTaskNotCancelable, "done"), codes.FailedPrecondition, "TASK_NOT_CANCELABLE", a2a.ProtocolDomain, 0},
		{"unsupported", a2a.ErrUnsupportedOperation, codes.FailedPrecondition, "UNSUPPORTED_OPERATION", a2a.ProtocolDomain, 0},
		{"content type", a2a.ErrUnsupportedContentType, codes.InvalidArgument, "CONTENT_TYPE_NOT_SUPPORTED", a2a.ProtocolDomain, 0},
		{"unauthenticated", a2a.NewError(a2a.ErrUnauthenticated, "who?"), codes.Unauthenticated, "UNAUTHENTICATED", a2a.ProtocolDomain, 0},
		{"temporal unavailable", a2a.NewError(a2a.ErrServerError, "Temporal is unavailable"), codes.Unavailable, "SERVER_ERROR", a2a.ProtocolDomain, 0},
		{"rate limited", grpcRetryErrorCause(), codes.ResourceExhausted, "RATE_LIMITED", refusalDomain, 3 * time.Second},
		{"wrapped Temporal status", toA2AError(fmt.Errorf("boom: %w", serviceerror.NewPermissionDenied("no", ""))), codes.Internal, "INTERNAL_ERROR", a2a.ProtocolDomain, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.retry > 0 {
				err = grpcRetryError(tc.err, tc.retry)
			} else {
				err = grpcError(tc.err)
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
	if grpcError(nil) != nil {
		t.Error("grpcError(nil) is not nil")
	}
}

func grpcRetryErrorCause() error { return tooManyRequests("over the rate limit") }

// TestGRPCCards checks where cards list the gRPC binding: the 1.0
// interface after the HTTP ones with the agent as its tenant, the 0.3 one
// on the default agent's card only, at the request's host when the
// listen address names none.
func TestGRPCCards(t *testing.T) {
	r := httptest.NewRequest("GET", "http://agents.example:8080/.well-known/agent-card.json", nil)
	for _, tc := range []struct{ addr, want string }{
		{"", ""},
		{":9090", "agents.example:9090"},
		{"0.0.0.0:9090", "agents.example:9090"},
		{"grpc.example:443", "grpc.example:443"},
	} {
		s := &Bindings{cfg: bindingsConfig{GRPC: GRPCConfig{Addr: tc.addr}}}
		if got := s.grpcCardAddr(r); got != tc.want {
			t.Errorf("Addr %q: cards list %q, want %q", tc.addr, got, tc.want)
		}
	}
	s := &Bindings{cfg: bindingsConfig{PublicURL: "https://a2a.example", GRPC: GRPCConfig{Addr: ":9090"}}}
	if got := s.grpcCardAddr(r); got != "a2a.example:9090" {
		t.Errorf("with PublicURL: cards list %q, want a2a.example:9090", got)
	}

	agent := &workflows.Agent{Name: "echo"}
	interfaces := func(card *a2a.AgentCard) []string {
		var out []string
		for _, i := range card.SupportedInterfaces {
			out = append(out, fmt.Sprintf("%s %s %s %s", i.ProtocolBinding, i.ProtocolVersion, i.URL, i.Tenant))
		}
		return out
	}
	card := AgentCard(agent, "http://h/agents/echo")
	addGRPCInterfaces(card, "h:9090", "echo", false)
	want := []string{"JSONRPC 1.0 http://h/agents/echo ", "HTTP+JSON 1.0 http://h/agents/echo ", "GRPC 1.0 h:9090 echo",
		"JSONRPC 0.3 http://h/agents/echo ", "HTTP+JSON 0.3 http://h/agents/echo "}
	if got := interfaces(card); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("echo's interfaces:\n got %q\nwant %q", got, want)
	}
	card = AgentCard(agent, "http://h")
	addGRPCInterfaces(card, "h:9090", "echo", true)
	if got := interfaces(card); len(got) != 6 || got[5] != "GRPC "+string(a2av0.Version)+" h:9090 " {
		t.Errorf("the default agent's interfaces: %q, want 0.3 gRPC last", got)
	}
}

// TestCreatePushConfigBody03 checks the two 0.3 HTTP+JSON bodies of
// CreateTaskPushNotificationConfig: the whole request passes as it is, the
// config alone (the proto's body: "config") is wrapped as its config.
func TestCreatePushConfigBody03(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"parent":"tasks/t","configId":"c","config":{"pushNotificationConfig":{"url":"u"}}}`,
			`{"parent":"tasks/t","configId":"c","config":{"pushNotificationConfig":{"url":"u"}}}`},
		{`{"name":"tasks/t/pushNotificationConfigs/c","pushNotificationConfig":{"id":"c","url":"u"}}`,
			`{"config":{"name":"tasks/t/pushNotificationConfigs/c","pushNotificationConfig":{"id":"c","url":"u"}}}`},
		{`{"other":1}`, `{"other":1}`},
		{`not json`, `not json`},
	} {
		if got := string(createPushConfigBody03([]byte(tc.in))); got != tc.want {
			t.Errorf("createPushConfigBody03(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
