package hints

import (
	"bytes"
	"cmp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Live answers: the text an LLM call of a task is writing, carried from
// the CompleteChat activity to the API processes as Deltas, beside the
// hints and over the same carriers (in one process the Broker, between
// processes pghints and unixhints), never through the workflow: history
// records the final answer once, as the task's message.
//
// Like a hint, a delta is a best effort: one that is lost leaves a gap in
// its answer, whose subscribers then see no more of it live and get the
// whole answer when the task's message lands, from the workflow. A delta
// names its attempt and its byte offset in the answer, so a delta sent
// twice is taken once, and a retried call (a new attempt) starts its
// answer again instead of adding a second copy to the first.

// Delta is a piece of the answer one LLM call writes for a task.
type Delta struct {
	// Task is the task's ID.
	Task string `json:"t"`
	// Call names the LLM call within the task (its run and activity).
	Call string `json:"c"`
	// Attempt is the activity's attempt, from 1: a higher one starts the
	// answer again.
	Attempt int32 `json:"a"`
	// Since orders the executions of a local activity (a call of a task
	// started with wire.LocalModelCalls), whose attempts start
	// again at 1 when a worker that died mid-call is replaced: the time
	// (Unix nanoseconds) its worker scheduled it, the same for its
	// attempts on that worker. A higher Since starts the answer again,
	// whatever the attempt; 0 for an ordinary activity, whose attempts the
	// server numbers.
	Since int64 `json:"g,omitempty"`
	// Offset is where Text starts in the attempt's answer, in bytes.
	Offset int `json:"o"`
	// Text is the piece.
	Text string `json:"x,omitempty"`
	// Done: the attempt's answer is complete (or the attempt ended).
	Done bool `json:"d,omitempty"`
	// Status: the text is not an answer's piece but a whole progress
	// message of the task (a remote agent's working status, relayed by
	// the call that follows it), sent with Done. Its streams show it once
	// it is whole, as a status update, and never join it to the task's
	// message.
	Status bool `json:"s,omitempty"`
	// Artifact: the text is not an answer's piece but parts of an
	// artifact of the task relayed as they come (a remote agent's
	// artifact-update events, relayed by the call that follows it): Text
	// is the parts as JSON, one a line, Offset where the piece starts in
	// them, Attempt the artifact's generation (a higher one replaces what
	// the earlier showed: A2A append false) and Done its last chunk. Its
	// streams show whole parts only, as artifact updates of that ID.
	Artifact *LiveArtifact `json:"r,omitempty"`
}

// LiveArtifact names the artifact a Delta relays.
type LiveArtifact struct {
	// ID is the artifact's ID in the task; Name its name.
	ID   string `json:"i"`
	Name string `json:"n,omitempty"`
}

// LiveNotifier takes the deltas of the answers being written. Live must not
// block: it is called for every piece of every answer.
type LiveNotifier interface {
	Live(d Delta)
}

const (
	// maxLiveAnswer bounds the text an API keeps of one answer; the rest
	// of a longer answer comes with the task's message.
	maxLiveAnswer = 1 << 20
	// maxLiveTasks bounds the tasks with answers an API keeps.
	maxLiveTasks = 4096
	// liveKeepDone is how long an answer is kept once done (or silent).
	liveKeepDone = time.Minute
	// liveKeepSilent is how long an answer not done is kept without news
	// (its worker may be gone; a retry starts it again).
	liveKeepSilent = 10 * time.Minute
)

// liveAnswer is what an API knows of one call's answer.
type liveAnswer struct {
	call     string
	since    int64 // Delta.Since
	attempt  int32
	text     []byte
	done     bool
	broken   bool          // a delta was lost: no more of this attempt live
	status   bool          // a progress message (Delta.Status)
	artifact *LiveArtifact // an artifact relayed (Delta.Artifact)
	updated  time.Time
}

// liveTask holds the answers of one task, in the order they started.
type liveTask struct {
	answers []*liveAnswer
	changed chan struct{} // closed and replaced when an answer changes
	updated time.Time
}

// live is the Broker's store of answers.
type live struct {
	mu    sync.Mutex
	tasks map[string]*liveTask
	swept time.Time
}

// Live implements LiveNotifier: the broker keeps the answer and wakes its
// streams.
func (b *Broker) Live(d Delta) {
	l := &b.live
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tasks == nil {
		l.tasks = map[string]*liveTask{}
	}
	if now.Sub(l.swept) > 10*time.Second || len(l.tasks) >= maxLiveTasks {
		l.sweep(now)
	}
	lt := l.tasks[d.Task]
	if lt == nil {
		lt = &liveTask{changed: make(chan struct{})}
		l.tasks[d.Task] = lt
	}
	var a *liveAnswer
	for _, x := range lt.answers {
		if x.call == d.Call {
			a = x
		}
	}
	if a == nil {
		a = &liveAnswer{call: d.Call, since: d.Since, attempt: d.Attempt}
		lt.answers = append(lt.answers, a)
	}
	switch c := compareAttempts(d.Since, d.Attempt, a.since, a.attempt); {
	case c < 0:
		return // an earlier attempt's late piece
	case c > 0:
		*a = liveAnswer{call: d.Call, since: d.Since, attempt: d.Attempt}
	}
	a.status = a.status || d.Status
	if d.Artifact != nil {
		a.artifact = d.Artifact
	}
	if !a.broken {
		end := d.Offset + len(d.Text)
		switch {
		case d.Offset > len(a.text):
			a.broken = true // a piece was lost
		case a.artifact != nil && !bytes.HasPrefix(a.text[d.Offset:], []byte(d.Text[:min(len(d.Text), len(a.text)-d.Offset)])):
			// An artifact's piece sent again differs from what came: a
			// version this process did not hear of. No more of it live.
			a.broken = true
		case end > len(a.text):
			add := d.Text[len(a.text)-d.Offset:]
			if len(a.text)+len(add) > maxLiveAnswer {
				a.broken = true
				break
			}
			a.text = append(a.text, add...)
		}
	}
	if d.Done {
		a.done = true
	}
	a.updated, lt.updated = now, now
	close(lt.changed)
	lt.changed = make(chan struct{})
}

// compareAttempts orders two attempts of one call: by Since (a local
// activity's execution), then by attempt.
func compareAttempts(since1 int64, attempt1 int32, since2 int64, attempt2 int32) int {
	switch {
	case since1 != since2:
		return cmp.Compare(since1, since2)
	default:
		return cmp.Compare(attempt1, attempt2)
	}
}

// sweep forgets the answers done or silent for long. Call with l.mu held.
func (l *live) sweep(now time.Time) {
	l.swept = now
	var oldest string
	for id, lt := range l.tasks {
		kept := lt.answers[:0]
		for _, a := range lt.answers {
			if (a.done || a.broken) && now.Sub(a.updated) < liveKeepDone || !a.done && now.Sub(a.updated) < liveKeepSilent {
				kept = append(kept, a)
			}
		}
		lt.answers = kept
		if len(kept) == 0 {
			close(lt.changed)
			delete(l.tasks, id)
			continue
		}
		if oldest == "" || lt.updated.Before(l.tasks[oldest].updated) {
			oldest = id
		}
	}
	if len(l.tasks) >= maxLiveTasks && oldest != "" {
		close(l.tasks[oldest].changed)
		delete(l.tasks, oldest)
	}
}

// LiveChunk is a piece of an answer for one stream (LiveCursor.Take).
type LiveChunk struct {
	// Call names the LLM call; Attempt its attempt.
	Call    string
	Attempt int32
	// Text is the piece.
	Text string
	// Restart: the piece starts the answer (again): it replaces what the
	// stream sent of the call before (A2A artifact-update append false).
	Restart bool
	// Last: the answer is complete.
	Last bool
	// Status: Text is a whole progress message (Delta.Status), not an
	// answer's piece.
	Status bool
	// Artifact: Text is whole parts of this artifact, as JSON lines
	// (Delta.Artifact); Restart replaces the artifact's parts, else they
	// are appended.
	Artifact *LiveArtifact
}

// LiveCursor is one stream's position in the live answers of a task.
type LiveCursor struct {
	b     *Broker
	task  string
	calls map[string]*liveSent
	seen  bool // the first Take happened
}

type liveSent struct {
	since   int64
	attempt int32
	sent    int
	last    bool
}

// LiveCursor returns a cursor over taskID's live answers for one stream.
// Its first Take returns the answers still being written (each from its
// start) and the latest progress message (Delta.Status), later ones what
// was added since, and the answers and messages started since.
func (b *Broker) LiveCursor(taskID string) *LiveCursor {
	return &LiveCursor{b: b, task: taskID, calls: map[string]*liveSent{}}
}

// Take returns the chunks the stream has not sent, and a channel closed
// when there may be more.
func (c *LiveCursor) Take() ([]LiveChunk, <-chan struct{}) {
	l := &c.b.live
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tasks == nil {
		l.tasks = map[string]*liveTask{}
	}
	lt := l.tasks[c.task]
	if lt == nil {
		// Nothing yet: a placeholder whose channel the first delta closes.
		lt = &liveTask{changed: make(chan struct{}), updated: time.Now()}
		l.tasks[c.task] = lt
	}
	first := !c.seen
	c.seen = true
	latest := -1 // the task's latest progress message, which a joining stream shows
	for i, a := range lt.answers {
		if a.status && a.done {
			latest = i
		}
	}
	var out []LiveChunk
	for i, a := range lt.answers {
		s := c.calls[a.call]
		if s == nil {
			if first && a.done && i != latest && a.artifact == nil {
				// Done before this stream joined: the task's message
				// brings it (or brought it).
				c.calls[a.call] = &liveSent{since: a.since, attempt: a.attempt, sent: len(a.text), last: true}
				continue
			}
			s = &liveSent{since: a.since, attempt: a.attempt}
			c.calls[a.call] = s
		}
		switch compareAttempts(a.since, a.attempt, s.since, s.attempt) {
		case -1:
			continue
		case 1: // a retried call: its answer starts over
			*s = liveSent{since: a.since, attempt: a.attempt}
		}
		if s.last {
			continue
		}
		restart := s.sent == 0 // the stream's first chunk of this attempt
		if restart && a.broken {
			continue // its start is lost: nothing to show
		}
		if a.status {
			// A progress message shows whole, once (not at all if a
			// piece of it was lost).
			if a.done && !a.broken {
				s.sent, s.last = len(a.text), true
				out = append(out, LiveChunk{Call: a.call, Attempt: a.attempt, Text: string(a.text), Restart: true, Last: true, Status: true})
			}
			continue
		}
		n := len(a.text)
		switch {
		case a.artifact != nil && a.broken:
			continue // a part was lost: the durable copy brings the artifact
		case a.artifact != nil:
			n = s.sent + bytes.LastIndexByte(a.text[s.sent:], '\n') + 1 // whole parts only
		case !a.done || a.broken:
			n = validPrefix(a.text, s.sent, n) // whole characters only
		}
		if n <= s.sent && !(a.done && s.sent > 0) {
			continue
		}
		ch := LiveChunk{Call: a.call, Attempt: a.attempt, Text: string(a.text[s.sent:n]), Restart: restart, Last: a.done && n == len(a.text), Artifact: a.artifact}
		if ch.Text == "" && !ch.Last {
			continue
		}
		s.sent, s.last = n, ch.Last
		out = append(out, ch)
	}
	return out, lt.changed
}

// validPrefix is the end, at most end, of text's longest prefix from start
// made of whole UTF-8 characters.
func validPrefix(text []byte, start, end int) int {
	for end > start && !utf8.Valid(text[start:end]) {
		end--
	}
	return end
}

// Finish ends the answers the stream has open when the task's message
// lands (final, its text) before the rest of them did: the latest answer
// whose text so far begins final gets the rest of final as its last chunk,
// any other ends as it is (a last chunk without text).
func (c *LiveCursor) Finish(final string) []LiveChunk {
	l := &c.b.live
	l.mu.Lock()
	defer l.mu.Unlock()
	lt := l.tasks[c.task]
	if lt == nil {
		return nil
	}
	var out []LiveChunk
	matched := false
	for i := len(lt.answers) - 1; i >= 0; i-- {
		a := lt.answers[i]
		s := c.calls[a.call]
		if s == nil || s.last || s.sent == 0 || s.attempt != a.attempt || a.status || a.artifact != nil {
			continue
		}
		ch := LiveChunk{Call: a.call, Attempt: a.attempt, Last: true}
		if sent := string(a.text[:s.sent]); !matched && strings.HasPrefix(final, sent) {
			ch.Text, matched = final[len(sent):], true
		}
		s.last = true
		out = append(out, ch)
	}
	return out
}

// Landed tells the cursor that the stream sent the durable copy of the
// relayed artifact id (Delta.Artifact): no more of it is shown live, so
// that a late chunk does not add to the final content.
func (c *LiveCursor) Landed(id string) {
	l := &c.b.live
	l.mu.Lock()
	defer l.mu.Unlock()
	lt := l.tasks[c.task]
	if lt == nil {
		return
	}
	for _, a := range lt.answers {
		if a.artifact != nil && a.artifact.ID == id {
			c.calls[a.call] = &liveSent{attempt: a.attempt, sent: len(a.text), last: true}
		}
	}
}
