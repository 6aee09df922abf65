// Package workerenv carries what an a2aflow worker offers the activities it
// runs beyond their input: its database and the credentials users gave
// tasks. The worker puts an [Env] in the context every activity starts from
// (worker.Options.BackgroundActivityContext), so that an agent's own
// activities, registered as plain functions through Agent.Activities, reach
// them from their ctx instead of being built with them.
//
// Workflow code never uses it: it is for activities, which run on a worker.
package workerenv

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// Env is what the worker gives its activities.
type Env struct {
	// DB is the worker's database (--database): a2aflow's own tables and
	// whatever tables the activities keep there.
	DB *gorm.DB
	// Credentials resolves the credential references of tasks.
	Credentials Credentials
	// Policies judges the requests of policy gates (DecidePolicy); nil:
	// no policies are in force.
	Policies PolicyDecider
}

// Credentials resolves a credential a user gave a task
// (Task.RequireCredential): Secret returns the secret that ref names for
// taskID, or an error wrapping [ErrNoCredential] when there is none (the
// reference is not that task's, or the credential was removed).
type Credentials interface {
	Secret(ctx context.Context, taskID, ref string) (string, error)
}

// ErrNoCredential: the reference names no credential of the task.
var ErrNoCredential = errors.New("no such credential for this task")

// ErrNoEnv: ctx is not the context of an activity run by an a2aflow worker.
var ErrNoEnv = errors.New("not in an activity of an a2aflow worker")

type envKey struct{}

// With returns ctx carrying env.
func With(ctx context.Context, env *Env) context.Context {
	return context.WithValue(ctx, envKey{}, env)
}

// From returns the Env of ctx, or ErrNoEnv.
func From(ctx context.Context) (*Env, error) {
	env, ok := ctx.Value(envKey{}).(*Env)
	if !ok || env == nil {
		return nil, ErrNoEnv
	}
	return env, nil
}

// Task is the task whose activity runs, as the worker's interceptors pass
// it from the workflow in Temporal headers (internal/engine): its ID,
// context and agent, and its owner (the principal that created it, ""
// without authentication).
type Task struct {
	ID, ContextID, Agent string
	Owner                string
}

type taskKey struct{}
type ownerKey struct{}

// WithTask returns ctx carrying the task's ID, context and agent.
func WithTask(ctx context.Context, id, contextID, agent string) context.Context {
	return context.WithValue(ctx, taskKey{}, Task{ID: id, ContextID: contextID, Agent: agent})
}

// WithOwner returns ctx carrying the task's owner.
func WithOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, ownerKey{}, owner)
}

// OwnerOf returns the owner of the task whose activity runs with ctx, as
// the worker's owner interceptor passed it in a header (internal/engine),
// and whether it did ("" is the owner of a task started without
// authentication). An activity without it asks Temporal.
func OwnerOf(ctx context.Context) (string, bool) {
	owner, ok := ctx.Value(ownerKey{}).(string)
	return owner, ok
}

// TaskOf returns the task of the activity running with ctx, as far as the
// headers told (zero fields otherwise).
func TaskOf(ctx context.Context) Task {
	t, _ := ctx.Value(taskKey{}).(Task)
	t.Owner, _ = ctx.Value(ownerKey{}).(string)
	return t
}

// PolicyDecider judges a gate's request by the approval policies in force
// (policies.Engine over the worker's database).
type PolicyDecider interface {
	DecidePolicy(ctx context.Context, in wire.PolicyInput) wire.PolicyDecision
}

// DecidePolicy is the local activity every policy gate runs (the tool
// calls of llm's loop, Task.Approve): it asks the worker's Env.Policies.
// Its name, the activity type in history, is wire's
// ActivityDecidePolicy: do not rename it. A worker without an Env or
// without policies (a test environment, a worker with no database) has
// none in force: PolicyNone.
func DecidePolicy(ctx context.Context, in wire.PolicyInput) (wire.PolicyDecision, error) {
	env, err := From(ctx)
	if err != nil || env.Policies == nil {
		return wire.PolicyDecision{Effect: wire.PolicyNone}, nil
	}
	return env.Policies.DecidePolicy(ctx, in), nil
}
