package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/activity"

	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// relayer sends the working status messages of the remote task an activity
// reads to Live (Remote.Live). A message is named by its remote task and
// ID (else by the activity and its rank in it), so that the API processes
// show it once though a send and the follows after it all see it.
//
// With RelayArtifacts it also relays the remote task's artifacts as they
// come (artifact-update events of its stream, or the artifacts a read
// finds grown): each as a Delta with Artifact, under the ID
// wire.RelayedArtifactID gives it in our task (the one its durable copy
// gets), its parts as JSON lines at their byte offset in the artifact, and
// the artifact's generation as the Delta's attempt: a replacement (append
// false for an artifact already sent, or a read that finds other parts)
// is the next generation, which the API shows as append false. The same
// parts sent again (by a retried attempt, or a follow after the send)
// have the same offsets and are taken once.
//
// The artifacts the remote finished (lastChunk) are recorded in the
// activity's heartbeat details with their parts (within maxBeatBytes),
// with the generations, at once (beatNow: Remote.Heartbeats, not the SDK's
// throttled heartbeat), once per finished artifact: durable on the
// Temporal server, they go to the next attempt if our worker dies, which
// relays the same generations and answers with the finished artifacts
// even if the remote no longer lists them. The generations go on to the
// workflow (RemoteTaskResult.Relayed), which hands them to the next follow.
type relayer struct {
	ctx        context.Context
	live       hints.LiveNotifier // nil: the state is kept, nothing relayed
	heartbeats HeartbeatRecorder  // Remote.Heartbeats
	task       string
	activity   string
	secret     string // redacted from the text (a credential's send)
	n          int
	last       string // the last message relayed (a poll sees it again)

	mu        sync.Mutex // the heartbeat's goroutine reads what follows
	artifacts bool       // relay the artifacts (RelayArtifacts)
	sent      a2a.TaskID // the send's new remote task (sentTask), once recorded
	arts      map[a2a.ArtifactID]*relayedArtifact
	order     []a2a.ArtifactID // of arts, as they came
	beatJSON  json.RawMessage  // relayBeat as last encoded, nil when changed since
}

// relayedArtifact is a remote artifact as the relayer sent it.
type relayedArtifact struct {
	gen   int
	name  string
	parts a2a.ContentParts
	enc   []byte // parts as JSON lines
	done  bool   // its last chunk came
}

// relayBeat is the remote activities' heartbeat details.
type relayBeat struct {
	// Task is the send's new remote task, once recorded (sentTask).
	Task a2a.TaskID `json:"t,omitempty"`
	// Generations of the artifacts relayed, when above 1.
	Generations map[a2a.ArtifactID]int `json:"g,omitempty"`
	// Finished are the artifacts the remote finished, as it sent them.
	Finished []*a2a.Artifact `json:"f,omitempty"`
}

// maxBeatBytes bounds the parts of the finished artifacts recorded in the
// heartbeat details; the rest is the remote's to keep.
const maxBeatBytes = 512 << 10

// maxRelayedName bounds the part of a relayed message's name that the
// remote agent chose.
const maxRelayedName = 200

// relay returns the activity's relayer. relayArtifacts and generations are
// the input's (RelayArtifacts, Relayed); an earlier attempt's heartbeat
// details add to them.
func (a *Remote) relay(ctx context.Context, relayArtifacts bool, generations map[a2a.ArtifactID]int) *relayer {
	info := activity.GetInfo(ctx)
	r := &relayer{ctx: ctx, live: a.Live, heartbeats: a.Heartbeats, task: info.WorkflowExecution.ID, secret: redactionOf(ctx),
		activity:  LiveCallName(info.WorkflowExecution.RunID, info.ActivityID) + fmt.Sprintf("-a%d", info.Attempt),
		artifacts: relayArtifacts, arts: map[a2a.ArtifactID]*relayedArtifact{}}
	var beat relayBeat
	if activity.HasHeartbeatDetails(ctx) && activity.GetHeartbeatDetails(ctx, &beat) == nil {
		r.sent = beat.Task
	}
	if !relayArtifacts {
		return r
	}
	for id, g := range generations {
		r.artifact(id).gen = max(g, 1)
	}
	for id, g := range beat.Generations {
		if st := r.artifact(id); g > st.gen {
			st.gen = g
		}
	}
	for _, f := range beat.Finished {
		if f == nil {
			continue
		}
		st := r.artifact(f.ID)
		st.name, st.parts, st.enc, st.done = f.Name, f.Parts, encodeParts(f.Parts), true
	}
	return r
}

// artifact is the state of the remote artifact id, new at generation 1.
// Call with r.mu held (or before the relayer is shared).
func (r *relayer) artifact(id a2a.ArtifactID) *relayedArtifact {
	st := r.arts[id]
	if st == nil {
		st = &relayedArtifact{gen: 1}
		r.arts[id] = st
		r.order = append(r.order, id)
	}
	return st
}

// status relays s's message, when the remote task (remoteTask) is working
// and the message has text.
func (r *relayer) status(remoteTask a2a.TaskID, s a2a.TaskStatus) {
	if r == nil || r.live == nil || s.State != a2a.TaskStateWorking || s.Message == nil {
		return
	}
	var text strings.Builder
	for _, p := range s.Message.Parts {
		text.WriteString(p.Text())
	}
	if text.Len() == 0 {
		return
	}
	d := hints.Delta{Task: r.task, Attempt: 1, Text: text.String(), Done: true, Status: true}
	if s.Message.ID != "" {
		d.Call = "remote-" + string(remoteTask) + "/" + s.Message.ID
		if len(d.Call) > maxRelayedName {
			d.Call = d.Call[:maxRelayedName]
		}
	} else {
		r.n++
		d.Call = fmt.Sprintf("%s-m%d", r.activity, r.n)
	}
	key := d.Call + "\x00" + d.Text
	if s.Message.ID != "" && key == r.last {
		return
	}
	r.last = key
	if r.secret != "" {
		d.Text = strings.ReplaceAll(d.Text, r.secret, redacted)
	}
	r.live.Live(d)
}

// update relays an artifact-update event of the remote task remoteTask.
func (r *relayer) update(remoteTask a2a.TaskID, e *a2a.TaskArtifactUpdateEvent) {
	if r == nil || !r.artifacts || e.Artifact == nil || e.Artifact.ID == "" {
		return
	}
	r.mu.Lock()
	st := r.artifact(e.Artifact.ID)
	parts := r.redactParts(e.Artifact.Parts)
	if !e.Append {
		if len(st.enc) > 0 || st.done {
			st.gen++ // a new version of the artifact
		}
		st.parts, st.enc, st.done = nil, nil, false
	}
	if e.Artifact.Name != "" {
		st.name = e.Artifact.Name
	}
	off, add := len(st.enc), encodeParts(parts)
	st.parts = append(st.parts, parts...)
	st.enc = append(st.enc, add...)
	st.done = e.LastChunk
	r.beatJSON = nil
	d := r.delta(remoteTask, e.Artifact.ID, st, off, add)
	r.mu.Unlock()
	if r.live != nil {
		r.live.Live(d)
	}
	if e.LastChunk {
		r.beatNow()
	}
}

// snapshot relays what a read of the remote task (task) shows of its
// artifacts that was not relayed: the parts added since, or the whole
// artifact when it is new to this activity (the API takes only the parts
// it lacks) or replaced. A terminal task's artifacts are finished.
func (r *relayer) snapshot(task *a2a.Task) {
	if r == nil || !r.artifacts || task == nil {
		return
	}
	terminal := task.Status.State.Terminal()
	var deltas []hints.Delta
	r.mu.Lock()
	for _, a := range task.Artifacts {
		if a == nil || a.ID == "" {
			continue
		}
		_, known := r.arts[a.ID]
		st := r.artifact(a.ID)
		parts := r.redactParts(a.Parts)
		enc := encodeParts(parts)
		if a.Name != "" {
			st.name = a.Name
		}
		off := 0
		switch {
		case known && len(st.enc) > 0 && !bytes.HasPrefix(enc, st.enc):
			st.gen++ // replaced
		case known && len(st.enc) > 0:
			off = len(st.enc)
		}
		wasDone := st.done
		st.parts, st.enc, st.done = parts, enc, st.done || terminal
		r.beatJSON = nil
		if off == len(enc) && (wasDone || !terminal) {
			continue // nothing new
		}
		deltas = append(deltas, r.delta(task.ID, a.ID, st, off, enc[off:]))
	}
	r.mu.Unlock()
	if r.live != nil {
		for _, d := range deltas {
			r.live.Live(d)
		}
	}
}

// delta is the Delta that relays add at offset off of artifact id.
func (r *relayer) delta(remoteTask a2a.TaskID, id a2a.ArtifactID, st *relayedArtifact, off int, add []byte) hints.Delta {
	ours := wire.RelayedArtifactID(r.task, remoteTask, id)
	return hints.Delta{Task: r.task, Call: "artifact-" + string(ours), Attempt: int32(st.gen), Offset: off, Text: string(add), Done: st.done,
		Artifact: &hints.LiveArtifact{ID: string(ours), Name: st.name}}
}

// redactParts is parts with the secret (a credential's send) redacted
// from their text.
func (r *relayer) redactParts(parts a2a.ContentParts) a2a.ContentParts {
	if r.secret == "" {
		return parts
	}
	out := make(a2a.ContentParts, 0, len(parts))
	for _, p := range parts {
		if p != nil {
			if t, ok := p.Content.(a2a.Text); ok {
				q := *p
				q.Content = a2a.Text(strings.ReplaceAll(string(t), r.secret, redacted))
				p = &q
			}
		}
		out = append(out, p)
	}
	return out
}

// encodeParts is parts as JSON lines: the text of relayed artifacts.
func encodeParts(parts a2a.ContentParts) []byte {
	var out []byte
	for _, p := range parts {
		if p == nil {
			continue
		}
		raw, err := json.Marshal(p)
		if err != nil {
			continue
		}
		out = append(append(out, raw...), '\n')
	}
	return out
}

// details are the activity's heartbeat details: the send's remote task
// and the relayed artifacts (relayBeat).
func (r *relayer) details() []any {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.beatJSON != nil {
		return []any{r.beatJSON}
	}
	beat := relayBeat{Task: r.sent}
	size := 0
	for _, id := range r.order {
		if !r.artifacts {
			break
		}
		st := r.arts[id]
		if st.gen > 1 {
			if beat.Generations == nil {
				beat.Generations = map[a2a.ArtifactID]int{}
			}
			beat.Generations[id] = st.gen
		}
		if st.done && size+len(st.enc) <= maxBeatBytes {
			size += len(st.enc)
			beat.Finished = append(beat.Finished, &a2a.Artifact{ID: id, Name: st.name, Parts: st.parts})
		}
	}
	raw, err := json.Marshal(beat)
	if err != nil {
		return nil
	}
	r.beatJSON = raw
	return []any{r.beatJSON}
}

// beat records the heartbeat with its details.
func (r *relayer) beat() {
	activity.RecordHeartbeat(r.ctx, r.details()...)
}

// beatNow records the heartbeat on the server at once (Heartbeats), when
// an artifact was finished: the SDK's own heartbeats are throttled.
func (r *relayer) beatNow() {
	details := r.details()
	if r.heartbeats != nil {
		if err := r.heartbeats.RecordActivityHeartbeat(r.ctx, activity.GetInfo(r.ctx).TaskToken, details...); err != nil {
			activity.GetLogger(r.ctx).Info("heartbeat not recorded", "error", err)
		}
	}
	activity.RecordHeartbeat(r.ctx, details...)
}

// sentTo records id as the send's new remote task, in the heartbeat.
func (r *relayer) sentTo(id a2a.TaskID) {
	r.mu.Lock()
	r.sent, r.beatJSON = id, nil
	r.mu.Unlock()
	r.beat()
}

// result is res as the activity answers it: the artifacts the remote
// finished that its task no longer lists are added (as they came), and
// the generations relayed go to the workflow.
func (r *relayer) result(res *wire.RemoteTaskResult) *wire.RemoteTaskResult {
	if r == nil || !r.artifacts || res == nil || res.Task == nil {
		return res
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	listed := map[a2a.ArtifactID]bool{}
	for _, a := range res.Task.Artifacts {
		if a != nil {
			listed[a.ID] = true
		}
	}
	for _, id := range r.order {
		st := r.arts[id]
		if st.gen > 1 {
			if res.Relayed == nil {
				res.Relayed = map[a2a.ArtifactID]int{}
			}
			res.Relayed[id] = st.gen
		}
		if st.done && !listed[id] && len(st.parts) > 0 {
			res.Task.Artifacts = append(res.Task.Artifacts, &a2a.Artifact{ID: id, Name: st.name, Parts: st.parts})
		}
	}
	return res
}
