package tests

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runREPL runs `a2aflow repl` with stdin a pipe holding input.
func runREPL(t *testing.T, input string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"repl"}, args...)...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	cmd.Stdin = strings.NewReader(input)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("repl did not finish in 90 s; stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

func TestREPL(t *testing.T) {
	s := startServe(t, t.TempDir())
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
