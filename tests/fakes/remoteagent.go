package fakes

import (
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// RemoteAgent is a fake remote A2A agent that is not a2aflow: a2a-go's own
// server (a2asrv) running an executor, over JSON-RPC, with a card of one
// skill. The tests' remote agents (ExtAgent; progressAgent, artifactAgent,
// a2aGoEcho in the tests) differ in their executor and their card's words.
type RemoteAgent struct {
	Name, Description string // the card's
	Skill, SkillDoes  string // its one skill's name (the ID is it lower-cased) and description
	Streaming         bool   // the card offers streaming
	// Token, when set, is the bearer token every request must carry, the
	// card's included; a request without it gets 401.
	Token string
}

// Serve serves exec on a loopback server closed when t ends.
func (ra RemoteAgent) Serve(t testing.TB, exec a2asrv.AgentExecutor) *httptest.Server {
	var srv *httptest.Server
	srv = httptest.NewServer(ra.Handler(exec, func() string { return srv.URL }))
	t.Cleanup(srv.Close)
	return srv
}

// Handler serves the card at the well-known path and exec at every other;
// url, asked at each card request, is where the server listens (known only
// once it does).
func (ra RemoteAgent) Handler(exec a2asrv.AgentExecutor, url func() string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2asrv.AgentCardProducerFn(func(context.Context) (*a2a.AgentCard, error) {
		return &a2a.AgentCard{
			Name: ra.Name, Version: "1.0.0", Description: ra.Description,
			SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(url(), a2a.TransportProtocolJSONRPC)},
			Capabilities:        a2a.AgentCapabilities{Streaming: ra.Streaming},
			DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills: []a2a.AgentSkill{{ID: strings.ToLower(ra.Skill), Name: ra.Skill, Description: ra.SkillDoes}},
		}, nil
	})))
	mux.Handle("/", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(exec)))
	if ra.Token == "" {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+ra.Token {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+ra.Name+`"`)
			http.Error(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"authentication required"}}`, http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// CancelsAtOnce is the Cancel half of an a2asrv.AgentExecutor for a remote
// agent that has nothing to stop: it answers a cancel with the canceled
// state.
type CancelsAtOnce struct{}

// Cancel answers canceled.
func (CancelsAtOnce) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}
