package client

import "syscall"

// childSysProcAttr puts the :listen child in its own process group (a
// Ctrl-C at the terminal reaches the REPL only, which stops the child
// itself) and has the kernel kill it if the REPL dies without cleaning up.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
