package policies

import (
	"context"
	"fmt"
	"sync"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// Source is where an Engine reads the versions: models.Store.
type Source interface {
	LatestPolicyVersion(ctx context.Context) (int64, error)
	PoliciesAt(ctx context.Context, v int64) ([]models.PolicyVersion, error)
}

// Engine judges requests by the policies in force: it reads the latest
// version number on every request (so a change applies to the next gate
// of every task, on every worker) and compiles each version once.
type Engine struct {
	src Source

	mu      sync.Mutex
	version int64
	docs    []*Document
	err     error
}

// NewEngine returns an Engine over src.
func NewEngine(src Source) *Engine { return &Engine{src: src} }

// DecidePolicy judges in by the version in force. A store that does not
// answer, or a stored text that no longer compiles, is PolicyFailed: the
// gate then asks a person.
func (e *Engine) DecidePolicy(ctx context.Context, in wire.PolicyInput) wire.PolicyDecision {
	v, err := e.src.LatestPolicyVersion(ctx)
	if err != nil {
		return wire.PolicyDecisionFailed("the policy store did not answer: " + err.Error())
	}
	if v == 0 {
		return wire.PolicyDecision{Effect: wire.PolicyNone}
	}
	docs, err := e.at(ctx, v)
	if err != nil {
		d := wire.PolicyDecisionFailed(err.Error())
		d.Version = v
		return d
	}
	return Decide(docs, v, in)
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
