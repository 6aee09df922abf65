package models

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/a2aflow/a2aflow/internal/pgtest"
)

// The models tests run against both backends: SQLite in a temporary file and
// a real PostgreSQL server that the package's tests start once (package
// pgtest: from the PostgreSQL binaries installed on the machine, Debian's
// postgresql package). Every test gets a database of its own.

func TestMain(m *testing.M) {
	code := m.Run()
	if srv := pg.server; srv != nil {
		srv.Stop()
	}
	os.Exit(code)
}

// backend makes new, empty databases of one kind.
type backend struct {
	name string
	// newDSN returns the DSN of a new, empty database, for Open.
	newDSN func(t *testing.T) string
}

var backends = []backend{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "a2aflow.db") }},
	{"postgres", func(t *testing.T) string { return newDatabase(t, pgServerFor(t)) }},
}

// eachBackend runs test as a subtest per backend.
func eachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { test(t, b) })
	}
}

// openNew opens a new, empty database of b and closes it at cleanup; it
// returns its DSN to open it again.
func openNew(t *testing.T, b backend) (*Store, string) {
	t.Helper()
	dsn := b.newDSN(t)
	s, err := Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, dsn
}

var pg struct {
	once   sync.Once
	server *pgtest.Server
	err    error
}

// pgServerFor returns the package's PostgreSQL server, starting it on first
// use. Without PostgreSQL binaries the test is skipped, unless CI=true where
// that is a failure.
func pgServerFor(t *testing.T) *pgtest.Server {
	t.Helper()
	pg.once.Do(func() { pg.server, pg.err = pgtest.Start() })
	var missing *pgtest.MissingError
	switch {
	case errors.As(pg.err, &missing) && os.Getenv("CI") != "true":
		t.Skipf("PostgreSQL tests skipped: %v", pg.err)
	case pg.err != nil:
		t.Fatalf("PostgreSQL server for the tests: %v", pg.err)
	}
	return pg.server
}

// newDatabase creates an empty database for t and returns its URL.
func newDatabase(t *testing.T, srv *pgtest.Server) string {
	t.Helper()
	dsn, err := srv.NewDatabase(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// The server helper must find its binaries exactly as documented.
func TestPostgresBinDir(t *testing.T) {
	dir, err := pgtest.BinDir()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	out, err := exec.Command(filepath.Join(dir, "postgres"), "--version").Output()
	if err != nil || !bytes.HasPrefix(out, []byte("postgres (PostgreSQL) ")) {
		t.Errorf("%s/postgres --version = %q, %v", dir, out, err)
	}
}
