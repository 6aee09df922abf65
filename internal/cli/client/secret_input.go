package client

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"
)

// credentialNotLogged stands in the REPL's --log-file for a line typed in
// answer to a credential request.
const credentialNotLogged = "(a credential, not logged)"

// lineReader reads the lines a user types: a credential's without echo
// when the input is a terminal (term.ReadPassword), every other through a
// scanner. Lines are read one at a time, when asked for, so that the
// terminal's echo is off exactly while the credential is typed.
type lineReader struct {
	sc       *bufio.Scanner
	fd       int
	terminal bool

	mu    sync.Mutex
	saved *term.State // the terminal's state while a credential is read
}

func newLineReader(in io.Reader) *lineReader {
	l := &lineReader{sc: bufio.NewScanner(in)}
	l.sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		l.fd, l.terminal = int(f.Fd()), true
	}
	return l
}

// read returns the next line, without its end; a credential's is read
// without echo from a terminal. The end of input is io.EOF.
func (l *lineReader) read(secret bool) (string, error) {
	if secret && l.terminal {
		if state, err := term.GetState(l.fd); err == nil {
			l.setSaved(state)
			defer l.setSaved(nil)
		}
		b, err := term.ReadPassword(l.fd)
		return string(b), err
	}
	if l.sc.Scan() {
		return l.sc.Text(), nil
	}
	if err := l.sc.Err(); err != nil {
		return "", err
	}
	return "", io.EOF
}

func (l *lineReader) setSaved(s *term.State) {
	l.mu.Lock()
	l.saved = s
	l.mu.Unlock()
}

// restore gives the terminal its echo back when the program ends while a
// credential is read (Ctrl-C, a closed session): term.ReadPassword does so
// only when its read returns.
func (l *lineReader) restore() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.saved != nil {
		_ = term.Restore(l.fd, l.saved)
		l.saved = nil
	}
}

// errNoCredential: the input ended before a credential came.
var errNoCredential = errors.New("no credential given")

// readCredential reads a credential from in for `send --credential`: from a
// terminal without echo, after prompt on promptOut; else the first line.
func readCredential(in io.Reader, promptOut io.Writer, prompt string) (string, error) {
	l := newLineReader(in)
	if l.terminal {
		fmt.Fprint(promptOut, prompt)
		defer fmt.Fprintln(promptOut)
	}
	line, err := l.read(true)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the credential: %w", err)
	}
	if line = strings.TrimSpace(line); line == "" {
		return "", errNoCredential
	}
	return line, nil
}
