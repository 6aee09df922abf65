package client

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/internal/ptytest"
	"github.com/a2aproject/a2a-go/v2/a2a"
)

// authSender is an agent that asks for a token (auth-required), then
// completes; it records what it received.
type authSender struct {
	mu   sync.Mutex
	sent []string
}

func (f *authSender) Card(context.Context, string) (*a2a.AgentCard, error) {
	return &a2a.AgentCard{Name: "issues"}, nil
}

func (f *authSender) Send(_ context.Context, _ string, msg *a2a.Message) (a2a.SendMessageResult, error) {
	f.mu.Lock()
	f.sent = append(f.sent, partsText(msg.Parts))
	f.mu.Unlock()
	t := &a2a.Task{ID: "t1", ContextID: "c1"}
	if msg.TaskID == "" {
		t.Status = a2a.TaskStatus{State: a2a.TaskStateAuthRequired, Message: a2a.NewMessage(a2a.MessageRoleAgent,
			a2a.NewTextPart("A GitHub token, please."), a2a.NewDataPart(map[string]any{"service": "github", "authType": "bearer", "agent": "beta"}))}
		return t, nil
	}
	t.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("2 open issues."))}
	return t, nil
}

func (f *authSender) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sent...)
}

// TestREPLCredentialNotLogged: the line that answers a credential request
// reaches the agent, but not the --log-file, and no plain-text command is
// read into it (a secret may be "help").
func TestREPLCredentialNotLogged(t *testing.T) {
	const secret = "help"
	f := &authSender{}
	var out, log, errOut bytes.Buffer
	s := newREPLSession(f, "http://l", nil, &out)
	s.task("http://l").name = "issues"
	s.log = &log
	if err := s.run(context.Background(), strings.NewReader("List the issues\n"+secret+"\n:quit\n"), &errOut); err != nil {
		t.Fatal(err)
	}
	if got := f.received(); len(got) != 2 || got[1] != secret {
		t.Fatalf("the agent received %q, want the request, then the credential", got)
	}
	if !strings.Contains(out.String(), "issues [auth-required: A GitHub token, please.]> ") || !strings.Contains(out.String(), "2 open issues.") ||
		!strings.Contains(out.String(), "The next line is the github (for agent beta) credential") {
		t.Errorf("output:\n%s", out.String())
	}
	if strings.Contains(log.String(), secret) || !strings.Contains(log.String(), credentialNotLogged) {
		t.Errorf("the log holds the credential, or no placeholder for it:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "List the issues\n") || !strings.Contains(log.String(), ":quit\n") {
		t.Errorf("the log lacks the other lines typed:\n%s", log.String())
	}
}

// TestREPLCredentialWithoutEcho types at a terminal (a pseudo-terminal):
// the line answering a credential request is not echoed, the other lines
// are, and the terminal echoes again afterwards.
func TestREPLCredentialWithoutEcho(t *testing.T) {
	const secret = "ghp_TypedAtTheTerminal123"
	master, slave := ptytest.Open(t)
	var shown syncBuffer // what the terminal shows: the echo of what is typed
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := master.Read(buf)
			shown.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	f := &authSender{}
	var out, log, errOut syncBuffer
	s := newREPLSession(f, "http://l", nil, &out)
	s.task("http://l").name = "issues"
	s.log = &log
	done := make(chan error, 1)
	go func() { done <- s.run(context.Background(), slave, &errOut) }()

	waitUntil(t, "the prompt", func() bool { return strings.Contains(out.String(), "issues> ") })
	if _, err := master.WriteString("List the issues\n"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the credential's prompt and the echo off", func() bool {
		return strings.Contains(out.String(), "[auth-required: A GitHub token, please.]> ") && !ptytest.Echoing(t, slave)
	})
	if _, err := master.WriteString(secret + "\n"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the answer", func() bool { return strings.Contains(out.String(), "2 open issues.") })
	waitUntil(t, "the echo back on", func() bool { return ptytest.Echoing(t, slave) })
	if _, err := master.WriteString(":quit\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the REPL did not quit")
	}
	if got := f.received(); len(got) != 2 || got[1] != secret {
		t.Fatalf("the agent received %q, want the request, then the credential", got)
	}
	waitUntil(t, "the echo of :quit", func() bool { return strings.Contains(shown.String(), ":quit") })
	if strings.Contains(shown.String(), secret) || !strings.Contains(shown.String(), "List the issues") {
		t.Errorf("the terminal showed %q: want the request echoed, not the credential", shown.String())
	}
	if strings.Contains(log.String(), secret) || strings.Contains(out.String(), secret) {
		t.Errorf("the log or the output holds the credential")
	}
}

// TestReadCredential: `send --credential` reads the first line of a pipe,
// or a terminal's line without echo after its prompt.
func TestReadCredential(t *testing.T) {
	var prompt bytes.Buffer
	got, err := readCredential(strings.NewReader("  ghp_piped  \nnext\n"), &prompt, "Credential: ")
	if err != nil || got != "ghp_piped" || prompt.Len() != 0 {
		t.Errorf("from a pipe: %q, %v, prompt %q; want the first line, no prompt", got, err, prompt.String())
	}
	if _, err := readCredential(strings.NewReader("\n"), &prompt, "Credential: "); !errors.Is(err, errNoCredential) {
		t.Errorf("an empty line: %v, want errNoCredential", err)
	}

	master, slave := ptytest.Open(t)
	var shown syncBuffer
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := master.Read(buf)
			shown.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	type result struct {
		secret string
		err    error
	}
	done := make(chan result, 1)
	var promptOut syncBuffer
	go func() {
		s, err := readCredential(slave, &promptOut, "Credential: ")
		done <- result{s, err}
	}()
	waitUntil(t, "the prompt and the echo off", func() bool { return promptOut.String() == "Credential: " && !ptytest.Echoing(t, slave) })
	if _, err := master.WriteString("ghp_typed\n"); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.secret != "ghp_typed" {
		t.Fatalf("from a terminal: %q, %v", r.secret, r.err)
	}
	if !ptytest.Echoing(t, slave) {
		t.Error("the terminal does not echo after the credential was read")
	}
	if strings.Contains(shown.String(), "ghp_typed") {
		t.Errorf("the terminal showed %q", shown.String())
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10 s", what)
		}
	}
}
