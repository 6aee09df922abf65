package tests

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/oauthlogin/oauthtest"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// jwtPrefix starts every JWT zitadel signs ({"alg":"RS256",...} in
// base64url): no file or log of alpha may hold one.
const jwtPrefix = "eyJhbGciOi"

// TestOAuthLoginDelegation: beta is an a2aflow server whose agents take
// bearer JWTs of an OpenID provider (zitadel's OP, in this test). The
// operator of alpha logs in to beta once with `a2aflow agents login beta`
// (authorization code + PKCE, the browser played by the test), and then
// alpha's router delegates to beta's echo agent with the stored token, and
// `a2aflow send --auth-ref beta` calls it too. The access token expires and
// is refreshed (counted at the provider); once the provider revokes the
// refresh token, the delegation fails saying to run agents login again. No
// token is in alpha's files or logs.
func TestOAuthLoginDelegation(t *testing.T) {
	op := oauthtest.Start(t, 40*time.Second) // refreshed 10 s before its expiry: at about 29 s
	beta := harness.StartServe(t, t.TempDir(), "--jwks-url", op.JWKSURL(), "--jwt-issuer", op.Issuer)
	alphaDir := t.TempDir()
	alpha := harness.StartServe(t, alphaDir, "--log-level", "debug", "--peer", "beta="+beta.APIURL+"/agents/echo")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, _ := harness.NewClient(t, ctx, alpha.APIURL+"/agents/router")
	env := []string{"A2AFLOW_DATA_DIR=" + alphaDir}

	// Without a login beta refuses the CLI.
	r := runCLIEnv(t, env, "send", "--agent", beta.APIURL+"/agents/echo", "hello")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "authentication required") {
		t.Errorf("send without a login: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}

	// The login: beta's card declares its issuer as an openIdConnect scheme
	// (its --jwt-issuer), which the command discovers; it prints the URL,
	// the "browser" follows it.
	p := harness.Start(t, "agents login", env, "agents", "login", "beta", "--client-id", oauthtest.ClientID)
	p.WaitOutput("/auth?", 30*time.Second)
	var authURL string
	for _, line := range strings.Split(p.Out.String(), "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, op.Issuer+"/auth?") {
			authURL = l
		}
	}
	for _, want := range []string{"code_challenge_method=S256", "code_challenge=", "redirect_uri=http%3A%2F%2F127.0.0.1%3A", "offline_access"} {
		if !strings.Contains(authURL, want) {
			t.Errorf("authorization URL %q lacks %s", authURL, want)
		}
	}
	if err := op.Browser()(authURL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done:
	case <-time.After(30 * time.Second):
		t.Fatal("agents login did not finish")
	}
	if !strings.Contains(p.Out.String(), "as its card's scheme openIdConnect says") {
		t.Errorf("agents login did not use the card's openIdConnect scheme:\n%s", p.Out.String())
	}
	if code := p.Cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(p.Out.String(), "directory agent beta now calls with it") {
		t.Fatalf("agents login: exit %d\n%s", code, p.Out.String())
	}
	loggedIn := time.Now()
	r = runCLIEnv(t, env, "agents", "logins")
	if r.code != 0 || !strings.Contains(r.stdout, "beta") || strings.Contains(r.stdout, jwtPrefix) {
		t.Errorf("agents logins: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}

	// Delegation with the stored token, and the CLI with it.
	delegate := func(text string) *a2a.Task {
		t.Helper()
		task := harness.Send(t, ctx, c, "", "@beta "+text)
		deadline := time.Now().Add(time.Minute)
		for !task.Status.State.Terminal() && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			var err error
			if task, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); err != nil {
				t.Fatal(err)
			}
		}
		return task
	}
	echoed := func(task *a2a.Task, text string) bool {
		raw, _ := json.Marshal(task)
		return task.Status.State == a2a.TaskStateCompleted && strings.Contains(string(raw), text)
	}
	if task := delegate("hello over oauth"); !echoed(task, "hello over oauth") {
		t.Fatalf("delegation with the login: %s %q", task.Status.State, harness.StatusText(task))
	}
	r = runCLIEnv(t, env, "send", "--agent", beta.APIURL+"/agents/echo", "--auth-ref", "beta", "hi from the cli")
	if r.code != 0 || !strings.Contains(r.stdout, "hi from the cli") {
		t.Errorf("send --auth-ref beta: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
	if got := op.Grants("authorization_code"); got != 1 {
		t.Errorf("codes redeemed = %d, want 1", got)
	}
	if got := op.Grants("refresh_token"); got != 0 {
		t.Errorf("refreshes before expiry = %d, want 0", got)
	}

	// The access token expires (refreshed 10 s before, as oauth2 does):
	// the next delegation refreshes it once, and beta takes the new one.
	op.SetAccessTTL(15 * time.Second) // the refreshed one is due after about 4 s
	time.Sleep(time.Until(loggedIn.Add(31 * time.Second)))
	if task := delegate("after the expiry"); !echoed(task, "after the expiry") {
		t.Fatalf("delegation after the expiry: %s %q", task.Status.State, harness.StatusText(task))
	}
	if got := op.Grants("refresh_token"); got != 1 {
		t.Errorf("refreshes after one expiry = %d, want 1", got)
	}
	r = runCLIEnv(t, env, "agents", "logins", "--json")
	if !strings.Contains(r.stdout, `"Refreshes": 1`) {
		t.Errorf("agents logins after the refresh: %s%s", r.stdout, r.stderr)
	}

	// Revoked at the provider: the next refresh is refused, and the task
	// fails saying to log in again; so does the CLI.
	if err := op.RevokeAll(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5500 * time.Millisecond)
	task := delegate("after the revocation")
	if task.Status.State != a2a.TaskStateFailed || !strings.Contains(harness.StatusText(task), "agents login beta") {
		t.Errorf("delegation after the revocation: %s %q, want failed saying to run agents login beta", task.Status.State, harness.StatusText(task))
	}
	r = runCLIEnv(t, env, "send", "--agent", beta.APIURL+"/agents/echo", "--auth-ref", "beta", "again")
	if r.code == 0 || !strings.Contains(r.stderr, "run `a2aflow agents login beta` again") {
		t.Errorf("send after the revocation: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
	if got := op.Refused("refresh_token"); got < 1 {
		t.Errorf("refused refreshes = %d, want at least 1", got)
	}

	// No token in alpha's files (its database, Temporal's, payloads) nor in
	// its debug log.
	_ = filepath.Walk(alphaDir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		if raw, _ := os.ReadFile(path); strings.Contains(string(raw), jwtPrefix) {
			t.Errorf("%s holds a JWT in clear", path)
		}
		return nil
	})
	if strings.Contains(alpha.Proc().Out.String(), jwtPrefix) {
		t.Error("alpha's log holds a JWT")
	}
}
