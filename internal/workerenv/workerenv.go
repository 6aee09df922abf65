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
)

// Env is what the worker gives its activities.
type Env struct {
	// DB is the worker's database (--database): a2aflow's own tables and
	// whatever tables the activities keep there.
	DB *gorm.DB
	// Credentials resolves the credential references of tasks.
	Credentials Credentials
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
