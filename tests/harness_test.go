package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is the a2aflow binary built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "a2aflow-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "a2aflow")
	build := exec.Command("go", "build", "-o", binary, "../cmd/a2aflow")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build a2aflow:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// proc is one running a2aflow child process.
type proc struct {
	t    testing.TB
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

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

// start runs `a2aflow args...` and stops it (SIGKILL) when the test ends.
func start(t testing.TB, name string, env []string, args ...string) *proc {
	t.Helper()
	return startProgram(t, binary, name, env, args...)
}

// startProgram is start for a program other than the a2aflow binary: one
// built on the a2aflow package.
func startProgram(t testing.TB, program, name string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(program, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	dieWithTest(p.cmd)
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, p.out.String())
		}
	})
	return p
}

// kill sends SIGKILL (kill -9) and waits for the process to be gone.
func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop sends SIGTERM and waits for a clean exit.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.t.Errorf("%s did not stop within 30s", p.name)
		p.kill()
	}
}

// waitOutput waits until the process printed want.
func (p *proc) waitOutput(want string, timeout time.Duration) {
	p.t.Helper()
	if err := p.tryOutput(want, timeout); err != nil {
		p.t.Fatal(err)
	}
}

// tryOutput waits until the process printed want, or says why not: it
// exited first, or the time passed.
func (p *proc) tryOutput(want string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if strings.Contains(p.out.String(), want) {
			return nil
		}
		select {
		case <-p.done:
			if strings.Contains(p.out.String(), want) {
				return nil
			}
			return fmt.Errorf("%s exited before printing %q:\n%s", p.name, want, p.out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not print %q within %s:\n%s", p.name, want, timeout, p.out.String())
}

// server is an a2aflow deployment under test: its URLs and processes.
type server struct {
	APIURL       string
	TemporalAddr string
	UIURL        string
	DataDir      string
	procs        []*proc
	program      string   // the binary serving: a2aflow's, or a program's
	env          []string // added to its environment
	serveArgs    []string
	t            testing.TB
}

// startServe runs `a2aflow serve` on fresh ports over dataDir and waits until
// its API is ready. A port picked free may be taken before serve binds it
// (the kernel hands the same ephemeral ports to outgoing connections): serve
// then exits at once naming it, and startServe tries other ports, up to
// three times.
func startServe(t testing.TB, dataDir string, extra ...string) *server {
	t.Helper()
	return startServeEnv(t, dataDir, nil, extra...)
}

// startServeEnv is startServe with env added to the process's environment.
func startServeEnv(t testing.TB, dataDir string, env []string, extra ...string) *server {
	t.Helper()
	return startServeProgram(t, binary, dataDir, env, extra...)
}

// startServeProgram is startServeEnv for a program built on a2aflow.Main
// other than the a2aflow command.
func startServeProgram(t testing.TB, program, dataDir string, env []string, extra ...string) *server {
	t.Helper()
	for attempt := 1; ; attempt++ {
		s := &server{
			APIURL:       fmt.Sprintf("http://127.0.0.1:%d", freePort(t)),
			TemporalAddr: fmt.Sprintf("127.0.0.1:%d", freePort(t)),
			UIURL:        fmt.Sprintf("http://127.0.0.1:%d", freePort(t)),
			DataDir:      dataDir,
			program:      program,
			env:          env,
			t:            t,
		}
		s.serveArgs = append([]string{"serve",
			"--http-addr", strings.TrimPrefix(s.APIURL, "http://"),
			"--temporal-addr", s.TemporalAddr,
			"--ui-addr", strings.TrimPrefix(s.UIURL, "http://"),
			"--data-dir", dataDir,
			"--log-level", "warn",
		}, extra...)
		p := startProgram(t, program, filepath.Base(program)+" serve", env, s.serveArgs...)
		if err := p.tryOutput("a2aflow is serving", 2*time.Minute); err != nil {
			if attempt < 3 && strings.Contains(p.out.String(), "address already in use") {
				t.Logf("a2aflow serve: a port was taken meanwhile, trying others: %s", strings.TrimSpace(p.out.String()))
				continue
			}
			t.Fatal(err)
		}
		s.procs = append(s.procs, p)
		// Registered after the process's own cleanup, so it runs first,
		// while serve still answers.
		t.Cleanup(s.dumpNondeterministicHistories)
		waitHealthy(t, s.APIURL)
		return s
	}
}

// nondeterminismRe finds the workflow IDs on the SDK's log lines about a
// workflow task that failed replaying its history (TMPRL1100, a
// non-determinism error, or a panic in workflow code), in text or JSON logs.
var nondeterminismRe = regexp.MustCompile(`(?:TMPRL1100|[Nn]ondeterminis|Workflow panic).*?WorkflowID["=:]+"?([0-9A-Za-z._-]+)`)

// dumpNondeterministicHistories prints, when the test failed, the history
// of every task whose workflow task failed on a non-determinism or a panic
// in serve's log: such a failure depends on the history's shape (which
// events landed in which workflow task), and without the history a rare one
// cannot be replayed and understood. The history is Temporal's JSON, one
// line, as `a2aflow replay FILE` takes it.
//
// A workflow task that panicked fails the test even if the task recovered
// (the SDK retries the workflow task): no a2aflow workflow may panic.
func (s *server) dumpNondeterministicHistories() {
	for _, p := range s.procs {
		for _, line := range strings.Split(p.out.String(), "\n") {
			if strings.Contains(line, "Workflow panic") {
				s.t.Errorf("a workflow task panicked in %s: %s", p.name, line)
				break
			}
		}
	}
	if !s.t.Failed() {
		return
	}
	seen := map[string]bool{}
	for _, p := range s.procs {
		for _, m := range nondeterminismRe.FindAllStringSubmatch(p.out.String(), -1) {
			id := m[1]
			if seen[id] {
				continue
			}
			seen[id] = true
			dir, err := os.MkdirTemp("", "a2aflow-history-")
			if err != nil {
				s.t.Logf("history of %s: %v", id, err)
				continue
			}
			out, err := exec.Command(binary, "replay", "--temporal-addr", s.TemporalAddr, "--data-dir", s.DataDir,
				"--task", id, "--save", dir).CombinedOutput()
			if b, rerr := os.ReadFile(filepath.Join(dir, id+".history.json")); rerr == nil {
				var compact bytes.Buffer
				if json.Compact(&compact, b) == nil {
					b = compact.Bytes()
				}
				s.t.Logf("history of task %s, whose workflow task failed (replay: %s):\n%s", id, strings.TrimSpace(string(out)), b)
			} else {
				s.t.Logf("history of task %s not saved: %v %v: %s", id, err, rerr, out)
			}
			_ = os.RemoveAll(dir)
		}
	}
}

// restart starts the serve process again on the same ports and data dir.
func (s *server) restart() {
	s.t.Helper()
	p := startProgram(s.t, s.program, filepath.Base(s.program)+" serve", s.env, s.serveArgs...)
	s.procs = append(s.procs, p)
	p.waitOutput("a2aflow is serving", 2*time.Minute)
	waitHealthy(s.t, s.APIURL)
}

// proc returns the latest serve process.
func (s *server) proc() *proc { return s.procs[len(s.procs)-1] }

// waitHealthy polls GET /readyz until it answers 200: Temporal answers, the
// namespace exists and, for serve, the worker polls.
func waitHealthy(t testing.TB, apiURL string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		resp, err := http.Get(apiURL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s/readyz did not answer 200 within a minute", apiURL)
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// testSecretsKey is the secrets key (sealing every secret a2aflow keeps) the tests give
// separate api and worker processes, which refuse to start without one.
const testSecretsKey = "dGVzdC1wdXNoLWtleS0zMi1ieXRlcy1sb25nLTEyMzQ="
