package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// The fixed ports of scripts/demo-agents.sh: A2A API, Temporal frontend and
// Temporal UI of alpha, beta and gamma.
var demoPorts = map[string][3]int{
	"alpha": {4200, 7300, 8300},
	"beta":  {4201, 7301, 8301},
	"gamma": {4202, 7302, 8302},
}

// demo is a running scripts/demo-agents.sh.
type demo struct {
	t    *testing.T
	dir  string
	cmd  *exec.Cmd
	out  *harness.SyncBuffer
	done chan struct{}
}

func demoAPI(name string) string {
	return fmt.Sprintf("http://127.0.0.1:%d", demoPorts[name][0])
}

// portsInUse lists the demo's ports that cannot be listened on now.
func portsInUse() []string {
	var taken []string
	for _, name := range []string{"alpha", "beta", "gamma"} {
		for _, port := range demoPorts[name] {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				taken = append(taken, fmt.Sprintf("%d (%s)", port, name))
				continue
			}
			ln.Close()
		}
	}
	return taken
}

// startDemo runs the demo script on the test's binary and a fresh DEMO_DIR
// and waits until it reports the three instances healthy.
func startDemo(t *testing.T) *demo {
	t.Helper()
	d := &demo{t: t, dir: t.TempDir(), out: &harness.SyncBuffer{}, done: make(chan struct{})}
	d.cmd = exec.Command("bash", "../scripts/demo-agents.sh")
	d.cmd.Env = append(os.Environ(), "A2AFLOW_BIN="+harness.Binary(), "DEMO_DIR="+d.dir, "DEMO_LOG_LEVEL=info")
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	d.cmd.WaitDelay = 5 * time.Second
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("start scripts/demo-agents.sh: %v", err)
	}
	go func() { _ = d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		if t.Failed() {
			d.dumpLogs()
		}
		d.stop()
		d.killLeftovers()
	})
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(d.out.String(), "the three agents are healthy") {
		select {
		case <-d.done:
			t.Fatalf("demo-agents.sh exited before the three agents were healthy")
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("demo-agents.sh did not report the three agents healthy within 2 minutes")
		}
	}
	for _, name := range []string{"alpha", "beta", "gamma"} {
		harness.WaitHealthy(t, demoAPI(name))
	}
	return d
}

// pid reads NAME.pid; 0 when it is missing or unreadable.
func (d *demo) pid(name string) int {
	raw, err := os.ReadFile(filepath.Join(d.dir, name+".pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	return pid
}

// stop sends SIGTERM to the script, as Ctrl-C would, and waits for it to end.
func (d *demo) stop() {
	select {
	case <-d.done:
		return
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(45 * time.Second):
		d.t.Errorf("demo-agents.sh did not stop within 45 s of SIGTERM")
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}

// killLeftovers kills (-9) any a2aflow serve still named by a pid file, so a
// failed run does not leave the fixed ports taken.
func (d *demo) killLeftovers() {
	for _, name := range []string{"alpha", "beta", "gamma"} {
		pid := d.pid(name)
		if pid == 0 || !isA2AFlow(pid) {
			continue
		}
		d.t.Errorf("%s (pid %d) still running after the script ended: killing it", name, pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// isA2AFlow reports whether pid is a live a2aflow process (not a zombie,
// not a reused pid).
func isA2AFlow(pid int) bool {
	if !processAlive(pid) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err != nil || strings.Contains(string(cmdline), "a2aflow")
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// pid (comm) STATE ...; comm may hold spaces but not ") ".
		if i := strings.LastIndex(string(stat), ") "); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
	}
	return true
}

func (d *demo) dumpLogs() {
	d.t.Logf("output of demo-agents.sh:\n%s", d.out.String())
	for _, name := range []string{"alpha", "beta", "gamma", "supervisor"} {
		raw, err := os.ReadFile(filepath.Join(d.dir, name+".log"))
		if err != nil {
			d.t.Logf("%s.log: %v", name, err)
			continue
		}
		lines := strings.Split(string(raw), "\n")
		if len(lines) > 200 {
			lines = append([]string{fmt.Sprintf("... (%d lines before)", len(lines)-200)}, lines[len(lines)-200:]...)
		}
		d.t.Logf("%s.log:\n%s", name, strings.Join(lines, "\n"))
	}
}

// waitTask polls the task until it is in state with a status message
// containing text, and fails after timeout with the last task seen.
func waitTask(t *testing.T, ctx context.Context, c *a2aclient.Client, id a2a.TaskID, state a2a.TaskState, text string, timeout time.Duration) *a2a.Task {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last *a2a.Task
	var lastErr error
	for {
		task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err == nil {
			last = task
			if task.Status.State == state && strings.Contains(harness.StatusText(task), text) {
				return task
			}
			if task.Status.State.Terminal() && task.Status.State != state {
				t.Fatalf("task %s ended %s (%q), want %s %q", id, task.Status.State, harness.StatusText(task), state, text)
			}
		}
		lastErr = err
		if time.Now().After(deadline) {
			if last == nil {
				t.Fatalf("task %s: no answer within %s: %v", id, timeout, lastErr)
			}
			t.Fatalf("task %s is %s (%q) after %s, want %s with %q (last error %v)",
				id, last.Status.State, harness.StatusText(last), timeout, state, text, lastErr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// answer sends text to the task (blocking) and returns the task as answered.
func answer(t *testing.T, ctx context.Context, c *a2aclient.Client, id a2a.TaskID, text string) *a2a.Task {
	t.Helper()
	task := harness.Send(t, ctx, c, id, text)
	if id != "" && task.ID != id {
		t.Fatalf("answer %q to %s went to task %s", text, id, task.ID)
	}
	return task
}

// listAll lists every task of the agent client c, with artifacts, once the
// eventually consistent list holds want of them (or after 20 s).
func listAll(t *testing.T, ctx context.Context, c *a2aclient.Client, what string, want int) []*a2a.Task {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := c.ListTasks(ctx, &a2a.ListTasksRequest{IncludeArtifacts: true, PageSize: 50})
		if err != nil {
			t.Fatalf("ListTasks on %s: %v", what, err)
		}
		if len(resp.Tasks) == want || time.Now().After(deadline) {
			return resp.Tasks
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// bookingIn finds the travel booking among the task's artifacts: a JSON
// object with a destination, or a text that mentions one.
func bookingIn(task *a2a.Task) (data map[string]any, text string) {
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			if p == nil {
				continue
			}
			if m, ok := p.Data().(map[string]any); ok && m["destination"] != nil {
				return m, ""
			}
			if strings.Contains(p.Text(), "Lisbon") {
				text = p.Text()
			}
		}
	}
	return nil, text
}

func artifactsJSON(task *a2a.Task) string {
	raw, _ := json.Marshal(task.Artifacts)
	return string(raw)
}

// TestThreeAgents runs `make demo-agents`' script: a delegation over two hops
// (alpha's router -> beta's router -> gamma's travel agent) whose questions
// come back to the user at alpha, survives a kill -9 of beta in the middle of
// the conversation (the script restarts it), and completes once, with one
// booking.
func TestThreeAgents(t *testing.T) {
	if taken := portsInUse(); len(taken) > 0 {
		msg := fmt.Sprintf("the demo's fixed ports are in use here: %s (stop the running demo or whatever holds them)", strings.Join(taken, ", "))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	began := time.Now()
	d := startDemo(t)
	t.Logf("three agents healthy after %s", time.Since(began).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	alpha, _ := harness.NewClient(t, ctx, demoAPI("alpha")+"/agents/router")
	task := answer(t, ctx, alpha, "", "@beta @gamma-travel Book a flight")
	id := task.ID
	waitTask(t, ctx, alpha, id, a2a.TaskStateInputRequired, "Where to?", time.Minute)
	answer(t, ctx, alpha, id, "Lisbon")
	waitTask(t, ctx, alpha, id, a2a.TaskStateInputRequired, "On which date?", time.Minute)

	// kill -9 the middle agent; the script brings it back on the same data dir.
	oldPid := d.pid("beta")
	if oldPid == 0 {
		t.Fatalf("no pid in %s", filepath.Join(d.dir, "beta.pid"))
	}
	if err := syscall.Kill(oldPid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 beta (pid %d): %v", oldPid, err)
	}
	for deadline := time.Now().Add(10 * time.Second); processAlive(oldPid); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("beta (pid %d) still alive 10 s after kill -9", oldPid)
		}
	}
	killedAt := time.Now()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if pid := d.pid("beta"); pid != 0 && pid != oldPid && processAlive(pid) {
			if resp, err := http.Get(demoAPI("beta") + "/healthz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("beta not restarted and healthy within 90 s of kill -9 (pid file says %d)", d.pid("beta"))
		}
	}
	t.Logf("beta back (pid %d -> %d) %s after kill -9", oldPid, d.pid("beta"), time.Since(killedAt).Round(time.Millisecond))

	answer(t, ctx, alpha, id, "2026-12-24")
	waitTask(t, ctx, alpha, id, a2a.TaskStateInputRequired, "How many travellers?", time.Minute)
	answer(t, ctx, alpha, id, "2")
	task = waitTask(t, ctx, alpha, id, a2a.TaskStateCompleted, "", time.Minute)

	booking, text := bookingIn(task)
	switch {
	case booking != nil:
		t.Logf("alpha's booking artifact: %v", booking)
		if booking["destination"] != "Lisbon" || booking["travellers"] != float64(2) || booking["date"] != "2026-12-24" {
			t.Errorf("alpha's booking = %v, want Lisbon, 2026-12-24, 2 travellers", booking)
		}
	case text != "":
		t.Logf("alpha's booking artifact: %q", text)
		if !regexp.MustCompile(`\b2\b`).MatchString(text) {
			t.Errorf("alpha's booking text %q does not show 2 travellers", text)
		}
	default:
		t.Errorf("alpha's completed task has no booking artifact: %s", artifactsJSON(task))
	}

	// Exactly once: one task at alpha's and beta's routers, one at gamma's travel agent,
	// one booking in gamma's database, whatever the kill retried.
	if alphaTasks := listAll(t, ctx, alpha, "alpha's router", 1); len(alphaTasks) != 1 {
		t.Errorf("alpha's router has %d tasks (%v), want one", len(alphaTasks), taskIDs(alphaTasks))
	}
	beta, _ := harness.NewClient(t, ctx, demoAPI("beta")+"/agents/router")
	betaTasks := listAll(t, ctx, beta, "beta's router", 1)
	if len(betaTasks) != 1 || betaTasks[0].Status.State != a2a.TaskStateCompleted {
		t.Errorf("beta's router has %d tasks (%v), want one completed", len(betaTasks), taskIDs(betaTasks))
	}
	gammaTravel, _ := harness.NewClient(t, ctx, demoAPI("gamma")+"/agents/travel")
	gammaTasks := listAll(t, ctx, gammaTravel, "gamma's travel agent", 1)
	if len(gammaTasks) != 1 || gammaTasks[0].Status.State != a2a.TaskStateCompleted {
		t.Errorf("gamma's travel agent has %d tasks (%v), want one completed", len(gammaTasks), taskIDs(gammaTasks))
	} else if b := harness.BookingOf(t, gammaTasks[0]); b["destination"] != "Lisbon" || b["travellers"] != float64(2) {
		t.Errorf("gamma's booking = %v, want Lisbon for 2", b)
	}
	store, err := models.Open(filepath.Join(d.dir, "gamma", "a2aflow.db"))
	if err != nil {
		t.Fatalf("open gamma's database: %v", err)
	}
	var n int64
	err = store.DB().Table("bookings").Count(&n).Error
	_ = store.Close()
	if err != nil || n != 1 {
		t.Errorf("gamma's database holds %d bookings (%v), want 1", n, err)
	}

	// Ctrl-C (here SIGTERM) stops the three and frees the ports.
	stopAt := time.Now()
	pids := []int{d.pid("alpha"), d.pid("beta"), d.pid("gamma")}
	d.stop()
	if code := d.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("demo-agents.sh exited %d after SIGTERM, want 0", code)
	}
	t.Logf("demo stopped in %s", time.Since(stopAt).Round(time.Millisecond))
	for _, pid := range pids {
		if pid != 0 && processAlive(pid) {
			t.Errorf("a2aflow pid %d still alive after the script stopped", pid)
		}
	}
	if taken := portsInUse(); len(taken) > 0 {
		t.Errorf("ports still in use after the script stopped: %s", strings.Join(taken, ", "))
	}
	t.Logf("total %s", time.Since(began).Round(time.Millisecond))
}
