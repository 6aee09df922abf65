package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/pushtoken"
)

// TestPushVerify: `push verify` accepts a notification as captured (raw
// request, or token and body) and refuses it with an edited body, for
// another webhook, or past its five minutes unless --at says when it came.
func TestPushVerify(t *testing.T) {
	pemKey, _ := cardsign.GenerateKey(cardsign.EdDSA)
	signer, err := cardsign.NewSigner(pemKey)
	if err != nil {
		t.Fatal(err)
	}
	keys := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(signer.JWKS())
	}))
	defer keys.Close()

	const hook = "https://hooks.example/a2a"
	body := `{"statusUpdate":{"taskId":"t-9","status":{"state":"TASK_STATE_COMPLETED"}}}`
	mint := func(at time.Time) string {
		tok, err := signer.SignJWT(pushtoken.New(keys.URL, hook, "t-9", 7, []byte(body), at), pushtoken.Type)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	rawRequest := func(token, body string) string {
		return fmt.Sprintf("POST /a2a?sig=x HTTP/1.1\r\nHost: hooks.example\r\nContent-Type: application/json\r\n"+
			"Authorization: Bearer client-secret\r\nA2A-Notification-JWT: %s\r\nContent-Length: %d\r\n\r\n%s", token, len(body), body)
	}
	earlier := time.Now().Add(-time.Hour)
	run := func(args ...string) (string, int) {
		cmd := newPushVerifyCmd()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(args)
		err := cmd.Execute()
		if err != nil {
			out.WriteString(err.Error())
		}
		return out.String(), cmdutil.ExitCode(err)
	}
	common := []string{"--issuer", keys.URL + "/", "--audience", hook + "?sig=x"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"raw request", []string{"--request", write("ok.http", rawRequest(mint(time.Now()), body))}, 0, "Verified: task t-9, event 7, signed by key " + signer.KeyID()},
		{"token and body", []string{"--token", mint(time.Now()), "--body", write("body.json", body)}, 0, "Verified: task t-9, event 7"},
		{"edited body", []string{"--request", write("edited.http", rawRequest(mint(time.Now()), strings.Replace(body, "COMPLETED", "FAILED", 1)))}, 1, "the body is not the one the token signs"},
		{"captured an hour ago", []string{"--request", write("old.http", rawRequest(mint(earlier), body))}, 1, "outside its time window"},
		{"captured an hour ago, --at then", []string{"--request", write("old.http", rawRequest(mint(earlier), body)), "--at", earlier.Add(time.Minute).UTC().Format(time.RFC3339)}, 0, "Verified"},
		{"another webhook", []string{"--request", write("ok.http", rawRequest(mint(time.Now()), body)), "--audience", "https://hooks.example/other"}, 1, "minted for another webhook"},
		{"no notification", nil, 1, "give the notification"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := run(append(append([]string{}, common...), tc.args...)...)
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, output:\n%s\nwant exit %d and %q", code, out, tc.code, tc.want)
			}
		})
	}
}
