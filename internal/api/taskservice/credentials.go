package taskservice

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/secrets"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// takeCredential answers a task waiting for a credential (refused says
// what it waits for): the secret in msg (its text, or a data part
// {"credential": ...}) is stored sealed in the credential store, and the
// message sent instead carries the reference only, so the secret never
// reaches Temporal history, streams or webhooks.
func (s *TaskService) takeCredential(ctx context.Context, taskID a2a.TaskID, owner string, msg *a2a.Message, refused error) (*a2a.Message, error) {
	var appErr *temporal.ApplicationError
	var req wire.CredentialRequest
	if !errors.As(refused, &appErr) || appErr.Details(&req) != nil || req.Service == "" {
		return nil, apierror.FromTemporal(refused)
	}
	if s.credentials == nil {
		return nil, a2a.NewError(a2a.ErrUnsupportedOperation,
			fmt.Sprintf("task %s asks for a %s credential, but this server keeps no credentials (configure a secrets key, --secrets-key)", taskID, req.Service))
	}
	secret := credentialIn(msg)
	if secret == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams,
			fmt.Sprintf("task %s waits for a %s credential for %s: send it as the message's text", taskID, orNone(req.AuthType), req.Service))
	}
	ref, err := s.credentials.Put(ctx, secrets.Credential{Service: req.Service, AuthType: req.AuthType, Secret: secret,
		TaskID: string(taskID), Owner: owner, Created: time.Now().UTC(), Agent: req.Agent, RemoteTask: req.RemoteTask})
	if err != nil {
		s.logger.ErrorContext(ctx, "credential not stored", "task_id", taskID, "service", req.Service, "error", err)
		return nil, a2a.NewError(a2a.ErrInternalError, fmt.Sprintf("the %s credential could not be stored; nothing was recorded, send it again", req.Service))
	}
	data := map[string]any{wire.CredentialRefKey: ref, "service": req.Service, "authType": req.AuthType}
	said := fmt.Sprintf("Credential provided for %s.", req.Service)
	if req.Agent != "" {
		// A credential a remote agent asked for: sealed for it alone.
		data[wire.CredentialAgentKey] = req.Agent
		said = fmt.Sprintf("Credential provided for %s (agent %s).", req.Service, req.Agent)
	}
	refPart := a2a.NewDataPart(data)
	refPart.MediaType = "application/json"
	out := &a2a.Message{
		ID: msg.ID, Role: msg.Role, TaskID: msg.TaskID, ContextID: msg.ContextID,
		ReferenceTasks: msg.ReferenceTasks, Extensions: msg.Extensions,
		Parts: a2a.ContentParts{a2a.NewTextPart(said), refPart},
	}
	return out, nil
}

// credentialIn returns the secret a user's answer carries: a data part's
// "credential" field, else its text.
func credentialIn(m *a2a.Message) string {
	for _, p := range m.Parts {
		if data, ok := p.Data().(map[string]any); ok {
			if v, ok := data[wire.CredentialSecretKey].(string); ok && strings.TrimSpace(v) != "" {
				return strings.TrimSpace(v)
			}
		}
	}
	return strings.TrimSpace(workflows.MessageText(m))
}

func orNone(s string) string {
	if s == "" {
		return "secret"
	}
	return s
}
