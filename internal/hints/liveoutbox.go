package hints

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"unicode/utf8"
)

// maxLivePending bounds the bytes of text a LiveOutbox holds while
// sending: beyond it, deltas are dropped (their answers' subscribers get
// the whole answer with the task's message).
const maxLivePending = 4 << 20

// LiveOutbox queues deltas for other processes and sends them, in order,
// from a goroutine of its own, for the cross-process senders (packages
// pghints and unixhints). Live never blocks: the deltas of one answer that
// come while a send is under way are joined into one, and beyond
// maxLivePending they are dropped. A failed send is not retried: its
// answers' subscribers see no more of them live (the receiver sees the gap)
// and get each whole with its task's message.
type LiveOutbox struct {
	send   func(ctx context.Context, batch []Delta) error
	logger *slog.Logger
	what   string

	mu      sync.Mutex
	pending []Delta
	bytes   int
	wake    chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
}

// NewLiveOutbox starts a LiveOutbox that sends with send; what names the
// destination in log lines. Close it when done.
func NewLiveOutbox(send func(ctx context.Context, batch []Delta) error, what string, logger *slog.Logger) *LiveOutbox {
	ctx, cancel := context.WithCancel(context.Background())
	o := &LiveOutbox{send: send, logger: logger, what: what, wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go o.run(ctx)
	return o
}

// Live implements LiveNotifier.
func (o *LiveOutbox) Live(d Delta) {
	o.mu.Lock()
	if o.bytes+len(d.Text) > maxLivePending {
		o.mu.Unlock()
		return
	}
	o.bytes += len(d.Text)
	if n := len(o.pending); n > 0 {
		last := &o.pending[n-1]
		if last.Task == d.Task && last.Call == d.Call && last.Attempt == d.Attempt && last.Since == d.Since && !last.Done && last.Offset+len(last.Text) == d.Offset {
			last.Text += d.Text
			last.Done = d.Done
			o.mu.Unlock()
			o.poke()
			return
		}
	}
	o.pending = append(o.pending, d)
	o.mu.Unlock()
	o.poke()
}

func (o *LiveOutbox) poke() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func (o *LiveOutbox) run(ctx context.Context) {
	defer close(o.done)
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-o.wake:
		}
		o.mu.Lock()
		batch := o.pending
		o.pending, o.bytes = nil, 0
		o.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		err := o.send(ctx, batch)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			failing = true
			o.logger.Warn("live answers not sent (their subscribers get each answer whole, with its task's message)", "to", o.what, "error", err)
		case err == nil && failing:
			failing = false
			o.logger.Info("live answers sent again", "to", o.what)
		}
	}
}

// Close stops sending; deltas still queued are not sent.
func (o *LiveOutbox) Close() {
	o.cancel()
	<-o.done
}

// LiveBatch is the JSON of a message of deltas between processes.
type LiveBatch struct {
	Live []Delta `json:"live"`
}

// EncodeLive encodes deltas as LiveBatch JSON messages of at most max
// bytes each, splitting a delta's text (at character boundaries) where one
// alone is longer. max must leave room for a delta with a few characters.
func EncodeLive(deltas []Delta, max int) [][]byte {
	var out [][]byte
	var cur []json.RawMessage
	size := len(`{"live":[]}`)
	flush := func() {
		if len(cur) == 0 {
			return
		}
		raw, _ := json.Marshal(struct {
			Live []json.RawMessage `json:"live"`
		}{cur})
		out = append(out, raw)
		cur, size = nil, len(`{"live":[]}`)
	}
	var add func(d Delta)
	add = func(d Delta) {
		raw, _ := json.Marshal(d)
		if len(raw)+len(`{"live":[]}`) > max && len(d.Text) > 1 {
			cut := len(d.Text) / 2
			for cut > 0 && !utf8.RuneStart(d.Text[cut]) {
				cut--
			}
			if cut > 0 {
				first, second := d, d
				first.Text, first.Done = d.Text[:cut], false
				second.Text, second.Offset = d.Text[cut:], d.Offset+cut
				add(first)
				add(second)
				return
			}
		}
		if size+len(raw)+1 > max {
			flush()
		}
		cur = append(cur, raw)
		size += len(raw) + 1
	}
	for _, d := range deltas {
		add(d)
	}
	flush()
	return out
}
