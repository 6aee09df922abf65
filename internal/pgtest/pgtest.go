// Package pgtest starts a private PostgreSQL server for tests, from the
// PostgreSQL binaries installed on the machine (Debian's postgresql package),
// in a temporary folder, listening on a free loopback port and on a unix
// socket in that folder. The models tests and the end-to-end tests use it.
package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// MissingError says the machine has no PostgreSQL binaries to start a
// server from: a test skips on it, unless CI=true.
type MissingError struct{ why string }

func (e *MissingError) Error() string {
	return e.why + " (install Debian's postgresql package; CI=true makes this a failure)"
}

type Server struct {
	dir     string // owns data/ and the socket; removed at stop
	port    int
	user    string // the superuser, trusted on loopback and the socket
	cmd     *exec.Cmd
	exited  chan struct{}
	logPath string
	admin   *pgx.Conn
	dbs     atomic.Int64
}

// BinDir finds the folder holding initdb and postgres: the newest
// /usr/lib/postgresql/*/bin (Debian keeps them off PATH), else PATH.
func BinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if p, err := filepath.EvalSymlinks(p); err == nil {
			d := filepath.Dir(p)
			if isExecutable(filepath.Join(d, "postgres")) {
				return d, nil
			}
		}
	}
	return "", &MissingError{"no initdb and postgres in /usr/lib/postgresql/*/bin or on PATH"}
}

func pgVersion(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Start creates a cluster in a new temporary folder and starts its
// server. initdb and postgres refuse to run as root: as root they run as the
// postgres system user, which owns the folder.
func Start() (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, &MissingError{fmt.Sprintf("running as root and no postgres system user to run %s/postgres as: %v", bin, err)}
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// os.TempDir, not t.TempDir: the folder outlives the first test, and
	// the postgres user must be able to reach it.
	dir, err := os.MkdirTemp("", "a2aflow-pg-")
	if err != nil {
		return nil, err
	}
	srv := &Server{dir: dir, user: "a2aflow", logPath: filepath.Join(dir, "postgres.log")}
	fail := func(err error) (*Server, error) {
		srv.Stop()
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(err)
		}
	}
	data := filepath.Join(dir, "data")
	// An ICU en-US default collation, as a production database often has,
	// sorts "alpha" before "Beta": the tests check names still sort by byte.
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", srv.user,
		"--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8",
		"--locale-provider=icu", "--icu-locale=en-US", "--no-sync", "--no-instructions")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("%s: %v\n%s", initdb, err, out))
	}
	// A port taken between choosing it and binding it: try another.
	for attempt := 1; ; attempt++ {
		err := srv.startServer(bin, data, cred)
		if err == nil {
			break
		}
		if attempt == 3 {
			return fail(err)
		}
	}
	return srv, nil
}

func (srv *Server) startServer(bin, data string, cred *syscall.Credential) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv.port = l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	logf, err := os.OpenFile(srv.logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(srv.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+srv.dir,
		// A throwaway server: durability is not under test here.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	cmd.Dir = srv.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// The server dies with the test binary even if it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	srv.cmd, srv.exited = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(srv.exited) }()

	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, srv.DSN("postgres"))
		cancel()
		if err == nil {
			srv.admin = conn
			return nil
		}
		select {
		case <-srv.exited:
			srv.cmd = nil
			return fmt.Errorf("postgres exited on start: %v\n%s", cmd.ProcessState, srv.Log())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			srv.kill()
			return fmt.Errorf("postgres not ready after 30s: %v\n%s", err, srv.Log())
		}
	}
}

func (srv *Server) Log() string {
	b, _ := os.ReadFile(srv.logPath)
	return string(b)
}

// DSN is the URL of database db over loopback TCP.
func (srv *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", srv.user, srv.port, db)
}

// SocketDSN is the key=value DSN of database db over the unix socket.
func (srv *Server) SocketDSN(db string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s", srv.dir, srv.port, srv.user, db)
}

var notIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// NewDatabase creates an empty database named after name (made a valid
// identifier, numbered to be unique) and returns its URL.
func (srv *Server) NewDatabase(name string) (string, error) {
	name = notIdent.ReplaceAllString(strings.ToLower(name), "_")
	name = fmt.Sprintf("t%d_%s", srv.dbs.Add(1), name)
	if len(name) > 63 {
		name = name[:63]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := srv.admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return srv.DSN(name), nil
}

// Stop shuts the server down and removes its folder.
func (srv *Server) Stop() {
	if srv.admin != nil {
		_ = srv.admin.Close(context.Background())
		srv.admin = nil
	}
	srv.kill()
	_ = os.RemoveAll(srv.dir)
}

// kill stops the server process: fast shutdown, then SIGKILL.
func (srv *Server) kill() {
	if srv.cmd != nil {
		_ = srv.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-srv.exited:
		case <-time.After(10 * time.Second):
			_ = srv.cmd.Process.Kill()
			<-srv.exited
		}
		srv.cmd = nil
	}
}
