// Package pgnotify carries the hints of package notify between processes
// through PostgreSQL's LISTEN/NOTIFY, for a split deployment (`a2aflow
// worker` and `a2aflow api` processes) whose a2aflow database is PostgreSQL:
// each worker's [Sender] sends pg_notify on [Channel] with the task ID of
// each new event, and each API holds one connection that LISTENs on it
// ([Listen]) and hints its notify.Broker. As in one process, a hint only
// wakes a subscriber, which then queries the workflow, so a lost hint costs
// latency, never an event. Where hints can be lost, every stream is woken
// instead: a listener that (re)connects wakes its broker's; a sender that
// starts (a worker that replaces one killed before its last hints went
// out), dropped hints over its queue, or failed to send, sends [All], which
// wakes every stream of every API. Only a worker killed between a workflow
// task and its hints, with no worker starting after it, leaves streams to
// the API's slow safety poll.
package pgnotify

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/a2aflow/a2aflow/notify"
)

// Channel is the PostgreSQL notification channel of the hints; each
// notification's payload is a task ID, or [All].
const Channel = "a2aflow_task_events"

// All is the payload of a hint for every task: hints may have been lost.
// (Task IDs are UUIDs: "*" is never one.)
const All = "*"

const (
	// maxPending bounds the task IDs a Sender holds while sending: beyond
	// it, hints are dropped.
	maxPending = 4096
	// sendTimeout bounds one send of the pending hints.
	sendTimeout = 2 * time.Second
	// connectTimeout bounds a connection attempt when the DSN sets none.
	connectTimeout = 5 * time.Second
)

// keepAlive finds a dead connection to a database host that went away
// without closing it (a LISTEN connection otherwise only reads) in about
// 30 s.
var keepAlive = net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3}

func connConfig(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("hints database: %w", err) // pgx redacts the password
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = connectTimeout
	}
	d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAliveConfig: keepAlive}
	cfg.DialFunc = d.DialContext
	return cfg, nil
}

// Sender sends hints to the PostgreSQL database of its DSN. Notify never
// blocks: hints are queued (one per task however many come before the next
// send) and sent from a goroutine; when the queue is full they are dropped.
// It implements workflows.Notifier.
type Sender struct {
	pool    *pgxpool.Pool
	logger  *slog.Logger
	mu      sync.Mutex
	pending map[string]struct{}
	dropped int
	all     bool // send All: hints may have been lost
	wake    chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
}

// NewSender returns a Sender to the database of dsn (a PostgreSQL URL or
// key=value DSN). It connects when it first sends. Close it when done.
func NewSender(dsn string, logger *slog.Logger) (*Sender, error) {
	cc, err := connConfig(dsn)
	if err != nil {
		return nil, err
	}
	pc, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, err
	}
	pc.ConnConfig = cc
	pc.MaxConns = 1 // sends are serial
	pool, err := pgxpool.NewWithConfig(context.Background(), pc)
	if err != nil {
		return nil, fmt.Errorf("hints database: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// all: the hints of a worker killed before it sent them are lost; this
	// one may be its replacement, and its first send wakes every stream.
	s := &Sender{pool: pool, logger: logger, pending: map[string]struct{}{}, all: true, wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	s.wake <- struct{}{}
	go s.run(ctx)
	return s, nil
}

// Notify queues a hint for taskID.
func (s *Sender) Notify(taskID string, _ int64) {
	s.mu.Lock()
	if _, ok := s.pending[taskID]; !ok {
		if len(s.pending) >= maxPending {
			s.dropped++
			s.all = true
		} else {
			s.pending[taskID] = struct{}{}
		}
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // a send is already due
	}
}

func (s *Sender) run(ctx context.Context) {
	defer close(s.done)
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		s.mu.Lock()
		ids := make([]string, 0, len(s.pending))
		for id := range s.pending {
			ids = append(ids, id)
		}
		clear(s.pending)
		dropped, all := s.dropped, s.all
		s.dropped, s.all = 0, false
		s.mu.Unlock()
		if dropped > 0 {
			s.logger.Warn("task event hints dropped: too many queued (every stream is woken instead)", "dropped", dropped)
		}
		if all {
			ids = []string{All} // wakes every stream: the task IDs add nothing
		}
		if len(ids) == 0 {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, sendTimeout)
		_, err := s.pool.Exec(sctx, "SELECT pg_notify($1, id) FROM unnest($2::text[]) AS id", Channel, ids)
		cancel()
		if err != nil && ctx.Err() == nil {
			// These hints are lost: the next send wakes every stream.
			s.mu.Lock()
			s.all = true
			s.mu.Unlock()
			s.retryLater(ctx)
		}
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			failing = true
			s.logger.Warn("task event hints not sent to PostgreSQL (streams on other processes poll meanwhile)", "error", err)
		case err == nil && failing:
			failing = false
			s.logger.Info("task event hints sent to PostgreSQL again")
		}
	}
}

// retryLater wakes run again after a second, to send All once the
// database answers again (without it, the next hint would).
func (s *Sender) retryLater(ctx context.Context) {
	go func() {
		t := time.NewTimer(time.Second)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}()
}

// Close stops sending and closes the connection.
func (s *Sender) Close() {
	s.cancel()
	<-s.done
	s.pool.Close()
}

// Listen holds one connection to the database of dsn that LISTENs on
// Channel, and hints b of the task of each notification, until ctx ends.
// A broken connection is opened again, with a backoff from 100 ms to 10 s;
// once it listens again, every subscriber of b is hinted (it may have
// missed hints meanwhile). It returns an error only for a DSN it cannot
// parse.
func Listen(ctx context.Context, dsn string, b *notify.Broker, logger *slog.Logger) error {
	cfg, err := connConfig(dsn)
	if err != nil {
		return err
	}
	go func() {
		const minBackoff, maxBackoff = 100 * time.Millisecond, 10 * time.Second
		backoff := minBackoff
		for {
			err := listen(ctx, cfg, b, func() {
				if backoff > minBackoff {
					logger.Info("listening to task event hints again", "channel", Channel)
				}
				backoff = minBackoff
			})
			if ctx.Err() != nil {
				return
			}
			if backoff == minBackoff {
				logger.Warn("task event hints: no PostgreSQL connection to listen on, retrying (streams poll meanwhile)", "error", err)
			}
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, maxBackoff)
		}
	}()
	return nil
}

func listen(ctx context.Context, cfg *pgx.ConnConfig, b *notify.Broker, listening func()) error {
	conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{Channel}.Sanitize()); err != nil {
		return err
	}
	listening()
	b.NotifyAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if n.Payload == All {
			b.NotifyAll()
			continue
		}
		b.Notify(n.Payload, 0)
	}
}
