package harness

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Proc is one running a2aflow child process.
type Proc struct {
	t    testing.TB
	name string
	Cmd  *exec.Cmd     // started; its Process is the child
	Out  *SyncBuffer   // what it printed, stdout and stderr
	Done chan struct{} // closed once it exited
}

// Start runs `a2aflow args...` and stops it (SIGKILL) when the test ends.
func Start(t testing.TB, name string, env []string, args ...string) *Proc {
	t.Helper()
	return StartProgram(t, binary, name, env, args...)
}

// StartProgram is Start for a program other than the a2aflow binary: one
// built on the a2aflow package.
func StartProgram(t testing.TB, program, name string, env []string, args ...string) *Proc {
	t.Helper()
	p := &Proc{t: t, name: name, Out: &SyncBuffer{}, Done: make(chan struct{})}
	p.Cmd = exec.Command(program, args...)
	p.Cmd.Env = append(os.Environ(), env...)
	p.Cmd.Stdout, p.Cmd.Stderr = p.Out, p.Out
	dieWithTest(p.Cmd)
	if err := p.Cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { _ = p.Cmd.Wait(); close(p.Done) }()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, p.Out.String())
		}
	})
	return p
}

// Kill sends SIGKILL (kill -9) and waits for the process to be gone.
func (p *Proc) Kill() {
	select {
	case <-p.Done:
		return
	default:
	}
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.Done
}

// Stop sends SIGTERM and waits for a clean exit.
func (p *Proc) Stop() {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.Done:
	case <-time.After(30 * time.Second):
		p.t.Errorf("%s did not stop within 30s", p.name)
		p.Kill()
	}
}

// WaitOutput waits until the process printed want.
func (p *Proc) WaitOutput(want string, timeout time.Duration) {
	p.t.Helper()
	if err := p.tryOutput(want, timeout); err != nil {
		p.t.Fatal(err)
	}
}

// tryOutput waits until the process printed want, or says why not: it
// exited first, or the time passed.
func (p *Proc) tryOutput(want string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if strings.Contains(p.Out.String(), want) {
			return nil
		}
		select {
		case <-p.Done:
			if strings.Contains(p.Out.String(), want) {
				return nil
			}
			return fmt.Errorf("%s exited before printing %q:\n%s", p.name, want, p.Out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not print %q within %s:\n%s", p.name, want, timeout, p.Out.String())
}

// SyncBuffer is a bytes.Buffer that a process writes while a test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns all written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
