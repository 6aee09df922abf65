package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestREPLSession: plain-text commands ("connect URL", "list servers",
// "quit") work as their ":" forms, :connect remembers a new agent in the
// agent directory (agents list shows it; a second connect does not add it
// again), and --log-file keeps the session: the lines typed and the answers.
func TestREPLSession(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	dataDir := t.TempDir()
	logFile := filepath.Join(t.TempDir(), "repl.log")
	echo := s.APIURL + "/agents/echo"

	out, errOut, code := runREPL(t, "connect "+echo+"\nhello\nlist servers\nconnect me with sales\nquit\n",
		"--agent", s.APIURL, "--data-dir", dataDir, "--log-file", logFile)
	if code != 0 {
		t.Fatalf("exit code %d; stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, w := range []string{
		"Connected to echo", "Remembered echo in the agent directory",
		"Agent: hello", "1 echo " + echo,
		"Agent: connect me with sales", // not a command: a message to the connected agent
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q; stdout:\n%s\nstderr:\n%s", w, out, errOut)
		}
	}
	r := runCLI(t, "agents", "list", "--data-dir", dataDir)
	wantRun(t, r, 0, "echo", echo)

	raw, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"connect " + echo + "\n", "Connected to echo", "hello\n", "Agent: hello", "list servers\n"} {
		if !strings.Contains(string(raw), w) {
			t.Errorf("log file lacks %q:\n%s", w, raw)
		}
	}

	out, errOut, code = runREPL(t, ":connect "+echo+"\n:quit\n", "--agent", s.APIURL, "--data-dir", dataDir)
	if code != 0 || !strings.Contains(out, "Connected to echo") || strings.Contains(out, "Remembered") {
		t.Errorf("second connect: exit %d, want connected and not remembered again; stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
