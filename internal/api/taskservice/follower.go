package taskservice

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/metrics"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// One follower per task per API process (per agent and principal, below):
// however many streams of a task this process serves (SSE, gRPC, a
// blocking SendMessage that waits for its task), one goroutine queries the
// task's workflow for new events, on a hint, a poll or after a failure,
// and every stream of the task takes the events from it, each from its own
// position (seq). 1,000 subscribers of a task cost one query per event,
// not 1,000.
//
// The follower keeps the events it fetched in a log that every stream reads
// from its own cursor; it never waits for a stream, so a slow reader delays
// no one. The log is trimmed to what its slowest stream has not taken (and
// the last followerKeepRecent events, for a stream that joins a little
// behind), up to followerMaxBacklog events: a stream more than that behind
// the follower (its client reads too slowly) is ended cleanly, as at
// shutdown, and its client resubscribes and gets the task as it is, then
// every later event. A stream joining behind the log (its first query saw
// an older state than the follower's last) has the follower query the
// workflow from its position on its next query; one joining ahead wakes
// the follower to query at once. Either way it gets every event after its
// own position, in order, once.
//
// Authorization: each stream is authorized by its own first query (the
// task it starts with, read with its principal), before it joins. The
// follower queries with the principal of its key, the same one: streams of
// one task with different principals (only possible with authentication
// off for some callers) get different followers, so no stream is ever
// served events its own query would not read, and a follower does not
// depend on the stream that created it staying. The workflow checks agent
// and owner on every query, as before: a task gone or not the principal's
// ends every stream of the follower with that error.

const (
	// followerMaxBacklog is how many events a stream may lag behind its
	// follower before it is ended (cleanly) for reading too slowly.
	followerMaxBacklog = 1024
	// followerKeepRecent is how many of its latest events a follower keeps
	// even when every stream has them, for a stream that joins a few
	// events behind (its first query raced the follower's).
	followerKeepRecent = 16
)

// followKey names a follower: the task, and the principal its queries read
// it as. A TaskService serves one agent, which its queries name too.
type followKey struct {
	task  a2a.TaskID
	owner string
}

// followers is a TaskService's registry of followers.
type followers struct {
	mu sync.Mutex
	m  map[followKey]*follower
}

// follower queries one task's workflow for the streams that follow it.
type follower struct {
	s      *TaskService
	key    followKey
	ctx    context.Context // the follower's own: ended when its last stream leaves
	cancel context.CancelFunc
	wake   chan struct{} // a stream joined ahead of or behind the log: query now

	mu   sync.Mutex
	subs map[*followCursor]struct{}
	// log holds the events after base, oldest first, with no gap: the
	// follower knows every event up to base+len(log).
	base int64
	log  []wire.Event
	// need is the lowest position of a stream behind base, which the next
	// query starts from; math.MaxInt64: none.
	need int64
	// asking is the position the query in flight started from;
	// math.MaxInt64: none. A stream behind base at or after it waits for
	// that query's answer instead of asking for another.
	asking int64
	// resync is the task as the last query that found itself behind the
	// workflow's retained events read it, for streams in that gap.
	resync *resyncPoint
	// terminal: the task's terminal event is in the log; nothing follows.
	terminal bool
	// ended: the follower stopped (err, or cleanly when nil); changed is
	// closed and replaced whenever the log grows or the follower ends.
	ended   bool
	err     error
	changed chan struct{}
}

// followCursor is one stream's position in its follower.
type followCursor struct {
	seq     int64 // the last event the stream took
	dropped bool  // ended for lagging more than followerMaxBacklog
}

// resyncPoint is the task read by a query from position from that found
// the events after from no longer retained: a stream at a position in
// [from, upTo) gets the task instead of the events, and continues after
// seq.
type resyncPoint struct {
	from, upTo, seq int64
	task            *a2a.Task
	err             error
}

func (f *follower) last() int64 { return f.base + int64(len(f.log)) }

// join adds a stream at position seq to the follower of (taskID, owner),
// starting one when there is none.
func (r *followers) join(s *TaskService, taskID a2a.TaskID, owner string, seq int64) (*follower, *followCursor) {
	key := followKey{taskID, owner}
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.m[key]
	if f != nil {
		f.mu.Lock()
		if f.ended { // ending: a new one takes its place
			f.mu.Unlock()
			f = nil
		}
	}
	c := &followCursor{seq: seq}
	if f == nil {
		ctx, cancel := context.WithCancel(guard.WithPrincipal(context.Background(), owner))
		f = &follower{s: s, key: key, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1),
			subs: map[*followCursor]struct{}{}, base: seq, need: math.MaxInt64, asking: math.MaxInt64, changed: make(chan struct{})}
		if r.m == nil {
			r.m = map[followKey]*follower{}
		}
		r.m[key] = f
		f.subs[c] = struct{}{}
		metrics.StreamFollower(1)
		go f.run()
		return f, c
	}
	defer f.mu.Unlock()
	f.subs[c] = struct{}{}
	switch {
	case seq < f.base && (f.resync == nil || seq < f.resync.from || seq >= f.resync.upTo):
		f.behind(seq)
	case seq > f.last():
		f.poke()
	}
	return f, c
}

// leave removes a stream; the last one to leave stops the follower.
func (r *followers) leave(f *follower, c *followCursor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.subs, c)
	if len(f.subs) == 0 {
		if r.m[f.key] == f {
			delete(r.m, f.key)
		}
		f.cancel()
	}
}

// count reports how many followers run (tests).
func (r *followers) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.m)
}

// behind has the follower query from seq, for a stream there behind the
// log, unless the query in flight already started at or before it (its
// answer serves the stream). Call with f.mu held.
func (f *follower) behind(seq int64) {
	if f.asking <= seq {
		return
	}
	f.need = min(f.need, seq)
	f.poke()
}

// poke has the follower query at once. Call with f.mu held or not.
func (f *follower) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// broadcast wakes the streams waiting for the follower. Call with f.mu held.
func (f *follower) broadcast() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// next is what a stream has next (follower.take).
type next struct {
	resync  *resyncPoint // a task to resynchronise with (or the error reading it)
	events  []wire.Event // the events after the stream's position
	end     bool         // the stream ends: with err, or cleanly
	err     error
	dropped bool            // ended for lagging more than followerMaxBacklog
	changed <-chan struct{} // with nothing else: closed when there may be more
}

// take returns what the stream at c has next, and moves c past it.
func (f *follower) take(c *followCursor) next {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch last := f.last(); {
	case c.dropped:
		return next{end: true, dropped: true}
	case c.seq < f.base:
		if rp := f.resync; rp != nil && rp.from <= c.seq && c.seq < rp.upTo {
			c.seq = rp.seq
			return next{resync: rp}
		}
		if f.ended {
			return next{end: true, err: f.err}
		}
		f.behind(c.seq)
	case c.seq < last:
		events := f.log[c.seq-f.base:]
		c.seq = last
		return next{events: events}
	case f.ended:
		return next{end: true, err: f.err}
	}
	return next{changed: f.changed}
}

// Follow yields the task's events after seq until stop accepts one, the
// caller stops reading or ctx ends, taking them from the task's follower
// in this process (see above). With a live context ID (the task's), the
// chunks of the answers its LLM calls are writing come between them
// (live.go), when this process hears of them (s.notifier).
func (s *TaskService) Follow(ctx context.Context, taskID a2a.TaskID, seq int64, live string, stop func(wire.Event) bool, yield func(a2a.Event, error) bool) {
	f, c := s.followers.join(s, taskID, guard.Principal(ctx), seq)
	defer s.followers.leave(f, c)
	var lc *hints.LiveCursor
	var liveChanged <-chan struct{}
	if live != "" && s.notifier != nil {
		lc = s.notifier.LiveCursor(string(taskID))
	}
	for {
		// The server is shutting down: end the stream now, cleanly. The
		// client resubscribes (to another replica, or to this server once
		// restarted) and gets the task as it is, then every later event.
		if s.shutDown() {
			return
		}
		n := f.take(c)
		switch {
		case n.resync != nil:
			// Too far behind the retained events: resynchronise with the task.
			if n.resync.err != nil {
				yield(nil, n.resync.err)
				return
			}
			if !yield(stampTask(ctx, n.resync.task, n.resync.seq), nil) || n.resync.task.Status.State.Terminal() {
				return
			}
			continue
		case len(n.events) > 0:
			for _, e := range n.events {
				if lc != nil && e.Status != nil && (e.Status.Status.State.Terminal() || Interrupted(e.Status.Status.State)) {
					// The task's message landed: the answers being written
					// end first, the one it holds completed from it.
					if !yieldLive(taskID, live, lc, e.Status.Status.Message, yield) {
						return
					}
				}
				if lc != nil && e.Artifact != nil && e.Artifact.Artifact != nil {
					// The durable copy of an artifact relayed live: no
					// late chunk of it after this.
					lc.Landed(string(e.Artifact.Artifact.ID))
				}
				if !yield(stampEvent(ctx, e.A2A(), e.Seq), nil) || stop(e) {
					return
				}
			}
			continue
		case n.end:
			if n.err != nil {
				yield(nil, n.err)
			} else if n.dropped {
				s.logger.WarnContext(ctx, "ending a stream: its client reads too slowly", "task_id", taskID,
					"behind_by_more_than", followerMaxBacklog)
			}
			return
		}
		// No event: the answers being written, if any.
		if lc != nil {
			chunks, changed := lc.Take()
			liveChanged = changed
			for _, ch := range chunks {
				if !yield(liveEvent(taskID, live, ch), nil) {
					return
				}
			}
			if len(chunks) > 0 {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.shuttingDown:
			return
		case <-n.changed:
		case <-liveChanged:
		}
	}
}

// run is the follower's loop: it queries the workflow when the notifier
// hints a new event, a stream joins off the log, or a poll interval passes
// without a query (with hints, a safety net: see Config.PollInterval), and
// ends when its last stream leaves, at shutdown, on an error that is
// not the workflow being unreachable (the task is gone, or not the
// principal's), or when the workflow stays unreachable for
// unreachableAfter.
func (f *follower) run() {
	s := f.s
	defer metrics.StreamFollower(-1)
	var hints <-chan struct{}
	if s.notifier != nil {
		sub := s.notifier.Subscribe(string(f.key.task))
		defer sub.Close()
		hints = sub.C
		if s.closed != nil {
			s.closed.acquire()
			defer s.closed.release()
		}
	}
	poll := time.NewTimer(0) // query at once: events may have come before the subscription
	defer poll.Stop()
	var failing queryFailures
	for {
		reason, ok := f.next(hints, poll.C, failing.n > 0)
		if !ok {
			return
		}
		after := f.startQuery()
		asked := time.Now()
		out, timedOut, err := f.query(after, reason)
		if err != nil {
			wait, ok := f.failed(err, after, timedOut, asked, &failing)
			if !ok {
				return
			}
			poll.Reset(wait)
			continue
		}
		failing = queryFailures{}
		f.queried(after, out, reason)
		poll.Reset(s.pollInterval)
	}
}

// queryFailures are the follower's queries that failed in a row: how many,
// and since when the workflow has been unreachable.
type queryFailures struct {
	n     int
	since time.Time
}

// next waits for the follower's next query and returns why it queries
// (the reason metrics.StreamQuery counts); false when the follower ends
// instead: its last stream left, or the server is shutting down.
func (f *follower) next(hints <-chan struct{}, poll <-chan time.Time, retrying bool) (string, bool) {
	s := f.s
	if s.shutDown() {
		f.finish(nil)
		return "", false
	}
	f.mu.Lock()
	terminal, need := f.terminal, f.need
	f.mu.Unlock()
	if terminal && need == math.MaxInt64 {
		// Nothing follows a terminal event: wait for the streams to
		// take it and leave, or one that joins behind.
		hints, poll = nil, nil
	}
	select {
	case <-f.ctx.Done():
		return "", false
	case <-s.shuttingDown:
		f.finish(nil)
		return "", false
	case <-hints:
		return metrics.StreamQueryHint, true
	case <-f.wake:
		return metrics.StreamQueryJoin, true
	case <-poll:
		if retrying {
			return metrics.StreamQueryRetry, true
		}
		return metrics.StreamQueryPoll, true
	}
}

// startQuery returns the position the next query starts from, noting it
// as the query in flight.
func (f *follower) startQuery() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	after := min(f.last(), f.need)
	f.need, f.asking = math.MaxInt64, after
	return after
}

// query asks the workflow for the events after position after. Each query
// is bounded: one to a Temporal node that went away can otherwise block
// for as long as the connection lingers, holding the streams open with
// nothing on them. timedOut says the bound passed.
func (f *follower) query(after int64, reason string) (out wire.EventsOutput, timedOut bool, err error) {
	s := f.s
	metrics.StreamQuery(reason)
	qctx, cancel := context.WithTimeout(f.ctx, s.queryTimeout)
	defer cancel()
	out, err = s.queryEvents(qctx, f.key.task, wire.EventsInput{After: after, HistoryLength: s.historyLimit(nil)})
	return out, qctx.Err() != nil, err
}

// failed takes the failure err of the query from position after, sent at
// asked (timedOut: its bound passed), and returns when to query again; or
// false when the follower ends: the task is gone or not the principal's,
// or its workflow has been unreachable for unreachableAfter.
func (f *follower) failed(err error, after int64, timedOut bool, asked time.Time, failing *queryFailures) (time.Duration, bool) {
	s := f.s
	if f.ctx.Err() != nil {
		return 0, false
	}
	f.mu.Lock()
	f.need = min(f.need, after) // ask again for what this query asked
	f.asking = math.MaxInt64
	f.mu.Unlock()
	// A slow or briefly unavailable Temporal must not end the
	// streams: the events wait in the workflow. Anything else (the
	// task is gone, or not the caller's) ends them.
	if !timedOut && !errors.Is(err, a2a.ErrServerError) && !errors.Is(err, a2a.ErrInternalError) {
		f.finish(err)
		return 0, false
	}
	if failing.since.IsZero() {
		failing.since = asked // unreachable since the first failed query was sent
	}
	// ...or since this process lost Temporal, when that came first.
	since := failing.since
	if down := s.closed.unreachableSince(); !down.IsZero() && down.Before(since) {
		since = down
	}
	// Unreachable for too long: end the streams cleanly, as at
	// shutdown, so that their clients resubscribe (to another
	// replica, whose Temporal connection may be fine) instead of
	// waiting on streams that carry nothing.
	left := s.unreachableAfter - time.Since(since)
	if left <= 0 {
		s.logger.WarnContext(f.ctx, "ending the streams of a task: its workflow is unreachable", "task_id", f.key.task,
			"for", time.Since(since).Round(time.Millisecond), "error", err)
		f.finish(nil)
		return 0, false
	}
	failing.n++
	return min(time.Duration(min(failing.n, maxQueryBackoff))*time.Second, left), true
}

// queried applies the answer out of the query from position after, which
// reason started.
func (f *follower) queried(after int64, out wire.EventsOutput, reason string) {
	s := f.s
	var rp *resyncPoint
	if out.Task != nil {
		// The query's position is behind the retained events: the
		// streams there resynchronise with the task.
		rp = &resyncPoint{from: after, upTo: out.Last - int64(len(out.Events)), seq: out.Last}
		if snap, err := s.withHistory(f.ctx, out.Task, s.historyLimit(nil)); err != nil {
			rp.err = err
		} else {
			rp.task = snap.Task
		}
	}
	grew := f.apply(after, out, rp)
	if grew && reason == metrics.StreamQueryPoll && s.notifier != nil {
		// Every way a hint is known to get lost wakes every stream
		// (package pghints); this one was not.
		s.logger.InfoContext(f.ctx, "a stream's safety poll found events no hint announced", "task_id", f.key.task)
	}
}

// apply adds what a query from position after returned to the log, and
// trims the log to what its streams still need. It reports whether the
// task had events the follower did not know.
func (f *follower) apply(after int64, out wire.EventsOutput, rp *resyncPoint) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asking = math.MaxInt64
	last := f.last()
	switch {
	case rp != nil:
		f.resync = rp
		f.base, f.log = rp.upTo, out.Events
	case out.Last <= last && after >= f.base:
		return false // nothing new
	case after < f.base:
		// Asked from behind the log for a stream that joined there: the
		// answer holds every event after it.
		f.base, f.log = after, out.Events
	default:
		for _, e := range out.Events {
			if e.Seq == f.last()+1 { // after the log, in order (never twice)
				f.log = append(f.log, e)
			}
		}
	}
	for _, e := range f.log {
		if e.Status != nil && e.Status.Status.State.Terminal() {
			f.terminal = true
		}
	}
	f.trim()
	f.broadcast()
	return out.Last > last
}

// trim drops the events every stream has (but the last few), and ends the
// streams more than followerMaxBacklog behind. Call with f.mu held.
func (f *follower) trim() {
	last := f.last()
	keep := last - followerKeepRecent // keep the events after keep...
	floor := last - followerMaxBacklog
	for c := range f.subs {
		if c.dropped || c.seq < f.base {
			continue // ended, or joined behind and waiting for a query
		}
		if c.seq < floor {
			c.dropped = true
			continue
		}
		keep = min(keep, c.seq) // ...and every event a stream has not taken
	}
	if keep > f.base {
		n := int(min(keep, last) - f.base)
		f.log = append([]wire.Event(nil), f.log[n:]...)
		f.base += int64(n)
	}
	if f.resync != nil && f.base >= f.resync.upTo && len(f.subs) > 0 {
		behind := false
		for c := range f.subs {
			if !c.dropped && c.seq < f.resync.upTo {
				behind = true
			}
		}
		if !behind {
			f.resync = nil
		}
	}
}

// finish ends the follower and its streams: with err, or cleanly.
func (f *follower) finish(err error) {
	f.mu.Lock()
	f.ended, f.err = true, err
	f.broadcast()
	f.mu.Unlock()
	r := &f.s.followers
	r.mu.Lock()
	if r.m[f.key] == f {
		delete(r.m, f.key)
	}
	r.mu.Unlock()
}

// shutDown reports whether the server is shutting down
// (Config.ShuttingDown).
func (s *TaskService) shutDown() bool {
	select {
	case <-s.shuttingDown:
		return true
	default:
		return false
	}
}
