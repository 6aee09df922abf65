package tests

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

// remoteAgent is a fake remote A2A agent that is not a2aflow: a2a-go's own
// server (a2asrv) running an executor, over JSON-RPC, with a card of one
// skill. The tests' remote agents (extAgent, progressAgent, artifactAgent,
// a2aGoEcho) differ in their executor and their card's words only.
type remoteAgent struct {
	name, description string // the card's
	skill, skillDoes  string // its one skill's name (the ID is it lower-cased) and description
	streaming         bool   // the card offers streaming
	// token, when set, is the bearer token every request must carry, the
	// card's included; a request without it gets 401.
	token string
}

// serve serves exec on a loopback server closed when t ends.
func (ra remoteAgent) serve(t testing.TB, exec a2asrv.AgentExecutor) *httptest.Server {
	var srv *httptest.Server
	srv = httptest.NewServer(ra.handler(exec, func() string { return srv.URL }))
	t.Cleanup(srv.Close)
	return srv
}

// handler serves the card at the well-known path and exec at every other;
// url, asked at each card request, is where the server listens (known only
// once it does).
func (ra remoteAgent) handler(exec a2asrv.AgentExecutor, url func() string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2asrv.AgentCardProducerFn(func(context.Context) (*a2a.AgentCard, error) {
		return &a2a.AgentCard{
			Name: ra.name, Version: "1.0.0", Description: ra.description,
			SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(url(), a2a.TransportProtocolJSONRPC)},
			Capabilities:        a2a.AgentCapabilities{Streaming: ra.streaming},
			DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills: []a2a.AgentSkill{{ID: strings.ToLower(ra.skill), Name: ra.skill, Description: ra.skillDoes}},
		}, nil
	})))
	mux.Handle("/", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(exec)))
	if ra.token == "" {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+ra.token {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+ra.name+`"`)
			http.Error(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"authentication required"}}`, http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// cancelsAtOnce is the Cancel half of an a2asrv.AgentExecutor for a remote
// agent that has nothing to stop: it answers a cancel with the canceled
// state.
type cancelsAtOnce struct{}

func (cancelsAtOnce) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}
