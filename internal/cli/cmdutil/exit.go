package cmdutil

import (
	"errors"
	"fmt"
	"io"
)

// ExitOther is the exit status of an error without a meaning of its own
// (bad flags, network...). The client commands and replay give theirs
// with ExitError.
const ExitOther = 1

// ExitError carries the process exit status of a command. A nil Err means
// the command printed everything already and only the status is left to
// set.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit returns the error that only sets exit status code; nil for 0.
func Exit(code int) error {
	if code == 0 {
		return nil
	}
	return &ExitError{Code: code}
}

// ExitCode returns the process exit status that Report gives err (0 for
// nil).
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	return Report(io.Discard, err)
}

// Report prints err to w (unless it only carries an exit status) and
// returns the process exit status for it.
func Report(w io.Writer, err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(w, "a2aflow:", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintln(w, "a2aflow:", err)
	return ExitOther
}
