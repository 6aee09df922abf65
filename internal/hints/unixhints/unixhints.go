// Package unixhints carries the hints of package hints between the
// processes of a split deployment on one host whose a2aflow database is a
// SQLite file (`a2aflow worker` and `a2aflow api` given the same
// --database), where PostgreSQL's LISTEN/NOTIFY (package pghints) is not
// there: each API process binds a Unix datagram socket in the folder
// [Dir] names beside the database ([Listen]), and each worker sends every
// hint to every socket it finds there ([Sender]).
//
// As with pghints, a hint only wakes a subscriber, which then queries the
// workflow, so a lost hint costs latency, never an event, and every known
// way to lose hints wakes every stream instead (hints.All): a listener
// that starts wakes its own broker; a sender sends All when it starts,
// after dropped or undelivered hints (a listener's socket buffer full), and
// to each listener it finds for the first time (an API that started after
// it). A socket whose process is gone refuses datagrams; the sender then
// deletes its file.
package unixhints

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/a2aflow/a2aflow/internal/hints"
)

const (
	// socketSuffix ends the name of every listener's socket file.
	socketSuffix = ".sock"
	// maxDatagram bounds the task IDs sent in one datagram (newline
	// separated); the receive buffer is larger.
	maxDatagram = 16 << 10
	// readBuffer is the socket receive buffer a listener asks for, room
	// for bursts of hints while it hands them to its broker.
	readBuffer = 1 << 20
	// writeTimeout bounds one datagram's send to a listener whose buffer is
	// full (its process stopped reading).
	writeTimeout = 200 * time.Millisecond
	// relistEvery is how often a sender reads the folder again even when
	// its modification time did not change (coarse file system clocks).
	relistEvery = time.Second
	// maxSocketPath is the longest socket path a Unix socket address holds
	// (sun_path, 108 bytes with its terminating NUL on Linux).
	maxSocketPath = 107
)

// Dir is the folder of the sockets of the SQLite database at dbPath: the
// database file's name with ".hints" added, beside it.
func Dir(dbPath string) string { return dbPath + ".hints" }

// Sender sends hints to the listeners in one folder. It implements
// wire.Notifier.
type Sender struct {
	*hints.Outbox
	live    *hints.LiveOutbox
	dir     string
	logger  *slog.Logger
	mu      sync.Mutex // guards the fields below (send runs on the Outbox's goroutine; Close on another)
	targets map[string]*net.UnixConn
	listed  time.Time // when the folder was last read
	modTime time.Time // the folder's modification time then
}

// NewSender returns a Sender to the listeners in dir, which it creates if
// missing. Close it when done.
func NewSender(dir string, logger *slog.Logger) (*Sender, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("task event hints folder: %w", err)
	}
	s := &Sender{dir: dir, logger: logger, targets: map[string]*net.UnixConn{}}
	s.Outbox = hints.NewOutbox(s.send, "Unix sockets in "+dir, logger)
	s.live = hints.NewLiveOutbox(s.sendLive, "Unix sockets in "+dir, logger)
	return s, nil
}

// Live implements hints.LiveNotifier: the deltas go to every listener, in
// datagrams of their own (JSON objects, where hints are task IDs).
func (s *Sender) Live(d hints.Delta) { s.live.Live(d) }

// sendLive sends a batch of deltas to every listener in the folder (one
// found for the first time gets All first, as send does).
func (s *Sender) sendLive(_ context.Context, batch []hints.Delta) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fresh, err := s.refresh()
	if err != nil {
		return err
	}
	msgs := hints.EncodeLive(batch, maxDatagram)
	var errs []error
	for path, c := range s.targets {
		if fresh[path] { // as send does: it may have missed hints
			if err := write(c, []string{hints.All}); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(path), err))
				continue
			}
		}
		if err := c.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, m := range msgs {
			if _, err := c.Write(m); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(path), err))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// Close stops sending and closes the sockets.
func (s *Sender) Close() {
	s.live.Close()
	s.Outbox.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for path, c := range s.targets {
		_ = c.Close()
		delete(s.targets, path)
	}
}

// send sends ids to every listener in the folder, and All alone to a
// listener found for the first time. It fails when a listener did not take
// them (the Outbox then sends All later); one that is gone is forgotten.
func (s *Sender) send(_ context.Context, ids []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fresh, err := s.refresh()
	if err != nil {
		return err
	}
	var errs []error
	for path, c := range s.targets {
		batch := ids
		if fresh[path] {
			batch = []string{hints.All}
		}
		if err := write(c, batch); err != nil {
			if gone(err) {
				_ = c.Close()
				delete(s.targets, path)
				if errors.Is(err, syscall.ECONNREFUSED) {
					_ = os.Remove(path) // bound by nobody: its process is gone
				}
				continue
			}
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(path), err))
		}
	}
	return errors.Join(errs...)
}

// refresh reads the folder again when it changed or relistEvery passed,
// connecting to the sockets not known yet (returned as fresh) and
// forgetting those whose file is gone. Call with s.mu held.
func (s *Sender) refresh() (fresh map[string]bool, err error) {
	info, err := os.Stat(s.dir)
	if err != nil {
		return nil, fmt.Errorf("task event hints folder: %w", err)
	}
	if info.ModTime().Equal(s.modTime) && time.Since(s.listed) < relistEvery {
		return nil, nil
	}
	s.modTime, s.listed = info.ModTime(), time.Now()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("task event hints folder: %w", err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), socketSuffix) || e.Type()&os.ModeSocket == 0 {
			continue
		}
		path := filepath.Join(s.dir, e.Name())
		seen[path] = true
		if _, ok := s.targets[path]; ok {
			continue
		}
		c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
		if err != nil {
			if gone(err) && errors.Is(err, syscall.ECONNREFUSED) {
				_ = os.Remove(path)
			}
			continue
		}
		s.targets[path] = c
		if fresh == nil {
			fresh = map[string]bool{}
		}
		fresh[path] = true
	}
	for path, c := range s.targets {
		if !seen[path] {
			_ = c.Close()
			delete(s.targets, path)
		}
	}
	return fresh, nil
}

// write sends ids as newline-separated datagrams of at most maxDatagram
// bytes.
func write(c *net.UnixConn, ids []string) error {
	if err := c.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return err
	}
	var b []byte
	flush := func() error {
		if len(b) == 0 {
			return nil
		}
		_, err := c.Write(b)
		b = b[:0]
		return err
	}
	for _, id := range ids {
		if len(b) > 0 && len(b)+1+len(id) > maxDatagram {
			if err := flush(); err != nil {
				return err
			}
		}
		if len(b) > 0 {
			b = append(b, '\n')
		}
		b = append(b, id...)
	}
	return flush()
}

// gone reports whether err says nobody listens on the socket any more.
func gone(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// Listen binds a socket in dir (created if missing) and hints b of the
// tasks named by every datagram it receives, until ctx ends, when it closes
// the socket and deletes its file. Every subscriber of b is hinted once the
// socket is bound: hints sent before were not for this process.
func Listen(ctx context.Context, dir string, b *hints.Broker, logger *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("task event hints folder: %w", err)
	}
	var nonce [4]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return err
	}
	path := filepath.Join(dir, fmt.Sprintf("%d-%s%s", os.Getpid(), hex.EncodeToString(nonce[:]), socketSuffix))
	if len(path) > maxSocketPath {
		return fmt.Errorf("task event hints socket path %s is %d bytes, longer than a Unix socket address holds (%d): use a database path closer to the root",
			path, len(path), maxSocketPath)
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("task event hints socket: %w", err)
	}
	if err := conn.SetReadBuffer(readBuffer); err != nil {
		logger.Debug("task event hints socket: receive buffer", "error", err)
	}
	b.NotifyAll()
	go func() {
		<-ctx.Done()
		_ = conn.Close()
		_ = os.Remove(path)
	}()
	go func() {
		buf := make([]byte, maxDatagram+1)
		for {
			n, _, err := conn.ReadFromUnix(buf)
			if err != nil {
				if ctx.Err() == nil {
					logger.Warn("task event hints socket failed: streams hear of new events at their safety poll from now on", "path", path, "error", err)
				}
				return
			}
			if n > 0 && buf[0] == '{' { // live answers' deltas
				var batch hints.LiveBatch
				if err := json.Unmarshal(buf[:n], &batch); err != nil {
					logger.Debug("task event hints socket: a datagram that is not a batch of deltas", "error", err)
					continue
				}
				for _, d := range batch.Live {
					b.Live(d)
				}
				continue
			}
			for id := range strings.SplitSeq(string(buf[:n]), "\n") {
				switch id {
				case "":
				case hints.All:
					b.NotifyAll()
				default:
					b.Notify(id, 0)
				}
			}
		}
	}()
	return nil
}
