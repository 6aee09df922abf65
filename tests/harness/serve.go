package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Server is an a2aflow deployment under test: its URLs and processes.
type Server struct {
	APIURL       string // the A2A API: http://127.0.0.1:PORT
	TemporalAddr string // the embedded Temporal's frontend: 127.0.0.1:PORT
	UIURL        string // the Temporal UI
	DataDir      string
	procs        []*Proc
	program      string   // the binary serving: a2aflow's, or a program's
	env          []string // added to its environment
	serveArgs    []string
	t            testing.TB
}

// StartServe runs `a2aflow serve` on fresh ports over dataDir and waits until
// its API is ready. A port picked free may be taken before serve binds it
// (the kernel hands the same ephemeral ports to outgoing connections): serve
// then exits at once naming it, and StartServe tries other ports, up to
// three times.
func StartServe(t testing.TB, dataDir string, extra ...string) *Server {
	t.Helper()
	return StartServeEnv(t, dataDir, nil, extra...)
}

// StartServeEnv is StartServe with env added to the process's environment.
func StartServeEnv(t testing.TB, dataDir string, env []string, extra ...string) *Server {
	t.Helper()
	return StartServeProgram(t, binary, dataDir, env, extra...)
}

// StartServeProgram is StartServeEnv for a program built on a2aflow.Main
// other than the a2aflow command.
func StartServeProgram(t testing.TB, program, dataDir string, env []string, extra ...string) *Server {
	t.Helper()
	for attempt := 1; ; attempt++ {
		s := &Server{
			APIURL:       fmt.Sprintf("http://127.0.0.1:%d", FreePort(t)),
			TemporalAddr: fmt.Sprintf("127.0.0.1:%d", FreePort(t)),
			UIURL:        fmt.Sprintf("http://127.0.0.1:%d", FreePort(t)),
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
		p := StartProgram(t, program, filepath.Base(program)+" serve", env, s.serveArgs...)
		if err := p.tryOutput("a2aflow is serving", 2*time.Minute); err != nil {
			if attempt < 3 && strings.Contains(p.Out.String(), "address already in use") {
				t.Logf("a2aflow serve: a port was taken meanwhile, trying others: %s", strings.TrimSpace(p.Out.String()))
				continue
			}
			t.Fatal(err)
		}
		s.procs = append(s.procs, p)
		// Registered after the process's own cleanup, so it runs first,
		// while serve still answers.
		t.Cleanup(s.dumpNondeterministicHistories)
		WaitHealthy(t, s.APIURL)
		return s
	}
}

// Restart starts the serve process again on the same ports and data dir.
func (s *Server) Restart() {
	s.t.Helper()
	p := StartProgram(s.t, s.program, filepath.Base(s.program)+" serve", s.env, s.serveArgs...)
	s.procs = append(s.procs, p)
	p.WaitOutput("a2aflow is serving", 2*time.Minute)
	WaitHealthy(s.t, s.APIURL)
}

// Proc returns the latest serve process.
func (s *Server) Proc() *Proc { return s.procs[len(s.procs)-1] }

// dumpNondeterministicHistories prints, when the test failed, the history
// of every task whose workflow task failed on a non-determinism or a panic
// in serve's log: such a failure depends on the history's shape (which
// events landed in which workflow task), and without the history a rare one
// cannot be replayed and understood. The history is Temporal's JSON, one
// line, as `a2aflow replay FILE` takes it.
//
// A workflow task that panicked fails the test even if the task recovered
// (the SDK retries the workflow task): no a2aflow workflow may panic.
func (s *Server) dumpNondeterministicHistories() {
	for _, p := range s.procs {
		for _, line := range strings.Split(p.Out.String(), "\n") {
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
		for _, m := range nondeterminismRe.FindAllStringSubmatch(p.Out.String(), -1) {
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

// nondeterminismRe finds the workflow IDs on the SDK's log lines about a
// workflow task that failed replaying its history (TMPRL1100, a
// non-determinism error, or a panic in workflow code), in text or JSON logs.
var nondeterminismRe = regexp.MustCompile(`(?:TMPRL1100|[Nn]ondeterminis|Workflow panic).*?WorkflowID["=:]+"?([0-9A-Za-z._-]+)`)

// WaitHealthy polls GET /readyz until it answers 200: Temporal answers, the
// namespace exists and, for serve, the worker polls.
func WaitHealthy(t testing.TB, apiURL string) {
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

// Context is a context for a test's calls: canceled after 2 minutes, or
// when the test ends.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// SecretsKey is the secrets key (sealing every secret a2aflow keeps) the
// tests give separate api and worker processes, which refuse to start
// without one.
const SecretsKey = "dGVzdC1wdXNoLWtleS0zMi1ieXRlcy1sb25nLTEyMzQ="
