package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// cliResult is what one run of the a2aflow binary printed and how it exited.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs the a2aflow binary with args and returns its output and exit code.
func runCLI(t *testing.T, args ...string) cliResult {
	t.Helper()
	return runCLIEnv(t, nil, args...)
}

// runCLIEnv is runCLI with env (KEY=VALUE) the only A2AFLOW_* settings.
func runCLIEnv(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	return runCLIWith(t, cliRun{env: env}, args...)
}

// cliRun is how runCLIWith runs the binary.
type cliRun struct {
	env   []string            // KEY=VALUE: the only A2AFLOW_* settings
	stdin string              // what it reads; "" for nothing (/dev/null)
	out   *harness.SyncBuffer // where its stdout goes, which the caller may read while it runs; nil for a buffer of its own
}

// runCLIWith is runCLI run as how says.
func runCLIWith(t *testing.T, how cliRun, args ...string) cliResult {
	t.Helper()
	cmd := harness.Command(args...)
	// Keep the developer's A2AFLOW_* settings out of the test.
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, how.env...)
	if how.stdin != "" {
		cmd.Stdin = strings.NewReader(how.stdin)
	}
	out := how.out
	if out == nil {
		out = &harness.SyncBuffer{}
	}
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &errOut
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("a2aflow %v did not finish in 90 s; stdout:\n%s\nstderr:\n%s", args, out.String(), errOut.String())
	}
	r := cliResult{stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("a2aflow %v: %v", args, err)
	}
	return r
}

// wantRun fails unless r exited with code and its stdout+stderr contains
// every one of wants.
func wantRun(t *testing.T, r cliResult, code int, wants ...string) {
	t.Helper()
	all := r.stdout + r.stderr
	if r.code != code {
		t.Fatalf("exit code = %d, want %d; output:\n%s", r.code, code, all)
	}
	for _, w := range wants {
		if !strings.Contains(all, w) {
			t.Fatalf("output lacks %q:\n%s", w, all)
		}
	}
}

var taskLine = regexp.MustCompile(`Task (\S+) \(context (\S+)\)`)

// taskIDOf returns the task ID and context ID that send/get printed.
func taskIDOf(t *testing.T, r cliResult) (string, string) {
	t.Helper()
	m := taskLine.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no task in output:\n%s", r.stdout)
	}
	return m[1], m[2]
}

func TestCLIClient(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	agent := s.APIURL

	t.Run("card", func(t *testing.T) {
		r := runCLI(t, "card", agent)
		wantRun(t, r, 0, "travel", "Streaming: true", "JSONRPC", "HTTP+JSON")
		r = runCLI(t, "card", "--json", agent)
		wantRun(t, r, 0)
		var card struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &card); err != nil || card.Name != "travel" {
			t.Errorf("card --json = %q (%v), want the travel card", r.stdout, err)
		}
		wantRun(t, runCLI(t, "card", s.APIURL+"/no-such-agent"), 1, "agent card at")
	})

	var completedID string
	t.Run("send travel flow", func(t *testing.T) {
		r := runCLI(t, "send", "--agent", agent, "Book a flight")
		wantRun(t, r, 2, "input-required", "The agent needs input: Where to?")
		id, contextID := taskIDOf(t, r)
		steps := []struct {
			answer string
			code   int
			want   string
		}{
			{"Lisbon", 2, "On which date? (YYYY-MM-DD)"},
			{"2026-12-24", 2, "How many travellers?"},
			{"2", 0, `"destination":"Lisbon"`},
		}
		for _, st := range steps {
			r = runCLI(t, "send", "--agent", agent, "--task", id, st.answer)
			wantRun(t, r, st.code, st.want)
		}
		wantRun(t, r, 0, "completed", "Artifact booking:", `"reference":"AF-`)
		if gotID, gotContext := taskIDOf(t, r); gotID != id || gotContext != contextID {
			t.Errorf("answers went to task %s/%s, want %s/%s", gotID, gotContext, id, contextID)
		}
		completedID = id

		// --json for scripts: the task itself.
		r = runCLI(t, "send", "--agent", agent, "--json", "Book a flight")
		wantRun(t, r, 2)
		var task struct {
			ID     string `json:"id"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &task); err != nil || task.ID == "" || task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
			t.Errorf("send --json = %s (%v), want an input-required task", r.stdout, err)
		}
	})

	t.Run("send stream", func(t *testing.T) {
		r := runCLI(t, "send", "--agent", agent, "--stream", "Book a flight")
		wantRun(t, r, 2, "[status] input-required: Where to?", "Answer with:")
		m := regexp.MustCompile(`\[task\] (\S+)`).FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("no [task] event in:\n%s", r.stdout)
		}
		id := m[1]
		runCLI(t, "send", "--agent", agent, "--task", id, "Lisbon")
		runCLI(t, "send", "--agent", agent, "--task", id, "2026-12-24")
		r = runCLI(t, "send", "--agent", agent, "--task", id, "--stream", "3")
		wantRun(t, r, 0, "[artifact] booking:", `"travellers":3`, "[status] completed")

		// --json: one event per line, each with its kind.
		r = runCLI(t, "send", "--agent", agent, "--stream", "--json", "Book a flight")
		wantRun(t, r, 2)
		var kinds []string
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var ev struct {
				Kind string `json:"kind"`
			}
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("stream line %q: %v", line, err)
			}
			kinds = append(kinds, ev.Kind)
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != "status-update" {
			t.Errorf("stream --json kinds = %v, want events ending with a status-update", kinds)
		}
	})

	t.Run("subscribe", func(t *testing.T) {
		id, _ := taskIDOf(t, runCLI(t, "send", "--agent", agent, "Book a flight"))
		done := make(chan cliResult, 1)
		out := &harness.SyncBuffer{}
		go func() { done <- runCLIWith(t, cliRun{out: out}, "subscribe", "--agent", agent, "--timeout", "20s", id) }()
		// The subscriber is connected once it printed the task: a fixed
		// pause was too short on a loaded machine.
		for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), "[task] "); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the subscriber printed no task within 30 s:\n%s", out.String())
			}
		}
		// The subscriber follows the task through its questions to its end.
		wantRun(t, runCLI(t, "send", "--agent", agent, "--task", id, "Lisbon"), 2)
		wantRun(t, runCLI(t, "send", "--agent", agent, "--task", id, "2026-12-24"), 2)
		wantRun(t, runCLI(t, "send", "--agent", agent, "--task", id, "1"), 0)
		wantRun(t, <-done, 0, "[status] input-required: On which date? (YYYY-MM-DD)",
			"[status] input-required: How many travellers?", "[artifact] booking:", "[status] completed")
	})

	t.Run("get", func(t *testing.T) {
		r := runCLI(t, "get", "--agent", agent, completedID)
		wantRun(t, r, 0, "completed", "History:", "user: Lisbon", "Artifact booking:")
		r = runCLI(t, "get", "--agent", agent, "--history", "0", completedID)
		wantRun(t, r, 0, "completed")
		if strings.Contains(r.stdout, "History:") {
			t.Errorf("get --history 0 printed a history:\n%s", r.stdout)
		}
	})

	t.Run("list", func(t *testing.T) {
		r := runCLI(t, "list", "--agent", agent, "--state", "completed")
		wantRun(t, r, 0, "TASK", completedID)
		if strings.Contains(r.stdout, "input-required") {
			t.Errorf("list --state completed shows waiting tasks:\n%s", r.stdout)
		}
		wantRun(t, runCLI(t, "list", "--agent", agent, "--state", "sleeping"), 1, "unknown task state")
	})

	t.Run("cancel", func(t *testing.T) {
		r := runCLI(t, "send", "--agent", agent, "Book a flight")
		id, _ := taskIDOf(t, r)
		wantRun(t, runCLI(t, "cancel", "--agent", agent, id), 0, "canceled")
		wantRun(t, runCLI(t, "cancel", "--agent", agent, id), 4, "task not cancelable")
		wantRun(t, runCLI(t, "get", "--agent", agent, id), 3, "canceled")
	})

	t.Run("errors", func(t *testing.T) {
		wantRun(t, runCLI(t, "get", "--agent", agent, "no-such-task"), 4, "task not found")
		wantRun(t, runCLI(t, "cancel", "--agent", agent, "no-such-task"), 4, "task not found")
		wantRun(t, runCLI(t, "send", "--agent", agent, "--task", completedID, "again"), 4, "unsupported operation")
	})

	// Without --agent, the client verbs talk to $A2AFLOW_AGENT, else to the
	// local a2aflow server (where $A2AFLOW_HTTP_ADDR, else :8080, has serve
	// listen), and say both ways when nothing answers there.
	t.Run("default agent", func(t *testing.T) {
		r := runCLIEnv(t, []string{"A2AFLOW_AGENT=" + agent}, "send", "Book a flight")
		wantRun(t, r, 2, "The agent needs input: Where to?")
		id, _ := taskIDOf(t, r)
		wantRun(t, runCLIEnv(t, []string{"A2AFLOW_AGENT=" + agent}, "get", id), 2, "input-required")
		wantRun(t, runCLIEnv(t, []string{"A2AFLOW_AGENT=" + agent}, "card"), 0, "travel")

		local := []string{"A2AFLOW_HTTP_ADDR=" + strings.TrimPrefix(agent, "http://")}
		wantRun(t, runCLIEnv(t, local, "send", "--task", id, "Lisbon"), 2, "On which date?")
		wantRun(t, runCLIEnv(t, local, "cancel", id), 0, "canceled")

		// The former variable still works, with a warning.
		wantRun(t, runCLIEnv(t, []string{"A2AFLOW_CLIENT_AGENT=" + agent}, "list", "--state", "canceled"), 0, id,
			"A2AFLOW_CLIENT_AGENT is deprecated, use A2AFLOW_AGENT")

		nobody := []string{"A2AFLOW_HTTP_ADDR=127.0.0.1:" + fmt.Sprint(harness.FreePort(t))}
		for _, args := range [][]string{{"send", "Book a flight"}, {"get", "no-such-task"}, {"card"}} {
			wantRun(t, runCLIEnv(t, nobody, args...), 1, "no A2A agent answers at http://127.0.0.1:", "--agent URL", "A2AFLOW_AGENT=URL")
		}
	})
}

func TestCLIAgentDirectory(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	db := filepath.Join(t.TempDir(), "directory.db")
	echo := s.APIURL + "/agents/echo"

	wantRun(t, runCLI(t, "agents", "add", "--database", db, echo), 0, "added echo")
	wantRun(t, runCLI(t, "agents", "add", "--database", db, echo), 1, "already in the directory")
	wantRun(t, runCLI(t, "agents", "add", "--database", db, s.APIURL+"/healthz"), 1, "agent card at")
	wantRun(t, runCLI(t, "agents", "add", "--database", db, "--name", "trips", "--auth-ref", "trips-key", s.APIURL), 0, "added trips (travel)")

	// Every command is a new process on the same file: the directory
	// survives restarts.
	r := runCLI(t, "agents", "list", "--database", db, "--json")
	wantRun(t, r, 0)
	var agents []struct {
		Name    string `json:"name"`
		URL     string `json:"url"`
		AuthRef string `json:"authRef"`
		Healthy bool   `json:"healthy"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &agents); err != nil {
		t.Fatalf("agents list --json = %s: %v", r.stdout, err)
	}
	type row struct {
		Name, URL, AuthRef string
		Healthy            bool
	}
	var got []row
	for _, a := range agents {
		got = append(got, row{a.Name, a.URL, a.AuthRef, a.Healthy})
	}
	want := []row{{"echo", echo, "", true}, {"trips", s.APIURL, "trips-key", true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("agents list (-want +got):\n%s", diff)
	}
	wantRun(t, runCLI(t, "agents", "list", "--database", db), 0, "NAME", "echo", echo, "trips-key")

	wantRun(t, runCLI(t, "agents", "refresh", "--database", db), 0, "echo", "trips")
	wantRun(t, runCLI(t, "agents", "refresh", "--database", db, "nobody"), 1, `no agent named "nobody"`)
	wantRun(t, runCLI(t, "agents", "remove", "--database", db, "trips"), 0, "removed trips")
	wantRun(t, runCLI(t, "agents", "remove", "--database", db, "trips"), 1, `no agent named "trips"`)

	// A server that is down: refresh records it unhealthy and says why.
	s.Proc().Stop()
	r = runCLI(t, "agents", "refresh", "--database", db)
	wantRun(t, r, 1, "1 of 1 agents unreachable")
	r = runCLI(t, "agents", "list", "--database", db)
	wantRun(t, r, 0, "echo", "false", "connection refused")
}
