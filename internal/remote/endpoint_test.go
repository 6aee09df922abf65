package remote_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/remote"
)

// recorderOn is newRecorder listening on addr, such as "127.0.0.2:0".
func recorderOn(t *testing.T, addr string) *recorder {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	rec := newRecorder(t)
	rec.Close()
	rec.Server = httptest.NewUnstartedServer(rec.Config.Handler)
	rec.Listener = ln
	rec.Start()
	t.Cleanup(rec.Close)
	return rec
}

// TestKeyringHostBinding checks that credentials from the keyring go only
// to the hosts they are registered for: an entry whose auth reference names
// credentials of another host gets an error and sends nothing; credentials
// that name no host go only to their entry's host, never to another host
// the same client is asked to reach (a card naming another interface).
func TestKeyringHostBinding(t *testing.T) {
	agent := newRecorder(t)                   // 127.0.0.1
	elsewhere := recorderOn(t, "127.0.0.2:0") // another host
	port := agent.Listener.Addr().(*net.TCPAddr).Port
	path := writeKeyring(t, fmt.Sprintf(`{
		"partner":   {"bearer": "partner-token", "hosts": ["partner.example"]},
		"loopback":  {"bearer": "loopback-token", "hosts": ["127.0.0.1"]},
		"this-port": {"bearer": "port-token", "hosts": ["127.0.0.1:%d"]},
		"other-port": {"bearer": "other-port-token", "hosts": ["127.0.0.1:1"]},
		"unbound":   {"apiKey": {"value": "unbound-key", "in": "query"}}
	}`, port))
	k, err := remote.LoadKeyring(path)
	if err != nil {
		t.Fatal(err)
	}
	out := outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")})
	tests := []struct {
		ref      string
		wantAuth string // "" with wantErr
		wantErr  bool
	}{
		{"partner", "", true},
		{"other-port", "", true},
		{"loopback", "Bearer loopback-token", false},
		{"this-port", "Bearer port-token", false},
		{"unbound", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			before := len(agent.requests())
			e, err := k.Endpoint(agent.URL, true, tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := e.Clients(out)
			if tt.wantErr {
				var mismatch *remote.HostMismatchError
				if !errors.As(err, &mismatch) || !errors.Is(err, remote.ErrCredentialsHost) ||
					!strings.Contains(err.Error(), `credentials "`+tt.ref+`" are registered for`) {
					t.Fatalf("Clients = %v, want a HostMismatchError naming %s", err, tt.ref)
				}
				if remote.Reason(err) != remote.ReasonCredentials {
					t.Errorf("Reason = %q, want %q", remote.Reason(err), remote.ReasonCredentials)
				}
				if n := len(agent.requests()) - before; n != 0 {
					t.Errorf("the agent got %d requests, want none", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			get(t, cs.Card, agent.URL+"/.well-known/agent-card.json")
			s := agent.last(t)
			want(t, "Authorization", s.Header.Get("Authorization"), tt.wantAuth)
			if tt.ref == "unbound" {
				want(t, "api_key", s.Query.Get("api_key"), "unbound-key")
			}
			// The same client, asked to reach another host: nothing sent.
			_, err = cs.Calls.Get(elsewhere.URL + "/")
			if !errors.Is(err, remote.ErrCredentialsHost) {
				t.Errorf("request to another host = %v, want ErrCredentialsHost", err)
			}
		})
	}
	if n := len(elsewhere.requests()); n != 0 {
		t.Errorf("the other host got %d requests, want none", n)
	}
}

func TestKeyringHostsAreValidated(t *testing.T) {
	for _, hosts := range []string{`["http://partner.example"]`, `["partner.example/x"]`, `[""]`, `["a:b:c:"]`} {
		_, err := remote.LoadKeyring(writeKeyring(t, `{"p": {"bearer": "t", "hosts": `+hosts+`}}`))
		if err == nil || !strings.Contains(err.Error(), "hosts:") {
			t.Errorf("hosts %s: LoadKeyring = %v, want a hosts error", hosts, err)
		}
	}
}

// TestEndpointTrust checks that an endpoint the operator configured is
// reached on loopback under a public-only policy, and one a task gave is
// not; an OAuth2 token endpoint on loopback is trusted as configured.
func TestEndpointTrust(t *testing.T) {
	te := newTokenEndpoint(t, 3600)
	agent := newRecorder(t)
	out := outbound.New(outbound.Options{}) // public addresses only
	creds := &remote.Credentials{OAuth2: &remote.OAuth2{TokenURL: te.URL + "/token", ClientID: te.clientID, ClientSecret: te.clientSecret}}

	trusted, err := remote.Endpoint{URL: agent.URL, Trusted: true, Credentials: creds, AuthRef: "search"}.Clients(out)
	if err != nil {
		t.Fatal(err)
	}
	get(t, trusted.Calls, agent.URL+"/x")
	want(t, "Authorization", agent.last(t).Header.Get("Authorization"), "Bearer tok-1")

	untrusted, err := remote.Endpoint{URL: agent.URL}.Clients(out)
	if err != nil {
		t.Fatal(err)
	}
	before := len(agent.requests())
	_, err = untrusted.Card.Get(agent.URL + "/.well-known/agent-card.json")
	if !errors.Is(err, outbound.ErrForbiddenAddress) || remote.Reason(err) != remote.ReasonRefused {
		t.Fatalf("untrusted loopback agent = %v (reason %q), want refused", err, remote.Reason(err))
	}
	if n := len(agent.requests()) - before; n != 0 {
		t.Errorf("the untrusted agent got %d requests, want none", n)
	}
}

func TestReason(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"policy", fmt.Errorf("card request failed: %w", outbound.ErrForbiddenAddress), remote.ReasonRefused},
		{"redirect", fmt.Errorf("x: %w", outbound.ErrRedirectRefused), remote.ReasonRefused},
		{"too large", fmt.Errorf("failed to decode response: %w", outbound.ErrBodyTooLarge), remote.ReasonTooLarge},
		{"credentials", &remote.HostMismatchError{Ref: "r", Host: "h"}, remote.ReasonCredentials},
		{"invalid card", fmt.Errorf("agent card at x: %w", remote.ErrInvalidCard), remote.ReasonNotAnA2AAgent},
		{"card 404", &agentcard.ErrStatusNotOK{StatusCode: 404, Status: "404 Not Found"}, remote.ReasonNotAnA2AAgent},
		{"card 503", &agentcard.ErrStatusNotOK{StatusCode: 503, Status: "503"}, remote.ReasonUnreachable},
		{"card 401", &agentcard.ErrStatusNotOK{StatusCode: 401, Status: "401"}, "authentication required"},
		{"json-rpc 500", errors.New("unexpected HTTP status: 500 Internal Server Error"), remote.ReasonUnreachable},
		{"json-rpc 404", errors.New("unexpected HTTP status: 404 Not Found"), remote.ReasonNotAnA2AAgent},
		{"A2A error", fmt.Errorf("x: %w", a2a.ErrTaskNotFound), "task not found"},
		{"connection refused", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, remote.ReasonUnreachable},
		{"deadline", context.DeadlineExceeded, remote.ReasonUnreachable},
		{"garbage", errors.New("result violates A2A spec - could not determine type; data: <html>secret</html>"), remote.ReasonNotAnA2AAgent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := remote.Reason(tt.err); got != tt.want {
				t.Errorf("Reason(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

// TestEndpointOversizedCard checks that a card past its bound is refused
// with a clear error rather than read whole.
func TestEndpointOversizedCard(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"name":"big","description":"`)
		for i := 0; i < 2<<10; i++ {
			fmt.Fprint(w, strings.Repeat("x", 1<<10))
		}
		fmt.Fprint(w, `"}`)
	}))
	defer srv.Close()
	cs, err := remote.Endpoint{URL: srv.URL, Trusted: true}.Clients(outbound.New(outbound.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = remote.ResolveCard(context.Background(), cs.Card, srv.URL)
	if !errors.Is(err, outbound.ErrBodyTooLarge) || !strings.Contains(err.Error(), "agent card response is larger than the limit of 1 MiB") {
		t.Fatalf("ResolveCard = %v, want ErrBodyTooLarge naming the 1 MiB limit", err)
	}
}

func mustPolicy(t *testing.T, allow ...string) *outbound.Policy {
	t.Helper()
	p, err := outbound.ParsePolicy(allow)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
