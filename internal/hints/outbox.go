package hints

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// All is the payload of a hint for every task, sent between processes when
// hints may have been lost. (Task IDs are UUIDs: "*" is never one.)
const All = "*"

const (
	// maxPending bounds the task IDs an Outbox holds while sending: beyond
	// it, hints are dropped (and All is sent instead).
	maxPending = 4096
	// retryAfter is how soon an Outbox whose send failed sends again.
	retryAfter = time.Second
)

// Outbox queues hints for another process and sends them from a goroutine
// of its own, for the cross-process senders (packages pghints and
// unixhints). Notify never blocks: one hint per task is queued however
// many come before the next send, and beyond maxPending they are dropped.
// Every way it can lose hints makes its next send All, which wakes every
// stream of every receiving process: its first send (its process may
// replace one killed before its last hints went out), a send after dropped
// hints, and a send after a failed one (retried after a second). It
// implements wire.Notifier.
type Outbox struct {
	send   func(ctx context.Context, ids []string) error
	what   string
	logger *slog.Logger

	mu      sync.Mutex
	pending map[string]struct{}
	dropped int
	all     bool
	wake    chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
}

// NewOutbox starts an Outbox that sends with send, which gets the task IDs
// of one batch (or [All] alone) and reports whether they went out; what
// names the destination in log lines ("PostgreSQL"). Close it when done.
func NewOutbox(send func(ctx context.Context, ids []string) error, what string, logger *slog.Logger) *Outbox {
	ctx, cancel := context.WithCancel(context.Background())
	o := &Outbox{send: send, what: what, logger: logger, pending: map[string]struct{}{}, all: true,
		wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	o.wake <- struct{}{}
	go o.run(ctx)
	return o
}

// Notify queues a hint for taskID.
func (o *Outbox) Notify(taskID string, _ int64) {
	o.mu.Lock()
	if _, ok := o.pending[taskID]; !ok {
		if len(o.pending) >= maxPending {
			o.dropped++
			o.all = true
		} else {
			o.pending[taskID] = struct{}{}
		}
	}
	o.mu.Unlock()
	o.poke()
}

// SendAll makes the next send All, as after a time in which hints may have
// been lost.
func (o *Outbox) SendAll() {
	o.mu.Lock()
	o.all = true
	o.mu.Unlock()
	o.poke()
}

func (o *Outbox) poke() {
	select {
	case o.wake <- struct{}{}:
	default: // a send is already due
	}
}

func (o *Outbox) run(ctx context.Context) {
	defer close(o.done)
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-o.wake:
		}
		o.mu.Lock()
		ids := make([]string, 0, len(o.pending))
		for id := range o.pending {
			ids = append(ids, id)
		}
		clear(o.pending)
		dropped, all := o.dropped, o.all
		o.dropped, o.all = 0, false
		o.mu.Unlock()
		if dropped > 0 {
			o.logger.Warn("task event hints dropped: too many queued (every stream is woken instead)", "dropped", dropped, "to", o.what)
		}
		if all {
			ids = []string{All} // wakes every stream: the task IDs add nothing
		}
		if len(ids) == 0 {
			continue
		}
		err := o.send(ctx, ids)
		if err != nil && ctx.Err() == nil {
			// These hints are lost: the next send wakes every stream.
			o.mu.Lock()
			o.all = true
			o.mu.Unlock()
			o.retryLater(ctx)
		}
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			failing = true
			o.logger.Warn("task event hints not sent (streams on other processes poll meanwhile)", "to", o.what, "error", err)
		case err == nil && failing:
			failing = false
			o.logger.Info("task event hints sent again", "to", o.what)
		}
	}
}

// retryLater wakes run again after retryAfter, to send All once the
// destination takes it again (without it, the next hint would).
func (o *Outbox) retryLater(ctx context.Context) {
	go func() {
		t := time.NewTimer(retryAfter)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			o.poke()
		}
	}()
}

// Close stops sending; hints still queued are not sent.
func (o *Outbox) Close() {
	o.cancel()
	<-o.done
}
