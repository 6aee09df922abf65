package tests

import (
	"os/exec"
	"syscall"
)

// onTerminal runs cmd in a session of its own whose controlling terminal
// is its stdin (a pseudo-terminal's slave), as a shell would, and kills it
// with the test.
func onTerminal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
}
