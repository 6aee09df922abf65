package policies

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// Source is where an Engine reads the versions: models.Store.
type Source interface {
	LatestPolicyVersion(ctx context.Context) (int64, error)
	PoliciesAt(ctx context.Context, v int64) ([]models.PolicyVersion, error)
}

// Recorder keeps the requests the gates judged (models.Store), for
// `policies try`.
type Recorder interface {
	RecordPolicyRequests(ctx context.Context, rs []models.PolicyRequest) error
}

// Engine judges requests by the policies in force: it reads the latest
// version number on every request (so a change applies to the next gate
// of every task, on every worker) and compiles each version once. A
// source that is also a Recorder keeps every request judged in an
// activity, written in the background (a gate does not wait for it; a
// crash loses the last few).
type Engine struct {
	src Source

	mu      sync.Mutex
	version int64
	docs    []*Document
	err     error

	recorder Recorder
	records  chan models.PolicyRequest
	start    sync.Once
}

// recordQueue bounds the requests waiting to be written; beyond it, they
// are not kept.
const recordQueue = 4096

// NewEngine returns an Engine over src.
func NewEngine(src Source) *Engine {
	e := &Engine{src: src}
	if r, ok := src.(Recorder); ok {
		e.recorder, e.records = r, make(chan models.PolicyRequest, recordQueue)
	}
	return e
}

// record queues the request an activity judged for the recorder.
func (e *Engine) record(ctx context.Context, in wire.PolicyInput, d wire.PolicyDecision) {
	if e.recorder == nil || !activity.IsActivity(ctx) {
		return
	}
	info := activity.GetInfo(ctx)
	raw, err := json.Marshal(in)
	if err != nil {
		return
	}
	name := in.Tool
	if in.Action == wire.PolicyApproveStep {
		name = in.Step
	}
	e.start.Do(func() { go e.write() })
	select {
	case e.records <- models.PolicyRequest{RunID: info.WorkflowExecution.RunID, ActivityID: info.ActivityID, TaskID: in.TaskID,
		Tenant: in.Tenant, Agent: in.Agent, Action: in.Action, Name: name, Input: string(raw), Effect: d.Effect, Version: d.Version}:
	default: // the writer is behind: this one is not kept
	}
}

// write writes the queued requests, in batches.
func (e *Engine) write() {
	for r := range e.records {
		batch := []models.PolicyRequest{r}
		for len(batch) < 256 {
			select {
			case more := <-e.records:
				batch = append(batch, more)
				continue
			default:
			}
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = e.recorder.RecordPolicyRequests(ctx, batch) // kept for trying policies: not worth failing a gate
		cancel()
	}
}

// DecidePolicy judges in by the version in force. A store that does not
// answer, or a stored text that no longer compiles, is PolicyFailed: the
// gate then asks a person.
func (e *Engine) DecidePolicy(ctx context.Context, in wire.PolicyInput) wire.PolicyDecision {
	v, err := e.src.LatestPolicyVersion(ctx)
	if err != nil {
		return wire.PolicyDecisionFailed("the policy store did not answer: " + err.Error())
	}
	if v == 0 {
		d := wire.PolicyDecision{Effect: wire.PolicyNone}
		e.record(ctx, in, d)
		return d
	}
	docs, err := e.at(ctx, v)
	if err != nil {
		d := wire.PolicyDecisionFailed(err.Error())
		d.Version = v
		return d
	}
	d := Decide(docs, v, in)
	e.record(ctx, in, d)
	return d
}

// at returns the compiled documents of version v, compiling them once.
func (e *Engine) at(ctx context.Context, v int64) ([]*Document, error) {
	e.mu.Lock()
	if e.version == v {
		defer e.mu.Unlock()
		return e.docs, e.err
	}
	e.mu.Unlock()
	docs, err := Load(ctx, e.src, v)
	if err != nil && ctx.Err() != nil {
		return nil, err // not the version's fault: compile it next time
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if v >= e.version {
		e.version, e.docs, e.err = v, docs, err
	}
	return docs, err
}

// Load reads and compiles the policies in force at version v.
func Load(ctx context.Context, src Source, v int64) ([]*Document, error) {
	list, err := src.PoliciesAt(ctx, v)
	if err != nil {
		return nil, fmt.Errorf("the policy store did not answer: %w", err)
	}
	docs := make([]*Document, 0, len(list))
	for _, p := range list {
		d, err := Compile(p.Scope, p.Text)
		if err != nil {
			return nil, fmt.Errorf("version %d: %w", p.Version, err)
		}
		docs = append(docs, d)
	}
	return docs, nil
}
