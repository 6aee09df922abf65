package workflows

import (
	"context"
	"fmt"

	"github.com/a2aflow/a2aflow/internal/wire"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/workerenv"
)

// Credentials through auth-required. A task that needs the user's
// credential (an API key, a token) asks for it with [Task.RequireCredential]:
// the task is auth-required, its status message saying what is asked for
// (a data part {"authType": ..., "service": ...}). The user answers with
// the secret as the message's text (or a data part {"credential": ...}).
// The secret never enters the workflow: the update validator refuses the
// plain answer with [ErrTypeCredentialRequired] before anything is
// recorded, the API stores the secret sealed in the credential store
// (package secrets) and sends the message again with a reference in its
// place ({"credentialRef": ..., "service": ..., "authType": ...}), which
// is what history, GetTask, streams and webhooks show. An activity resolves
// the reference when it calls the service.

// CredentialRequest is what a task asks the user for.
type CredentialRequest struct {
	// Service names what the credential is for, e.g. "github".
	Service string `json:"service"`
	// AuthType is the kind of credential: "bearer", "api_key", "basic",
	// "oauth2"... Free text the user and the activity agree on.
	AuthType string `json:"authType"`
	// Prompt is the status message, e.g. "A GitHub token, please (read-only)".
	Prompt string `json:"prompt,omitempty"`
}

// CredentialRef names a credential the user gave: what the skill hands its
// activities, which read the secret with [CredentialRef.Secret].
type CredentialRef struct {
	Ref      string `json:"ref"`
	Service  string `json:"service"`
	AuthType string `json:"authType"`
}

// ErrNoCredential is returned (wrapped) by [CredentialRef.Secret] when the
// reference names no credential of the activity's task.
var ErrNoCredential = workerenv.ErrNoCredential

// Secret returns the secret the user gave for r. Call it in an activity of
// the task that asked for the credential, on an a2aflow worker, right where
// the secret is used: never in workflow code, and never return it, so that
// the secret stays out of the task's history. The worker keeps credentials
// sealed; a reference resolves for its own task only.
func (r CredentialRef) Secret(ctx context.Context) (string, error) {
	if !activity.IsActivity(ctx) {
		return "", fmt.Errorf("credential %s: %w", r.Ref, workerenv.ErrNoEnv)
	}
	env, err := workerenv.From(ctx)
	if err != nil {
		return "", fmt.Errorf("credential %s: %w", r.Ref, err)
	}
	if env.Credentials == nil {
		return "", fmt.Errorf("credential %s: this worker keeps no credentials (it has no --secrets-key)", r.Ref)
	}
	return env.Credentials.Secret(ctx, activity.GetInfo(ctx).WorkflowExecution.ID, r.Ref)
}

// RequireCredential asks the user for a credential and returns its
// reference once given: the task is auth-required until then, for as long
// as it takes, across restarts (opts as for [Task.Ask], e.g. [Resumable]).
// Asking again (say, after the service refused the credential) asks for a
// new one.
func (t *Task) RequireCredential(ctx workflow.Context, req CredentialRequest, opts ...AskOption) (CredentialRef, error) {
	if req.Service == "" {
		return CredentialRef{}, fmt.Errorf("require credential: the service is required")
	}
	if req.Prompt == "" {
		req.Prompt = fmt.Sprintf("Please provide a %s credential for %s.", orDefault(req.AuthType, "secret"), req.Service)
	}
	r := t.r
	r.credentials.wait = &wire.CredentialRequest{Service: req.Service, AuthType: req.AuthType, Prompt: req.Prompt}
	defer func() { r.credentials.wait = nil }()
	m, err := t.waitWith(ctx, a2a.TaskStateAuthRequired, req.Service, req.Prompt, credentialRequestPart(*r.credentials.wait), opts)
	if err != nil {
		return CredentialRef{}, err
	}
	ref, ok := credentialRefIn(m)
	if !ok {
		// Only a task whose messages bypassed the API can get here.
		return CredentialRef{}, temporal.NewNonRetryableApplicationError("the answer carries no credential reference", wire.ErrTypeInvalidParams, nil)
	}
	return ref, nil
}

// credentialRequestPart is the data part of the auth-required status: the
// auth type and the service, and the agent a delegated credential is for.
func credentialRequestPart(req wire.CredentialRequest) *a2a.Part {
	data := map[string]any{"authType": req.AuthType, "service": req.Service}
	if req.Agent != "" {
		data[wire.CredentialAgentKey] = req.Agent
	}
	p := a2a.NewDataPart(data)
	p.MediaType = "application/json"
	return p
}

// credentialRefIn reads the reference out of an answer the API rewrote.
func credentialRefIn(m *a2a.Message) (CredentialRef, bool) {
	ref, _, ok := credentialAnswerIn(m)
	return ref, ok
}

// credentialAnswerIn reads the reference out of an answer the API rewrote,
// and the remote agent it was given for ("" for the task's own).
func credentialAnswerIn(m *a2a.Message) (ref CredentialRef, agent string, ok bool) {
	if m == nil {
		return CredentialRef{}, "", false
	}
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		data, ok := p.Data().(map[string]any)
		if !ok {
			continue
		}
		ref, _ := data[wire.CredentialRefKey].(string)
		if ref == "" {
			continue
		}
		service, _ := data["service"].(string)
		authType, _ := data["authType"].(string)
		agent, _ := data[wire.CredentialAgentKey].(string)
		return CredentialRef{Ref: ref, Service: service, AuthType: authType}, agent, true
	}
	return CredentialRef{}, "", false
}

// validateCredentialAnswer refuses, while the task waits for a credential,
// a message that does not carry it as a reference for the right service
// (and remote agent): the secret must not reach history.
func (r *run) validateCredentialAnswer(m *a2a.Message) error {
	req := r.credentials.wait
	if req == nil || r.task.Status.State != a2a.TaskStateAuthRequired {
		return nil
	}
	if ref, agent, ok := credentialAnswerIn(m); ok && ref.Service == req.Service && agent == req.Agent {
		return nil
	}
	return temporal.NewApplicationError(
		fmt.Sprintf("task %s waits for a %s credential for %s", r.task.ID, orDefault(req.AuthType, "secret"), req.Service),
		wire.ErrTypeCredentialRequired, *req)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// credentials is the credentials unit of a run (units.go): the credential
// RequireCredential, or a delegation's auth-required question, waits for.
type credentials struct {
	unitBase
	r *run `carry:"-"`

	wait *wire.CredentialRequest
}

var _ unit = (*credentials)(nil)

// validateMessage refuses, while the task waits for a credential, a plain
// answer that no other unit takes: the secret must not reach history.
func (u *credentials) validateMessage(_ workflow.Context, in wire.SendMessageInput, by unit) error {
	if by != nil {
		return nil
	}
	return u.r.validateCredentialAnswer(in.Message)
}

func (u *credentials) carry(c *continuedTask)   { c.CredentialWait = u.wait }
func (u *credentials) restore(c *continuedTask) { u.wait = c.CredentialWait }
