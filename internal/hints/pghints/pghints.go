// Package pghints carries the hints of package hints between processes
// through PostgreSQL's LISTEN/NOTIFY, for a split deployment (`a2aflow
// worker` and `a2aflow api` processes) whose a2aflow database is PostgreSQL:
// each worker's [Sender] sends pg_notify on [Channel] with the task ID of
// each new event, and each API holds one connection that LISTENs on it
// ([Listen]) and hints its hints.Broker. As in one process, a hint only
// wakes a subscriber, which then queries the workflow, so a lost hint costs
// latency, never an event. Where hints can be lost, every stream is woken
// instead: a listener that (re)connects wakes its broker's; a sender that
// starts (a worker that replaces one killed before its last hints went
// out), dropped hints over its queue, or failed to send, sends [All], which
// wakes every stream of every API. Only a worker killed between a workflow
// task and its hints, with no worker starting after it, leaves streams to
// the API's slow safety poll.
package pghints

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/a2aflow/a2aflow/internal/hints"
)

// Channel is the PostgreSQL notification channel of the hints; each
// notification's payload is a task ID, or [All].
const Channel = "a2aflow_task_events"

// LiveChannel is the PostgreSQL notification channel of the live answers'
// deltas; each notification's payload is a hints.LiveBatch (JSON) of at
// most maxLivePayload bytes (PostgreSQL takes up to 8000).
const LiveChannel = "a2aflow_task_live"

// maxLivePayload bounds one live notification's payload.
const maxLivePayload = 7000

// All is the payload of a hint for every task: hints may have been lost.
const All = hints.All

const (
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
// blocks: hints are queued and sent from a goroutine (hints.Outbox, which
// also says when it sends [All]). It implements wire.Notifier.
type Sender struct {
	*hints.Outbox
	live *hints.LiveOutbox
	pool *pgxpool.Pool
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
	pc.MaxConns = 2 // hints and live answers, each sent serially
	pool, err := pgxpool.NewWithConfig(context.Background(), pc)
	if err != nil {
		return nil, fmt.Errorf("hints database: %w", err)
	}
	send := func(ctx context.Context, ids []string) error {
		sctx, cancel := context.WithTimeout(ctx, sendTimeout)
		defer cancel()
		_, err := pool.Exec(sctx, "SELECT pg_notify($1, id) FROM unnest($2::text[]) AS id", Channel, ids)
		return err
	}
	sendLive := func(ctx context.Context, batch []hints.Delta) error {
		sctx, cancel := context.WithTimeout(ctx, sendTimeout)
		defer cancel()
		msgs := hints.EncodeLive(batch, maxLivePayload)
		payloads := make([]string, len(msgs))
		for i, m := range msgs {
			payloads[i] = string(m)
		}
		_, err := pool.Exec(sctx, "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", LiveChannel, payloads)
		return err
	}
	return &Sender{Outbox: hints.NewOutbox(send, "PostgreSQL", logger), live: hints.NewLiveOutbox(sendLive, "PostgreSQL", logger), pool: pool}, nil
}

// Live implements hints.LiveNotifier: the deltas go out on LiveChannel.
func (s *Sender) Live(d hints.Delta) { s.live.Live(d) }

// Close stops sending and closes the connection.
func (s *Sender) Close() {
	s.live.Close()
	s.Outbox.Close()
	s.pool.Close()
}

// Listen holds one connection to the database of dsn that LISTENs on
// Channel, and hints b of the task of each notification, until ctx ends.
// A broken connection is opened again, with a backoff from 100 ms to 10 s;
// once it listens again, every subscriber of b is hinted (it may have
// missed hints meanwhile). It returns an error only for a DSN it cannot
// parse.
func Listen(ctx context.Context, dsn string, b *hints.Broker, logger *slog.Logger) error {
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

func listen(ctx context.Context, cfg *pgx.ConnConfig, b *hints.Broker, listening func()) error {
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
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{LiveChannel}.Sanitize()); err != nil {
		return err
	}
	listening()
	b.NotifyAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if n.Channel == LiveChannel {
			var batch hints.LiveBatch
			if json.Unmarshal([]byte(n.Payload), &batch) == nil {
				for _, d := range batch.Live {
					b.Live(d)
				}
			}
			continue
		}
		if n.Payload == All {
			b.NotifyAll()
			continue
		}
		b.Notify(n.Payload, 0)
	}
}
