package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// The REPL's :listen runs `a2aflow serve` (this same binary) as a child
// process on 127.0.0.1:PORT, with its own data dir under the REPL's, so that
// the local agents answer other A2A agents while the REPL talks to them. The
// child never outlives the REPL: :stop, :quit, end of input, Ctrl-C and
// SIGTERM/SIGHUP stop it (SIGTERM, then SIGKILL after a grace period), and on
// Linux the kernel kills it (Pdeathsig) if the REPL dies without cleaning up.

const (
	// listenStartTimeout bounds the wait for the child's /healthz: the
	// embedded Temporal starts in a few seconds, creating its database
	// the first time takes a few more.
	listenStartTimeout = 90 * time.Second
	// listenStopTimeout is the grace period between SIGTERM and SIGKILL.
	listenStopTimeout = 20 * time.Second
	// listenLogName is the child's log file in its data dir.
	listenLogName = "serve.log"
)

// listenConfig says how :listen starts its child.
type listenConfig struct {
	exe          string // the a2aflow binary; "" means os.Executable()
	dataDir      string // the REPL's --data-dir; the child's is dataDir/listen-PORT
	database     string // the REPL's agent directory (--database), shared with the child; "" leaves the child its own
	startTimeout time.Duration
	stopTimeout  time.Duration
}

// replListener is the running child of :listen.
type replListener struct {
	port    int
	url     string // http://127.0.0.1:PORT, the local agent while it runs
	uiURL   string // the child's Temporal Web UI
	dir     string // the child's data dir
	logPath string
	child   *childProc
}

// startListener checks that port is free, starts `a2aflow serve` on it and
// waits until it answers GET /healthz. On any failure the child is stopped
// and the error says why, with the end of its log.
func startListener(ctx context.Context, lc listenConfig, port int) (*replListener, error) {
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf(":listen %d: a port is a number from 1 to 65535", port)
	}
	exe := lc.exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf(":listen: cannot find the a2aflow binary to run: %w", err)
		}
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// Hold the port while picking the Temporal ports, so that none of them
	// is the same.
	probe, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf(":listen %d: port %d is taken (%v); choose another port", port, port, unwrapOpError(err))
	}
	ports, err := freeLoopbackPorts(2)
	probe.Close()
	if err != nil {
		return nil, fmt.Errorf(":listen %d: pick ports for Temporal: %w", port, err)
	}
	temporalAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	uiAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))

	dir := cmdutil.AbsPath(filepath.Join(lc.dataDir, fmt.Sprintf("listen-%d", port)))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf(":listen %d: %w", port, err)
	}
	l := &replListener{
		port:    port,
		url:     "http://" + addr,
		uiURL:   "http://" + uiAddr,
		dir:     dir,
		logPath: filepath.Join(dir, listenLogName),
	}
	args := []string{"serve",
		"--http-addr", addr,
		"--temporal-addr", temporalAddr,
		"--ui-addr", uiAddr,
		"--data-dir", dir,
		"--log-level", "warn",
	}
	if lc.database != "" {
		// One directory for the session: what the served agents remember
		// (remember_agent) is what :servers lists, and the other way round.
		args = append(args, "--database", lc.database)
	}
	header := fmt.Sprintf("=== %s a2aflow repl :listen %d: %s %s\n", time.Now().Format(time.RFC3339), port, exe, strings.Join(args, " "))
	if l.child, err = startChild(exe, args, listenEnv(os.Environ()), l.logPath, header); err != nil {
		return nil, fmt.Errorf(":listen %d: %w", port, err)
	}
	if err := l.waitReady(ctx, lc.startTimeout); err != nil {
		_ = l.child.stop(lc.stopTimeout)
		return nil, fmt.Errorf(":listen %d: %w\nlast lines of %s:\n%s", port, err, l.logPath, logTail(l.logPath, 20))
	}
	return l, nil
}

// waitReady polls GET /healthz until it answers 200, the child exits, ctx
// ends or timeout passes.
func (l *replListener) waitReady(ctx context.Context, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = listenStartTimeout
	}
	hc := &http.Client{Timeout: 3 * time.Second}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		// A child that died is not ready, whatever answers on the port.
		select {
		case <-l.child.done:
			return fmt.Errorf("a2aflow serve exited before it was ready (%v)", l.child.exitErr())
		default:
		}
		if healthy(ctx, hc, l.url) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted while a2aflow serve was starting: %w", ctx.Err())
		case <-l.child.done:
			return fmt.Errorf("a2aflow serve exited before it was ready (%v)", l.child.exitErr())
		case <-deadline.C:
			return fmt.Errorf("a2aflow serve did not answer %s/healthz within %s", l.url, timeout)
		case <-tick.C:
		}
	}
}

func healthy(ctx context.Context, hc *http.Client, base string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
	if err != nil {
		return false
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// freeLoopbackPorts returns n distinct loopback ports that were free a
// moment ago.
func freeLoopbackPorts(n int) ([]int, error) {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// unwrapOpError drops the "listen tcp 127.0.0.1:P:" prefix of a listen error.
func unwrapOpError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// listenEnv is the REPL's environment for the child, without the variables
// that would point it at another deployment: its cards must advertise its
// own URL and its records stay in its own data dir.
func listenEnv(environ []string) []string {
	drop := map[string]bool{cmdutil.EnvPublicURL: true, cmdutil.EnvDatabase: true, cmdutil.EnvTemporalUIURL: true}
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			out = append(out, kv)
		}
	}
	return out
}

// logTail returns the last n lines of the file at path, indented.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	defer f.Close()
	const max = 16 << 10
	if st, err := f.Stat(); err == nil && st.Size() > max {
		_, _ = f.Seek(st.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// childProc is a child process whose output goes to a log file, in its own
// process group, killed by the kernel when this process dies (Linux).
type childProc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // Wait's result, set before done is closed
}

// startChild starts exe with args, appending its stdout and stderr to
// logPath after header.
func startChild(exe string, args, env []string, logPath, header string) (*childProc, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	_, _ = logFile.WriteString(header)
	cmd := exec.Command(exe, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile // an *os.File: the child writes to it directly
	cmd.SysProcAttr = childSysProcAttr()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	c := &childProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		logFile.Close()
		close(c.done)
	}()
	return c, nil
}

func (c *childProc) pid() int { return c.cmd.Process.Pid }

// exited reports whether the process has ended.
func (c *childProc) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// exitErr describes how the process ended; call it once done is closed.
func (c *childProc) exitErr() string {
	if c.err == nil {
		return "exit status 0"
	}
	return c.err.Error()
}

// stop sends SIGTERM, waits up to timeout for the process to exit, then
// kills it; it returns once the process is gone. It reports a kill.
func (c *childProc) stop(timeout time.Duration) error {
	if c.exited() {
		return nil
	}
	if timeout <= 0 {
		timeout = listenStopTimeout
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		// No SIGTERM on this system, or the process just ended.
		_ = c.cmd.Process.Kill()
		<-c.done
		return nil
	}
	select {
	case <-c.done:
		return nil
	case <-time.After(timeout):
	}
	_ = c.cmd.Process.Kill()
	<-c.done
	return fmt.Errorf("pid %d did not stop within %s of SIGTERM and was killed", c.pid(), timeout)
}

// stop stops the listener's child and says so on out.
func (l *replListener) stop(out io.Writer, timeout time.Duration) {
	err := l.child.stop(timeout)
	if err != nil {
		fmt.Fprintf(out, "Stopped listening on %s: %v (log %s)\n", l.url, err, l.logPath)
		return
	}
	fmt.Fprintf(out, "Stopped listening on %s (pid %d, %s)\n", l.url, l.child.pid(), l.child.exitErr())
}

// describe is the line :listen prints once the child is ready.
func (l *replListener) describe() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Listening on %s (Temporal UI %s)\n", l.url, l.uiURL)
	fmt.Fprintf(&b, "  a2aflow serve pid %d, data %s, log %s\n", l.child.pid(), l.dir, l.logPath)
	fmt.Fprintf(&b, "  the local agent is now %s; :stop stops serving\n", l.url)
	return b.String()
}
