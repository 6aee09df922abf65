package a2abinding

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/workflows"
)

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
		s := &Bindings{cfg: Config{GRPC: GRPCConfig{Addr: tc.addr}}}
		if got := s.grpcCardAddr(r); got != tc.want {
			t.Errorf("Addr %q: cards list %q, want %q", tc.addr, got, tc.want)
		}
	}
	s := &Bindings{cfg: Config{PublicURL: "https://a2a.example", GRPC: GRPCConfig{Addr: ":9090"}}}
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
	card := taskservice.AgentCard(agent, "http://h/agents/echo")
	addGRPCInterfaces(card, "h:9090", "echo", false)
	want := []string{"JSONRPC 1.0 http://h/agents/echo ", "HTTP+JSON 1.0 http://h/agents/echo ", "GRPC 1.0 h:9090 echo",
		"JSONRPC 0.3 http://h/agents/echo ", "HTTP+JSON 0.3 http://h/agents/echo ",
		"JSONRPC 1.1 http://h/agents/echo ", "HTTP+JSON 1.1 http://h/agents/echo ", "GRPC 1.1 h:9090 echo"}
	if got := interfaces(card); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("echo's interfaces:\n got %q\nwant %q", got, want)
	}
	card = taskservice.AgentCard(agent, "http://h")
	addGRPCInterfaces(card, "h:9090", "echo", true)
	if got := interfaces(card); len(got) != 9 || got[7] != "GRPC "+string(a2av0.Version)+" h:9090 " || got[8] != "GRPC 1.1 h:9090 echo" {
		t.Errorf("the default agent's interfaces: %q, want 0.3 gRPC, then 1.1 gRPC last", got)
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
