package tests

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// runREPL runs `a2aflow repl` with stdin a pipe holding input and returns
// its stdout, stderr and exit code.
func runREPL(t *testing.T, input string, args ...string) (string, string, int) {
	t.Helper()
	r := runCLIWith(t, cliRun{stdin: input}, append([]string{"repl"}, args...)...)
	return r.stdout, r.stderr, r.code
}

func TestREPL(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	dataDir := t.TempDir()
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{"travel booking", "Book a flight\nLisbon\n2026-12-24\n2\n:card\n:quit\n", []string{
			"Agent asks: Where to?",
			"[input-required: Where to?]> ",
			"[input-required: On which date? (YYYY-MM-DD)]> ",
			"[input-required: How many travellers?]> ",
			": completed",
			"Artifact booking:", `"destination":"Lisbon"`,
			"Skills:", "travel> travel ",
		}},
		{"connect echo", ":connect " + s.APIURL + "/agents/echo\nhello\n:servers\n:disconnect\n:quit\n", []string{
			"Connected to echo",
			"echo> Task", "Agent: hello",
			"0 local " + s.APIURL,
			"Back to the local agent",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runREPL(t, tt.input, "--agent", s.APIURL, "--data-dir", dataDir)
			if code != 0 {
				t.Fatalf("exit code %d; stdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q; stdout:\n%s\nstderr:\n%s", w, out, errOut)
				}
			}
		})
	}
}

// replProc is a running `a2aflow repl` driven line by line through its
// stdin, as a user at a terminal would: each line is sent once the REPL has
// answered the one before.
type replProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *harness.SyncBuffer // stdout and stderr, in order
	done  chan struct{}
	mark  int // the output before mark was matched already
}

func startREPL(t *testing.T, args ...string) *replProc {
	t.Helper()
	r := &replProc{t: t, out: &harness.SyncBuffer{}, done: make(chan struct{})}
	r.cmd = harness.Command(append([]string{"repl"}, args...)...)
	// The agents a REPL serves (:listen) remember agents of this machine
	// (remember_agent on loopback), which the outbound policy allows only
	// when told: a developer's REPL opts in.
	r.cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "A2AFLOW_OUTBOUND_ALLOW_HOSTS=loopback"}
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	var err error
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = r.cmd.Process.Kill()
			<-r.done
		}
		if t.Failed() {
			t.Logf("repl output:\n%s", r.out.String())
		}
	})
	return r
}

func (r *replProc) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.stdin, line+"\n"); err != nil {
		r.t.Fatalf("send %q: %v", line, err)
	}
}

// expect waits until the output after the last match matches re, and
// returns the match with its groups.
func (r *replProc) expect(re string, timeout time.Duration) []string {
	r.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(timeout)
	for {
		out := r.out.String()
		if loc := rx.FindStringSubmatchIndex(out[r.mark:]); loc != nil {
			var groups []string
			for i := 0; i < len(loc); i += 2 {
				if loc[i] < 0 {
					groups = append(groups, "")
					continue
				}
				groups = append(groups, out[r.mark+loc[i]:r.mark+loc[i+1]])
			}
			r.mark += loc[1]
			return groups
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("repl did not print %q within %s; output since the last match:\n%s", re, timeout, out[r.mark:])
		}
		select {
		case <-r.done:
			if !rx.MatchString(r.out.String()[r.mark:]) {
				r.t.Fatalf("repl exited before printing %q; output since the last match:\n%s", re, r.out.String()[r.mark:])
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// do sends line and waits for the next prompt, returning what the REPL
// printed in between.
func (r *replProc) do(line string, timeout time.Duration) string {
	r.t.Helper()
	r.send(line)
	return r.expect(`(?s)^(.*?)\S*( \[input-required: [^\]]*\])?> `, timeout)[1]
}

// exitCode waits for the REPL to end.
func (r *replProc) exitCode(timeout time.Duration) int {
	r.t.Helper()
	select {
	case <-r.done:
		return r.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		r.t.Fatalf("repl did not exit within %s", timeout)
		return -1
	}
}

// processGone reports whether pid has ended (a zombie counts as ended).
func processGone(pid int) bool {
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		rest := stat[bytes.LastIndexByte(stat, ')')+1:]
		return len(bytes.Fields(rest)) > 0 && string(bytes.Fields(rest)[0]) == "Z"
	}
	p, err := os.FindProcess(pid)
	return err != nil || p.Signal(syscall.Signal(0)) != nil
}

// portClosed reports whether nothing accepts connections on addr.
func portClosed(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return true
	}
	c.Close()
	return false
}

// waitGone waits until the :listen child pid has ended and its port is closed.
func waitGone(t *testing.T, pid int, addr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !processGone(pid) || !portClosed(addr) {
		if time.Now().After(deadline) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill() // leave no orphan behind a failed test
			}
			t.Fatalf("after %s the serve child (pid %d gone: %t) or its port %s (closed: %t) is still there",
				timeout, pid, processGone(pid), addr, portClosed(addr))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

const listenTimeout = 90 * time.Second

// listenRE matches the :listen report; group 1 is the serve child's pid.
func listenRE(port int) string {
	return fmt.Sprintf(`Listening on http://127\.0\.0\.1:%d \(Temporal UI http://127\.0\.0\.1:\d+\)\n  a2aflow serve pid (\d+), data (\S+), log (\S+)\n`, port)
}

// TestREPLListen serves the local agents from the REPL (:listen), talks to
// them, runs local tools through the router (:tool), stops and starts the
// server again on the same data (a waiting task survives) and leaves nothing
// running behind.
func TestREPLListen(t *testing.T) {
	begin := time.Now()
	dataDir := t.TempDir()
	agent := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t)) // nothing serves there
	port := harness.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port

	r := startREPL(t, "--agent", agent, "--data-dir", dataDir)
	r.expect(regexp.QuoteMeta(agent)+"> ", 30*time.Second)

	if out := r.do(fmt.Sprintf(":listen %d", takenPort), 30*time.Second); !strings.Contains(out, fmt.Sprintf("error: :listen %d: port %d is taken", takenPort, takenPort)) {
		t.Errorf(":listen on a taken port:\n%s", out)
	}

	r.send(fmt.Sprintf(":listen %d", port))
	m := r.expect(listenRE(port), listenTimeout)
	pid1, _ := strconv.Atoi(m[1])
	if want := filepath.Join(dataDir, fmt.Sprintf("listen-%d", port)); m[2] != want || m[3] != filepath.Join(want, "serve.log") {
		t.Errorf("data %s, log %s; want them in %s", m[2], m[3], want)
	}
	if _, err := os.Stat(m[3]); err != nil {
		t.Errorf("serve log: %v", err)
	}
	r.expect(`travel> `, 30*time.Second)
	t.Logf("listening after %s", time.Since(begin).Round(time.Millisecond))

	if out := r.do(":listen "+strconv.Itoa(harness.FreePort(t)), 30*time.Second); !strings.Contains(out, "already listening on http://"+addr) {
		t.Errorf("second :listen:\n%s", out)
	}
	if out := r.do(":servers", 30*time.Second); !strings.Contains(out, "* 0 local http://"+addr) {
		t.Errorf(":servers while listening:\n%s", out)
	}

	r.send("Book a flight")
	r.expect(`Agent asks: Where to\?\ntravel \[input-required: Where to\?\]> `, 30*time.Second)

	// :stop: the server ends, the port is free, the local agent is --agent again.
	r.send(":stop")
	r.expect(fmt.Sprintf(`Stopped listening on http://%s \(pid %d, exit status 0\)\nThe local agent is %s again\n%s> `,
		regexp.QuoteMeta(addr), pid1, regexp.QuoteMeta(agent), regexp.QuoteMeta(agent)), 40*time.Second)
	if !portClosed(addr) {
		t.Errorf("port %d still accepts connections after :stop", port)
	}
	if !processGone(pid1) {
		t.Errorf("serve child %d still running after :stop", pid1)
	}

	// The same port again: same data dir, so the waiting task is still there
	// and the next line answers it.
	r.send(fmt.Sprintf(":listen %d", port))
	m = r.expect(listenRE(port), listenTimeout)
	pid2, _ := strconv.Atoi(m[1])
	r.expect(`travel \[input-required: Where to\?\]> `, 30*time.Second)
	r.send("Lisbon")
	r.expect(`travel \[input-required: On which date\? \(YYYY-MM-DD\)\]> `, 30*time.Second)
	r.send("2026-12-24")
	r.expect(`travel \[input-required: How many travellers\?\]> `, 30*time.Second)
	if out := r.do("2", 30*time.Second); !strings.Contains(out, ": completed") || !strings.Contains(out, "Artifact booking:") || !strings.Contains(out, `"destination":"Lisbon"`) {
		t.Errorf("booking after the restart:\n%s", out)
	}

	// Local tools through the router agent.
	if out := r.do(`:tool echo {"text":"hi"}`, 30*time.Second); !regexp.MustCompile(`: completed\nAgent: \{"text":"hi"\}\n`).MatchString(out) {
		t.Errorf(":tool echo:\n%s", out)
	}
	if out := r.do(`:tool calculator {"expression":"2*(3+4)"}`, 30*time.Second); !regexp.MustCompile(`: completed\nAgent: \{[^\n]*\b14\b`).MatchString(out) {
		t.Errorf(":tool calculator:\n%s", out)
	}
	if out := r.do(`:tool nope {}`, 30*time.Second); !regexp.MustCompile(`: rejected\nAgent: unknown tool "?nope"?; local tools: [^\n]*\becho\b`).MatchString(out) {
		t.Errorf(":tool nope:\n%s", out)
	}
	if out := r.do(`:tool echo [1]`, 30*time.Second); !strings.Contains(out, "error: :tool echo: the parameters must be a JSON object") || strings.Contains(out, "Task ") {
		t.Errorf(":tool echo [1] (want a local error and nothing sent):\n%s", out)
	}

	// The served agents and the REPL share one agent directory: what
	// remember_agent stores, :servers lists and :connect N reaches.
	echoURL := "http://" + addr + "/agents/echo"
	if out := r.do(`:tool remember_agent {"url":"`+echoURL+`","name":"echo-agent"}`, 30*time.Second); !strings.Contains(out, ": completed") {
		t.Errorf(":tool remember_agent:\n%s", out)
	}
	if out := r.do(":servers", 30*time.Second); !strings.Contains(out, "  1 echo-agent "+echoURL+"\n") {
		t.Errorf(":servers after remember_agent (want echo-agent as 1):\n%s", out)
	}
	if out := r.do(":connect 1", 30*time.Second); !strings.Contains(out, "Connected to echo ("+echoURL+")") {
		t.Errorf(":connect 1:\n%s", out)
	}
	if out := r.do("hello", 30*time.Second); !strings.Contains(out, ": completed\nAgent: hello\n") {
		t.Errorf("hello to echo-agent:\n%s", out)
	}
	// The seed's ":remote :tool list_agents": the connected agent's server
	// lists its directory, in the simple format.
	if out := r.do(`:remote :tool list_agents {"format":"simple"}`, 30*time.Second); !strings.Contains(out, ": completed\nAgent: {\"agents\":[{\"name\":\"echo-agent\",\"url\":\""+echoURL+"\",\"healthy\":true}]}\n") {
		t.Errorf(":remote :tool list_agents {\"format\":\"simple\"}:\n%s", out)
	}
	r.send(":disconnect")
	r.expect(`Back to the local agent`, 30*time.Second)

	r.send(":stop")
	r.expect(fmt.Sprintf(`Stopped listening on http://%s \(pid %d, exit status 0\)`, regexp.QuoteMeta(addr), pid2), 40*time.Second)
	r.expect(regexp.QuoteMeta(agent)+"> ", 30*time.Second)
	if !portClosed(addr) || !processGone(pid2) {
		t.Errorf("after :stop: port %d closed %t, pid %d gone %t", port, portClosed(addr), pid2, processGone(pid2))
	}
	r.send(":quit")
	if code := r.exitCode(30 * time.Second); code != 0 {
		t.Errorf("exit code %d", code)
	}
	t.Logf("whole session %s", time.Since(begin).Round(time.Millisecond))
}

// TestREPLListenEnds checks that every way out of the REPL stops its
// :listen child: end of input, Ctrl-C (SIGINT), a closed terminal (SIGHUP),
// and kill -9 of the REPL (the kernel kills the child, Linux only).
func TestREPLListenEnds(t *testing.T) {
	tests := []struct {
		name     string
		end      func(r *replProc)
		wantCode int // -1: killed
		wantOut  string
	}{
		{"end of input", func(r *replProc) { r.stdin.Close() }, 0, "Stopped listening on"},
		{"ctrl-c", func(r *replProc) { _ = r.cmd.Process.Signal(os.Interrupt) }, 0, "Stopped listening on"},
		{"terminal closed (SIGHUP)", func(r *replProc) { _ = r.cmd.Process.Signal(syscall.SIGHUP) }, 0, "Stopped listening on"},
		{"kill -9", func(r *replProc) { _ = r.cmd.Process.Kill() }, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.wantCode < 0 && runtime.GOOS != "linux" {
				t.Skip("the child dies with the REPL through Pdeathsig, Linux only")
			}
			port := harness.FreePort(t)
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			r := startREPL(t, "--agent", fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t)), "--data-dir", t.TempDir())
			r.send(fmt.Sprintf(":listen %d", port))
			pid, _ := strconv.Atoi(r.expect(listenRE(port), listenTimeout)[1])
			r.expect(`travel> `, 30*time.Second)
			tt.end(r)
			if code := r.exitCode(40 * time.Second); code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
			if tt.wantOut != "" {
				r.expect(tt.wantOut, time.Second)
			}
			waitGone(t, pid, addr, 15*time.Second)
		})
	}
}

// TestREPLListenChildDies kills the :listen child behind the REPL's back: the
// REPL says so at the next line and talks to --agent again.
func TestREPLListenChildDies(t *testing.T) {
	port := harness.FreePort(t)
	agent := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	r := startREPL(t, "--agent", agent, "--data-dir", t.TempDir())
	r.send(fmt.Sprintf(":listen %d", port))
	pid, _ := strconv.Atoi(r.expect(listenRE(port), listenTimeout)[1])
	r.expect(`travel> `, 30*time.Second)
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid, fmt.Sprintf("127.0.0.1:%d", port), 15*time.Second)
	out := r.do(":servers", 30*time.Second)
	for _, want := range []string{
		fmt.Sprintf("error: a2aflow serve on http://127.0.0.1:%d ended on its own (signal: killed); last lines of ", port),
		"The local agent is " + agent + " again",
		"* 0 local " + agent,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	r.send(":quit")
	if code := r.exitCode(30 * time.Second); code != 0 {
		t.Errorf("exit code %d", code)
	}
}
