package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// owner is a TaskOwners that says every task is p's.
type owner string

func (p owner) TaskOwner(context.Context) (string, error) { return string(p), nil }

// doneAgent is an A2A agent that completes every task at once.
type doneAgent struct{}

func (doneAgent) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("done"))), nil)
	}
}

func (doneAgent) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// agentOn serves a real A2A agent named name (JSON-RPC, a2a-go's server) on
// addr, counting every request.
func agentOn(t *testing.T, addr, name string) (*countingServer, string) {
	t.Helper()
	var url string
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2asrv.AgentCardProducerFn(func(context.Context) (*a2a.AgentCard, error) {
		return &a2a.AgentCard{
			Name: name, Version: "1.0.0", Description: "Completes tasks.",
			SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC)},
			DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills: []a2a.AgentSkill{{ID: "do", Name: "Do", Description: "Does it."}},
		}, nil
	})))
	mux.Handle("/", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(doneAgent{})))
	srv := countOn(t, addr, mux.ServeHTTP)
	url = srv.URL
	return srv, url
}

// countingServer counts the requests it gets.
type countingServer struct {
	URL  string
	hits atomic.Int32
}

func countOn(t *testing.T, addr string, h http.HandlerFunc) *countingServer {
	t.Helper()
	c := &countingServer{}
	srv := serveOn(t, addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		h(w, r)
	}))
	c.URL = srv.URL
	return c
}

func openStore(t *testing.T) *models.Store {
	t.Helper()
	s, err := models.Open(filepath.Join(t.TempDir(), "a2aflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// runTool runs the directory tool activity name ("list_agents",
// "remember_agent") of d with in.
func runTool(t *testing.T, d *activities.Directory, name string, in any) (json.RawMessage, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	opts := activity.RegisterOptions{Name: "tool:" + name}
	switch name {
	case "list_agents":
		env.RegisterActivityWithOptions(d.ListAgents, opts)
	case "remember_agent":
		env.RegisterActivityWithOptions(d.RememberAgent, opts)
	}
	val, err := env.ExecuteActivity("tool:"+name, in)
	if err != nil {
		return nil, err
	}
	var out json.RawMessage
	if err := val.Get(&out); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

// appError is err's application error (message, retryable), or fails.
func appError(t *testing.T, err error) (string, bool) {
	t.Helper()
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		t.Fatalf("err = %v, want an application error", err)
	}
	return appErr.Message(), !appErr.NonRetryable()
}

// TestRememberAgentOutboundPolicy asks remember_agent for the URLs an
// attacker would: loopback and metadata addresses, a redirect to another
// host, answers that are not agent cards. Nothing forbidden is reached, and
// the tool's error says why in a few words, never what a server answered.
func TestRememberAgentOutboundPolicy(t *testing.T) {
	canary := countOn(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"name":"internal-admin","secret":"root-password"}`)
	})
	elsewhere := countOn(t, "127.0.0.2:0", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"name":"elsewhere"}`)
	})
	redirector := countOn(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/.well-known/agent-card.json", http.StatusFound)
	})
	html := countOn(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<html>internal dashboard: root-password</html>")
	})
	notFound := countOn(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "internal-admin: root-password", http.StatusNotFound)
	})
	huge := countOn(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"name":"huge","description":"`+strings.Repeat("x", 2<<20)+`"}`)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + ln.Addr().String()
	_ = ln.Close() // nobody listens there now

	publicOnly := outbound.New(outbound.Options{})
	loopback := outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")})
	tests := []struct {
		name      string
		out       *outbound.Client
		url       string
		want      string // the reason in the error
		retryable bool
	}{
		{"loopback canary", publicOnly, canary.URL + "/internal-admin", "refused by the outbound policy", false},
		{"localhost canary", publicOnly, strings.Replace(canary.URL, "127.0.0.1", "localhost", 1), "refused by the outbound policy", false},
		{"metadata", loopback, "http://169.254.169.254/latest/meta-data/", "refused by the outbound policy", false},
		{"metadata over IPv6", loopback, "http://[fd00:ec2::254]/", "refused by the outbound policy", false},
		{"redirect to another host", loopback, redirector.URL, "refused by the outbound policy", false},
		{"not a card", loopback, html.URL, "not an A2A agent", false},
		{"404 with a body", loopback, notFound.URL, "not an A2A agent", false},
		{"card past 1 MiB", loopback, huge.URL, "its answer is larger than a2aflow accepts", false},
		{"nobody listening", loopback, closedURL, "unreachable", true},
		{"not http", loopback, "file:///etc/passwd", "is not an http(s) URL", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &activities.Directory{Store: openStore(t), Outbound: tt.out, Owners: owner("mallory")}
			_, err := runTool(t, d, "remember_agent", activities.RememberAgentInput{URL: tt.url, Name: "x"})
			msg, retryable := appError(t, err)
			if !strings.Contains(msg, tt.want) || retryable != tt.retryable {
				t.Errorf("error %q (retryable %t), want %q (retryable %t)", msg, retryable, tt.want, tt.retryable)
			}
			// The status of what answered is not told ("404" as a word: a
			// port such as 40433 in the URL is not a leak).
			for _, leak := range []string{"root-password", "internal dashboard", " 404", "404 ", "loopback", "dial", "169.254.169.254 is"} {
				if strings.Contains(msg, leak) || strings.HasSuffix(msg, "404") {
					t.Errorf("error %q shows %q", msg, leak)
				}
			}
		})
	}
	if n := canary.hits.Load(); n != 0 {
		t.Errorf("the loopback canary got %d requests, want 0", n)
	}
	if n := elsewhere.hits.Load(); n != 0 {
		t.Errorf("the redirect's target on another host got %d requests, want 0", n)
	}
}

// TestDirectoryTenants checks that an agent remembered by alice's task is
// alice's: not in mallory's list_agents, not callable by mallory's tasks by
// its name, while the operator's shared agents are everyone's (and reached
// on loopback although the policy allows public addresses only).
func TestDirectoryTenants(t *testing.T) {
	aliceAgent, aliceURL := agentOn(t, "127.0.0.1:0", "notes")
	peer, peerURL := agentOn(t, "127.0.0.1:0", "beta")
	store := openStore(t)
	if err := store.AddAgent(&models.RemoteAgent{Shared: true, Name: "beta", URL: peerURL}); err != nil {
		t.Fatal(err)
	}
	allowLoopback := outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")})
	publicOnly := outbound.New(outbound.Options{})
	dir := func(p string) *activities.Directory {
		return &activities.Directory{Store: store, Outbound: allowLoopback, Owners: owner(p)}
	}

	if _, err := runTool(t, dir("alice"), "remember_agent", activities.RememberAgentInput{URL: aliceURL}); err != nil {
		t.Fatalf("alice remembers notes: %v", err)
	}
	if _, err := runTool(t, dir("mallory"), "remember_agent", activities.RememberAgentInput{URL: aliceURL, Name: "beta"}); err == nil {
		t.Error("mallory remembered an agent under the shared name beta")
	}
	names := func(p string) []string {
		raw, err := runTool(t, dir(p), "list_agents", activities.ListAgentsInput{Format: "simple"})
		if err != nil {
			t.Fatal(err)
		}
		var out activities.ListAgentsOutput
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range out.Agents {
			got = append(got, a.Name)
		}
		return got
	}
	if diff := cmp.Diff([]string{"beta", "notes"}, names("alice")); diff != "" {
		t.Errorf("alice's list_agents (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"beta"}, names("mallory")); diff != "" {
		t.Errorf("mallory's list_agents (-want +got):\n%s", diff)
	}

	send := func(p, agent string) error {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivity(&activities.Remote{Directory: store, Outbound: publicOnly, Owners: owner(p)})
		_, err := env.ExecuteActivity(wire.ActivitySendRemoteMessage, wire.RemoteSendInput{
			Agent: agent, Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi")),
		})
		return err
	}
	before := aliceAgent.hits.Load()
	err := send("mallory", "notes")
	if msg, retryable := appError(t, err); retryable || !strings.Contains(msg, `agent "notes" is not in the agent directory`) {
		t.Errorf("mallory's call to notes = %q (retryable %t), want not in the directory", msg, retryable)
	}
	if n := aliceAgent.hits.Load() - before; n != 0 {
		t.Errorf("alice's agent got %d requests from mallory's call, want 0", n)
	}
	// alice's own agent obeys the policy: loopback is refused with public only.
	if msg, _ := appError(t, send("alice", "notes")); !strings.Contains(msg, "agent notes: fetch agent card: refused by the outbound policy") {
		t.Errorf("alice's call to notes, public only = %q, want refused by the outbound policy", msg)
	}
	if n := aliceAgent.hits.Load() - before; n != 0 {
		t.Errorf("alice's loopback agent got %d requests under a public-only policy, want 0", n)
	}
	// The operator's peer on loopback: trusted.
	for _, p := range []string{"alice", "mallory"} {
		if err := send(p, "beta"); err != nil {
			t.Errorf("%s's call to the shared beta: %v", p, err)
		}
	}
	if peer.hits.Load() == 0 {
		t.Error("the shared peer got no request")
	}
	// A URL given instead of a name is nobody's: the policy applies.
	if msg, _ := appError(t, send("alice", peerURL)); !strings.Contains(msg, "refused by the outbound policy") {
		t.Errorf("a call by URL to loopback = %q, want refused by the outbound policy", msg)
	}
}
