package tests

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/api/a2abinding"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/tests/harness"
)

const (
	authSecret   = "e2e-hs256-secret-0123456789abcdef"
	authIssuer   = "https://idp.example.test"
	authAudience = "a2aflow-e2e"
)

// startAuthServe runs `a2aflow serve` with API keys (alice on the command
// line, bob from a file) and HS256 bearer JWTs (issuer and audience checked).
func startAuthServe(t *testing.T) *harness.Server {
	t.Helper()
	dir := t.TempDir()
	keysFile := filepath.Join(dir, "api-keys")
	if err := os.WriteFile(keysFile, []byte("# e2e keys\nbob=bob-key-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return harness.StartServe(t, filepath.Join(dir, "data"),
		"--api-keys", "alice=alice-key-0123456789",
		"--api-keys-file", keysFile,
		"--jwt-hs256-secret", authSecret,
		"--jwt-issuer", authIssuer,
		"--jwt-audience", authAudience,
	)
}

// hs256Token is a token the configured identity provider would issue to sub.
func hs256Token(t *testing.T, sub string) string {
	t.Helper()
	now := time.Now()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": sub, "iss": authIssuer, "aud": authAudience, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}).SignedString([]byte(authSecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// authClient returns an a2a-go client for the card at baseURL whose calls
// carry the credentials of the session attached to their context
// (a2aclient.AttachSessionID), as the card's security schemes say.
func authClient(t *testing.T, ctx context.Context, baseURL string, binding a2a.TransportProtocol, creds *a2aclient.InMemoryCredentialsStore) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, baseURL)
	if err != nil {
		t.Fatalf("resolve card at %s: %v", baseURL, err)
	}
	c, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}),
		a2aclient.WithCallInterceptors(&a2aclient.AuthInterceptor{Service: creds}))
	if err != nil {
		t.Fatalf("client for %s: %v", baseURL, err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

func TestAuthWithoutCredentials(t *testing.T) {
	s := startAuthServe(t)
	tests := []struct {
		method, path, body string
		wantStatus         int
	}{
		{"POST", "/", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`, 401},
		{"POST", "/agents/echo", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, 401},
		{"POST", "/message:send", `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, 401},
		{"GET", "/tasks/x", "", 401},
		{"GET", "/extendedAgentCard", "", 401},
		{"GET", "/.well-known/agent-card.json", "", 200},
		{"GET", "/agents/echo/.well-known/agent-card.json", "", 200},
		{"GET", "/healthz", "", 200},
	}
	wantChallenges := []string{`Bearer realm="a2aflow"`, `APIKey realm="a2aflow", header="X-API-Key"`}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, s.APIURL+tt.path, strings.NewReader(tt.body))
			req.Header.Set("A2A-Version", "1.0")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			var got []string
			if tt.wantStatus == http.StatusUnauthorized {
				got = resp.Header.Values("WWW-Authenticate")
				if diff := cmp.Diff(wantChallenges, got); diff != "" {
					t.Errorf("WWW-Authenticate (-want +got):\n%s", diff)
				}
			} else if c := resp.Header.Values("WWW-Authenticate"); len(c) > 0 {
				t.Errorf("public route answered WWW-Authenticate %v", c)
			}
		})
	}

	// A wrong key is refused the same way, and the bearer challenge says why
	// a token was refused.
	ctx := harness.Context(t)
	creds := a2aclient.NewInMemoryCredentialsStore()
	creds.Set("mallory", guard.APIKeySchemeName, "not-a-key")
	expired, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": "alice", "iss": authIssuer, "aud": authAudience, "exp": time.Now().Add(-time.Minute).Unix(),
	}).SignedString([]byte(authSecret))
	creds.Set("expired", guard.BearerSchemeName, a2aclient.AuthCredential(expired))
	c := authClient(t, ctx, s.APIURL, a2a.TransportProtocolHTTPJSON, creds)
	for _, session := range []a2aclient.SessionID{"mallory", "expired", "nobody"} {
		_, err := c.GetTask(a2aclient.AttachSessionID(ctx, session), &a2a.GetTaskRequest{ID: "x"})
		if !errors.Is(err, a2a.ErrUnauthenticated) {
			t.Errorf("GetTask as %s: err = %v, want ErrUnauthenticated", session, err)
		}
	}
}

// TestAuthTaskOwnership drives both bindings with the official a2a-go
// client: a task is its creator's; other principals get TaskNotFound for
// it whatever they try, and the task stays untouched.
func TestAuthTaskOwnership(t *testing.T) {
	s := startAuthServe(t)
	ctx := harness.Context(t)
	creds := a2aclient.NewInMemoryCredentialsStore()
	creds.Set("alice", guard.APIKeySchemeName, "alice-key-0123456789")
	creds.Set("bob", guard.APIKeySchemeName, "bob-key-0123456789")
	creds.Set("carol", guard.BearerSchemeName, a2aclient.AuthCredential(hs256Token(t, "carol")))
	alice := a2aclient.AttachSessionID(ctx, "alice")

	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) {
			c := authClient(t, ctx, s.APIURL, binding, creds)
			first := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Book a flight"))
			res, err := c.SendMessage(alice, &a2a.SendMessageRequest{Message: first})
			if err != nil {
				t.Fatalf("alice SendMessage: %v", err)
			}
			task, ok := res.(*a2a.Task)
			if !ok {
				t.Fatalf("SendMessage returned %T, want *a2a.Task", res)
			}
			harness.WantState(t, task, a2a.TaskStateInputRequired, "Where to?")

			for _, other := range []a2aclient.SessionID{"bob", "carol"} {
				octx := a2aclient.AttachSessionID(ctx, other)
				t.Run(string(other), func(t *testing.T) {
					if _, err := c.GetTask(octx, &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
						t.Errorf("GetTask: err = %v, want ErrTaskNotFound", err)
					}
					msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Mars"))
					msg.TaskID = task.ID
					if _, err := c.SendMessage(octx, &a2a.SendMessageRequest{Message: msg}); !errors.Is(err, a2a.ErrTaskNotFound) {
						t.Errorf("SendMessage to alice's task: err = %v, want ErrTaskNotFound", err)
					}
					if _, err := c.CancelTask(octx, &a2a.CancelTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
						t.Errorf("CancelTask: err = %v, want ErrTaskNotFound", err)
					}
					// The same messageId as alice's first message starts the
					// other principal's own task: message IDs are per owner.
					res, err := c.SendMessage(octx, &a2a.SendMessageRequest{Message: &a2a.Message{
						ID: first.ID, Role: a2a.MessageRoleUser, Parts: first.Parts,
					}})
					if err != nil {
						t.Fatalf("SendMessage reusing alice's messageId: %v", err)
					}
					if own := res.(*a2a.Task); own.ID == task.ID {
						t.Errorf("%s got alice's task %s back", other, task.ID)
					}
				})
			}

			// Alice's task did not see any of it.
			got, err := c.GetTask(alice, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatalf("alice GetTask: %v", err)
			}
			harness.WantState(t, got, a2a.TaskStateInputRequired, "Where to?")
			if len(got.History) != 2 {
				t.Errorf("alice's task has %d messages, want 2 (her request and the question)", len(got.History))
			}
			canceled, err := c.CancelTask(alice, &a2a.CancelTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatalf("alice CancelTask: %v", err)
			}
			harness.WantState(t, canceled, a2a.TaskStateCanceled, "")
		})
	}
}

// TestAuthExtendedCard checks the extended card: it names the caller, on
// both bindings, and the client can switch to it.
func TestAuthExtendedCard(t *testing.T) {
	s := startAuthServe(t)
	ctx := harness.Context(t)
	creds := a2aclient.NewInMemoryCredentialsStore()
	creds.Set("alice", guard.APIKeySchemeName, "alice-key-0123456789")
	creds.Set("carol", guard.BearerSchemeName, a2aclient.AuthCredential(hs256Token(t, "carol")))

	type caller struct {
		Agent, Principal, Scheme string
		HasExpiry                bool
	}
	tests := []struct {
		binding a2a.TransportProtocol
		path    string
		session a2aclient.SessionID
		want    caller
	}{
		{a2a.TransportProtocolJSONRPC, "", "alice", caller{"travel", "alice", "apiKey", false}},
		{a2a.TransportProtocolHTTPJSON, "", "carol", caller{"travel", "carol", "bearer", true}},
		{a2a.TransportProtocolHTTPJSON, "/agents/echo", "alice", caller{"echo", "alice", "apiKey", false}},
		{a2a.TransportProtocolJSONRPC, "/agents/echo", "carol", caller{"echo", "carol", "bearer", true}},
	}
	for _, tt := range tests {
		t.Run(string(tt.binding)+tt.path+" "+string(tt.session), func(t *testing.T) {
			c := authClient(t, ctx, s.APIURL+tt.path, tt.binding, creds)
			card, err := c.GetExtendedAgentCard(a2aclient.AttachSessionID(ctx, tt.session), &a2a.GetExtendedAgentCardRequest{})
			if err != nil {
				t.Fatalf("GetExtendedAgentCard: %v", err)
			}
			got := caller{Agent: card.Name}
			for _, ext := range card.Capabilities.Extensions {
				if ext.URI == a2abinding.CallerExtensionURI {
					got.Principal, _ = ext.Params["principal"].(string)
					got.Scheme, _ = ext.Params["scheme"].(string)
					_, got.HasExpiry = ext.Params["expiresAt"]
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				raw, _ := json.Marshal(card)
				t.Errorf("extended card caller (-want +got):\n%s\ncard: %s", diff, raw)
			}
			if err := c.UpdateCard(card); err != nil {
				t.Errorf("UpdateCard(extended card): %v", err)
			}
		})
	}
}
