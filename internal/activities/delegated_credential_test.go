package activities_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/remote"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/internal/workerenv"
)

// authAgent is a remote agent that asks for a token and, given one, greets
// its holder by it (an echo of the secret); a "bad" one is refused with a
// JSON-RPC error quoting the request (serveAuthAgent). It asks with input-required: a2a-go's server keeps an execution
// that is auth-required open, waiting for the credential out of band, and
// refuses messages meanwhile; the activity sends what the workflow gives
// it whatever the remote task's state.
type authAgent struct {
	mu       sync.Mutex
	received []string // the text of every message after the first
}

func (x *authAgent) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if ec.StoredTask == nil {
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			ask := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("A token, please."),
				a2a.NewDataPart(map[string]any{"service": "github", "authType": "bearer"}))
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, ask), nil)
			return
		}
		text := ec.Message.Parts[0].Text()
		x.mu.Lock()
		x.received = append(x.received, text)
		x.mu.Unlock()
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Welcome, "+text))), nil)
	}
}

func (x *authAgent) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

func (x *authAgent) got() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]string(nil), x.received...)
}

// serveAuthAgent serves x (JSON-RPC) on a loopback port and returns its URL.
func serveAuthAgent(t *testing.T, x *authAgent) string {
	t.Helper()
	var url string
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2asrv.AgentCardProducerFn(func(context.Context) (*a2a.AgentCard, error) {
		return &a2a.AgentCard{
			Name: "issues", Version: "1.0.0", Description: "Asks for a token.",
			SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC)},
			DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills: []a2a.AgentSkill{{ID: "list", Name: "List", Description: "Lists issues."}},
		}, nil
	})))
	rpc := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(x))
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte("bad-token")) {
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(body, &req)
			x.mu.Lock()
			x.received = append(x.received, "bad-token")
			x.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			quoted, _ := json.Marshal("refused: " + string(body))
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":%s}}`, req.ID, quoted)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rpc.ServeHTTP(w, r)
	}))
	srv := serveOn(t, "127.0.0.1:0", mux)
	url = srv.URL
	return url
}

// credentialsFor is a DelegatedCredentials holding one credential of the
// test activity environment's task, given for one agent's task.
type credentialsFor struct {
	ref, agent, remoteTask, secret string
}

func (c credentialsFor) DelegatedSecret(_ context.Context, taskID, ref, agent, remoteTask string) (string, error) {
	if taskID != "default-test-workflow-id" || ref != c.ref || agent != c.agent || remoteTask != c.remoteTask {
		return "", fmt.Errorf("%w: %s", workerenv.ErrNoCredential, ref)
	}
	return c.secret, nil
}

// TestSendDelegatedCredential: the answer to a remote task's auth-required
// question carries the secret the credential reference names, to that
// agent's task only, and only to an agent the operator configured (or over
// https); the remote agent's echo of the secret does not come back, nor
// does its error quoting it reach the log.
func TestSendDelegatedCredential(t *testing.T) {
	const token = "ghp_DelegatedSecret0123456789"
	x := &authAgent{}
	url := serveAuthAgent(t, x)
	store := openStore(t)
	if err := store.AddAgent(&models.RemoteAgent{Shared: true, Name: "issues", URL: url}); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	send := func(r *activities.Remote, in wire.RemoteSendInput) (*wire.RemoteTaskResult, error) {
		var suite testsuite.WorkflowTestSuite
		suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivity(r)
		val, err := env.ExecuteActivity(wire.ActivitySendRemoteMessage, in)
		if err != nil {
			return nil, err
		}
		var res wire.RemoteTaskResult
		if err := val.Get(&res); err != nil {
			t.Fatal(err)
		}
		return &res, nil
	}
	// The operator's agent on loopback; the same agent named by its URL,
	// which the policy lets the worker reach, but which nobody vouched for.
	loopback := outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")})
	remoteTask := func(agent string) a2a.TaskID {
		t.Helper()
		res, err := send(&activities.Remote{Directory: store, Outbound: loopback, Owners: owner("")},
			wire.RemoteSendInput{Agent: agent, Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("list the issues"))})
		if err != nil || res.Task == nil || res.Task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("first send to %s: %+v, %v; want a task asking for the token", agent, res, err)
		}
		return res.Task.ID
	}
	// sendAnswer sends in until the remote agent takes it: a2a-go's server
	// may refuse a message while its executor is still finishing the last
	// one (a retryable error, which Temporal would retry).
	sendAnswer := func(r *activities.Remote, in wire.RemoteSendInput) (*wire.RemoteTaskResult, error) {
		// Up to 10 s: 50 tries of 20 ms (1 s) is short for a loaded machine.
		for deadline := time.Now().Add(10 * time.Second); ; {
			res, err := send(r, in)
			var appErr *temporal.ApplicationError
			if err == nil || time.Now().After(deadline) || !errors.As(err, &appErr) || appErr.NonRetryable() {
				return res, err
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	answer := func(agent string, task a2a.TaskID, ref string) *a2a.Message {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Credential provided for github (agent "+agent+")."),
			a2a.NewDataPart(map[string]any{wire.CredentialRefKey: ref, "service": "github", "agent": agent}))
		m.TaskID = task
		return m
	}

	t.Run("to the operator's agent", func(t *testing.T) {
		task := remoteTask("issues")
		r := &activities.Remote{Directory: store, Outbound: loopback, Owners: owner(""),
			Credentials: credentialsFor{ref: "cred-1", agent: "issues", remoteTask: string(task), secret: token}}
		res, err := sendAnswer(r, wire.RemoteSendInput{Agent: "issues", Message: answer("issues", task, "cred-1"), Credential: "cred-1"})
		if err != nil {
			t.Fatalf("%v; log:\n%s", err, logs.String())
		}
		if got := x.got(); len(got) != 1 || got[0] != token {
			t.Fatalf("the agent received %q, want the token alone", got)
		}
		if res.Task == nil || res.Task.Status.State != a2a.TaskStateCompleted || wire.OneLine(partsText(res.Task.Status.Message), 200) != "Welcome, [redacted]" {
			t.Errorf("result %+v, want completed with the echo redacted", res.Task)
		}
	})

	tests := []struct {
		name     string
		agent    string // as the task names it
		creds    func(task a2a.TaskID) activities.DelegatedCredentials
		ref      string
		want     string
		retrying bool
	}{
		{"plain http to an agent named by URL", url, func(task a2a.TaskID) activities.DelegatedCredentials {
			return credentialsFor{ref: "cred-1", agent: url, remoteTask: string(task), secret: token}
		}, "cred-1", remote.ReasonSecretRefused, false},
		{"a credential given for another task", "issues", func(a2a.TaskID) activities.DelegatedCredentials {
			return credentialsFor{ref: "cred-1", agent: "issues", remoteTask: "another-task", secret: token}
		}, "cred-1", "was not given for task", false},
		{"a worker that keeps no credentials", "issues", func(a2a.TaskID) activities.DelegatedCredentials { return nil }, "cred-1", "keeps no credentials", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := remoteTask(tt.agent)
			before := len(x.got())
			r := &activities.Remote{Directory: store, Outbound: loopback, Owners: owner(""), Credentials: tt.creds(task)}
			_, err := send(r, wire.RemoteSendInput{Agent: tt.agent, Message: answer(tt.agent, task, tt.ref), Credential: tt.ref})
			msg, retryable := appError(t, err)
			if !strings.Contains(msg, tt.want) || retryable != tt.retrying {
				t.Errorf("error %q (retryable %t), want %q (retryable %t)", msg, retryable, tt.want, tt.retrying)
			}
			if strings.Contains(msg, token) {
				t.Errorf("the error quotes the token: %s", msg)
			}
			if got := x.got(); len(got) != before {
				t.Errorf("the agent received %q, want nothing more", got[before:])
			}
		})
	}

	t.Run("an agent's error quoting the token", func(t *testing.T) {
		const bad = "bad-token-0123456789"
		task := remoteTask("issues")
		r := &activities.Remote{Directory: store, Outbound: loopback, Owners: owner(""),
			Credentials: credentialsFor{ref: "cred-2", agent: "issues", remoteTask: string(task), secret: bad}}
		_, err := sendAnswer(r, wire.RemoteSendInput{Agent: "issues", Message: answer("issues", task, "cred-2"), Credential: "cred-2"})
		if msg, retryable := appError(t, err); retryable || !strings.Contains(msg, "invalid params") {
			t.Fatalf("send = %v, want the agent's refusal (invalid params)", err)
		}
		if got := x.got(); len(got) == 0 || got[len(got)-1] != "bad-token" {
			t.Errorf("the agent received %q, want the bad token last", got)
		}
		if !strings.Contains(logs.String(), "refused: ") {
			t.Errorf("the log does not show the agent's error:\n%s", logs.String())
		}
		if strings.Contains(err.Error(), bad) {
			t.Errorf("the error quotes the token: %v", err)
		}
	})
	if strings.Contains(logs.String(), token) || strings.Contains(logs.String(), "bad-token-0123456789") {
		t.Errorf("the activity log holds a token:\n%s", logs.String())
	}
}

// partsText joins a message's text parts.
func partsText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var texts []string
	for _, p := range m.Parts {
		if p != nil && p.Text() != "" {
			texts = append(texts, p.Text())
		}
	}
	return strings.Join(texts, " ")
}
