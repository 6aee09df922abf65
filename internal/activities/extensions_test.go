package activities_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// TestDelegationActivatesExtensions: a remote agent (a2a-go's own server)
// whose card requires an extension refuses a caller that does not activate
// it; a delegation from an agent that declares the extension activates it
// (a2aext's activator, from the card) and gets through.
func TestDelegationActivatesExtensions(t *testing.T) {
	const ext = "urn:a2aflow:test:passport"
	var url string
	caps := a2a.AgentCapabilities{Extensions: []a2a.AgentExtension{{URI: ext, Required: true}}}
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2asrv.AgentCardProducerFn(func(context.Context) (*a2a.AgentCard, error) {
		return &a2a.AgentCard{
			Name: "strict", Version: "1.0.0", Description: "Needs a passport.",
			SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC)},
			Capabilities:        caps,
			DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills: []a2a.AgentSkill{{ID: "do", Name: "Do", Description: "Does it."}},
		}, nil
	})))
	var seen []string
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get(a2a.SvcParamExtensions))
		a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(doneAgent{}, a2asrv.WithCapabilityChecks(&caps))).ServeHTTP(w, r)
	}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	url = srv.URL

	send := func(extensions []string) error {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivity(&activities.Remote{Outbound: outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")})})
		_, err := env.ExecuteActivity(wire.ActivitySendRemoteMessage, wire.RemoteSendInput{
			Agent: url, Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi")), Extensions: extensions,
		})
		return err
	}
	if err := send(nil); err == nil || !strings.Contains(strings.ToLower(err.Error()), "extension") {
		t.Errorf("a caller without the extension: %v, want refused for the extension", err)
	}
	if err := send([]string{"urn:a2aflow:test:other", ext}); err != nil {
		t.Errorf("a caller declaring the extension: %v", err)
	}
	if n := len(seen); n < 2 || seen[n-1] != ext {
		t.Errorf("A2A-Extensions the remote agent saw: %q, want the last to be %s (only what its card declares)", seen, ext)
	}
}

// signedAgent serves a card signed by key (its jku on the same server, with
// the key set there) and a2a-go's JSON-RPC endpoint; tamper edits the card
// after it is signed.
func signedAgent(t *testing.T, key *cardsign.Signer, tamper bool) string {
	t.Helper()
	var url string
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2asrv.AgentCardProducerFn(func(context.Context) (*a2a.AgentCard, error) {
		card := &a2a.AgentCard{
			Name: "signed", Version: "1.0.0", Description: "Signs its card.",
			SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC)},
			DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills: []a2a.AgentSkill{{ID: "do", Name: "Do", Description: "Does it."}},
		}
		sig, err := key.Sign(card, url+"/.well-known/jwks.json")
		if err != nil {
			return nil, err
		}
		card.Signatures = []a2a.AgentCardSignature{sig}
		if tamper {
			card.Description = "Signs its card!"
		}
		return card, nil
	})))
	mux.HandleFunc("/.well-known/jwks.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(key.JWKS())
	})
	mux.Handle("/", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(doneAgent{})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	url = srv.URL
	return url
}

// TestRequireSignedPeers: with RequireSignedPeers, a delegation goes to an
// agent whose card verifies and is refused, not retried, for an unsigned or
// tampered card.
func TestRequireSignedPeers(t *testing.T) {
	pemKey, err := cardsign.GenerateKey(cardsign.EdDSA)
	if err != nil {
		t.Fatal(err)
	}
	key, err := cardsign.NewSigner(pemKey)
	if err != nil {
		t.Fatal(err)
	}
	_, unsigned := agentOn(t, "127.0.0.1:0", "plain")
	send := func(url string) error {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivity(&activities.Remote{Outbound: outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")}), RequireSignedPeers: true})
		_, err := env.ExecuteActivity(wire.ActivitySendRemoteMessage, wire.RemoteSendInput{
			Agent: url, Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi")),
		})
		return err
	}
	if err := send(signedAgent(t, key, false)); err != nil {
		t.Errorf("a signed agent: %v", err)
	}
	for name, url := range map[string]string{"unsigned": unsigned, "tampered": signedAgent(t, key, true)} {
		msg, retryable := appError(t, send(url))
		if retryable || !strings.Contains(msg, "does not verify") || !strings.Contains(msg, "--require-signed-peers") {
			t.Errorf("%s agent: %q (retryable %t), want refused: does not verify, --require-signed-peers", name, msg, retryable)
		}
	}
}
