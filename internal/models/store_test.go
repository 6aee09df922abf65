package models

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
)

func TestIsPostgresDSN(t *testing.T) {
	tests := []struct {
		dsn  string
		want bool
	}{
		{"postgres://a2aflow:pw@db:5432/a2aflow?sslmode=require", true},
		{"postgresql://db/a2aflow", true},
		{"PostgreSQL://db/a2aflow", true},
		{"host=db user=a2aflow dbname=a2aflow sslmode=disable", true},
		{"dbname=a2aflow", true},
		{"user=a2aflow host=/run/postgresql", true},
		{"data/a2aflow.db", false},
		{"/var/lib/a2aflow/a2aflow.db", false},
		{"/data/host=a/dbname=b/a2aflow.db", false},
		{"postgres.db", false},
		{"./postgres/a2aflow.db", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isPostgresDSN(tt.dsn); got != tt.want {
			t.Errorf("isPostgresDSN(%q) = %v, want %v", tt.dsn, got, tt.want)
		}
	}
}

// A path, even one that looks a little like a DSN, is a SQLite file, created
// with its folders, in WAL mode.
func TestOpenSQLitePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host=db", "new", "a2aflow.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.db.Dialector.Name() != "sqlite" {
		t.Errorf("dialect = %s, want sqlite", s.db.Dialector.Name())
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file: %v", err)
	}
	var mode, sync string
	if err := s.db.Raw("PRAGMA journal_mode").Scan(&mode).Error; err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	if err := s.db.Raw("PRAGMA synchronous").Scan(&sync).Error; err != nil || sync != "1" { // NORMAL
		t.Errorf("synchronous = %q, %v; want 1 (NORMAL)", sync, err)
	}
}

// A URL and a key=value DSN (here over the unix socket) open the same
// PostgreSQL database, with the pool bounded.
func TestOpenPostgresDSNForms(t *testing.T) {
	srv := pgServerFor(t)
	url := newDatabase(t, srv)
	db := url[strings.LastIndex(url, "/")+1 : strings.Index(url, "?")]
	viaURL, err := Open(strings.Replace(url, "postgres://", "postgresql://", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer viaURL.Close()
	viaSocket, err := Open(srv.SocketDSN(db))
	if err != nil {
		t.Fatal(err)
	}
	defer viaSocket.Close()
	for _, s := range []*Store{viaURL, viaSocket} {
		if s.db.Dialector.Name() != "postgres" {
			t.Errorf("dialect = %s, want postgres", s.db.Dialector.Name())
		}
		sqlDB, err := s.db.DB()
		if err != nil {
			t.Fatal(err)
		}
		if got := sqlDB.Stats().MaxOpenConnections; got != pgMaxOpenConns {
			t.Errorf("MaxOpenConnections = %d, want %d", got, pgMaxOpenConns)
		}
	}
	if err := viaURL.AddAgent(&RemoteAgent{Shared: true, Name: "echo", URL: "http://127.0.0.1:1/"}); err != nil {
		t.Fatal(err)
	}
	if _, err := viaSocket.Agent("echo"); err != nil {
		t.Errorf("agent added through the URL, read through the socket: %v", err)
	}
}

// An unreachable PostgreSQL fails Open without printing the password.
func TestOpenPostgresErrorHidesPassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	for _, dsn := range []string{
		fmt.Sprintf("postgres://a2aflow:s3cr3t-pw@127.0.0.1:%d/a2aflow?connect_timeout=5", port),
		fmt.Sprintf("host=127.0.0.1 port=%d user=a2aflow password=s3cr3t-pw dbname=a2aflow connect_timeout=5", port),
		"postgres://a2aflow:s3cr3t-pw@127.0.0.1:notaport/a2aflow",
	} {
		s, err := Open(dsn)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded, want an error", dsn)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("Open error shows the password: %v", err)
		}
	}
}

// A server that accepts connections but never answers makes Open fail after
// the connect timeout rather than hang, when the DSN sets none.
func TestOpenPostgresTimesOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	defer func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func(d time.Duration) { pgConnectTimeout = d }(pgConnectTimeout)
	pgConnectTimeout = 200 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		s, err := Open(fmt.Sprintf("postgres://a2aflow@%s/a2aflow", l.Addr()))
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Open of a silent server succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open of a silent server still waiting after 10s")
	}
}

// A server and its workers starting at once against a new database all
// migrate it.
func TestOpenConcurrently(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		dsn := b.newDSN(t)
		if b.name == "sqlite" {
			// Turning a new file to WAL wants an exclusive lock that SQLite
			// does not wait for, so concurrent first opens of a new file can
			// fail "database is locked" (as before PostgreSQL support; not
			// under test): start from an empty file already in WAL mode.
			db, err := gorm.Open(sqlite.Open("file:"+dsn+"?_journal_mode=WAL"), &gorm.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if err := closeDB(db); err != nil {
				t.Fatal(err)
			}
		}
		errs := make([]error, 12)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				<-start
				s, err := Open(dsn)
				if err == nil {
					err = s.Close()
				}
				errs[i] = err
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("Open #%d: %v", i, err)
			}
		}
	})
}
