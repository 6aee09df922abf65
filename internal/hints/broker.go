// Package hints carries "task T has a new event" hints from the task
// workflow to the streaming API when both run in one process (a2aflow
// serve). A hint only wakes a subscriber so that it queries the workflow at
// once; the events themselves always come from the workflow, so a lost hint
// costs latency, never an event, and a restart loses nothing.
//
// When the API runs in another process than the worker, hints cross
// processes through the database both are given: PostgreSQL's
// LISTEN/NOTIFY (package pghints), or Unix sockets beside a SQLite file on
// one host (package unixhints), both sent through an [Outbox]. An API
// given no database has none, and its subscribers poll (see
// api.Config.PollInterval).
package hints

import "sync"

// Broker fans hints out to the subscribers of each task. The zero value is
// not usable; call New.
type Broker struct {
	mu   sync.Mutex
	subs map[string]map[*Subscription]struct{}
	live live // the answers being written (live.go)
}

// New returns an empty broker.
func New() *Broker { return &Broker{subs: map[string]map[*Subscription]struct{}{}} }

// Subscription receives a value on C after each hint for its task; hints
// that arrive while one is pending are merged into it.
type Subscription struct {
	C      <-chan struct{}
	c      chan struct{}
	b      *Broker
	taskID string
}

// Subscribe starts receiving hints for taskID. Call Close when done.
func (b *Broker) Subscribe(taskID string) *Subscription {
	c := make(chan struct{}, 1)
	s := &Subscription{C: c, c: c, b: b, taskID: taskID}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs[taskID] == nil {
		b.subs[taskID] = map[*Subscription]struct{}{}
	}
	b.subs[taskID][s] = struct{}{}
	return s
}

// Close stops the subscription. It is safe to call more than once.
func (s *Subscription) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	delete(s.b.subs[s.taskID], s)
	if len(s.b.subs[s.taskID]) == 0 {
		delete(s.b.subs, s.taskID)
	}
}

// Notify hints every subscriber of taskID. It never blocks, which makes it
// safe to call from workflow code (see wire.Notifier).
func (b *Broker) Notify(taskID string, _ int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs[taskID] {
		select {
		case s.c <- struct{}{}:
		default: // a hint is already pending
		}
	}
}

// NotifyAll hints every subscriber of every task, as after a time in which
// hints may have been lost (a cross-process listener that (re)connects, or
// a hint for All).
func (b *Broker) NotifyAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, subs := range b.subs {
		for s := range subs {
			select {
			case s.c <- struct{}{}:
			default:
			}
		}
	}
}
