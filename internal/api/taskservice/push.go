package taskservice

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/webhook"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// PushOptions configures push notifications in the API. The zero value
// accepts webhooks at public addresses only and stores their secrets as given.
type PushOptions struct {
	// Policy decides which addresses a webhook URL may resolve to; a config
	// naming another is refused with InvalidParams. Nil: public addresses only.
	Policy *webhook.Policy
	// Sealer encrypts a config's token and credentials before they enter the
	// task's workflow state (and so Temporal history). The worker opens them
	// with the same key. Nil: they are stored, and visible in history, as given.
	Sealer *webhook.Sealer
}

// maxPushConfigIDLength bounds a client-chosen config ID.
const maxPushConfigIDLength = 256

// CreateTaskPushConfig implements A2A CreateTaskPushNotificationConfig: the
// config is checked (URL, addresses, authentication) and stored in the task's
// workflow by an update, which also replaces a config with the same ID. On a
// task that has ended it is stored beside it (endedpush.go), and gets no
// notification.
func (s *TaskService) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	if req == nil || req.TaskID == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "taskId is required")
	}
	config, err := s.PreparePushConfig(ctx, req.TaskID, req)
	if err != nil {
		return nil, err
	}
	handle, err := s.temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: string(req.TaskID),
		UpdateName: wire.UpdateCreatePushConfig,
		Args: []any{wire.CreatePushConfigInput{Agent: s.agent.Name, Owner: guard.Principal(ctx), Config: config,
			Generation: wantsGeneration(ctx)}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var stored a2a.PushConfig
	if err == nil {
		err = handle.Get(ctx, &stored)
	}
	if takesNoPushWrites(err) {
		return s.createEndedPushConfig(ctx, req.TaskID, config, err)
	}
	if err != nil {
		return nil, s.writeError(ctx, string(req.TaskID), err, a2a.ErrUnsupportedOperation)
	}
	return RedactPushConfig(&stored), nil
}

// GetTaskPushConfig implements A2A GetTaskPushNotificationConfig with a
// workflow query. An unknown config ID is TaskNotFound, like an unknown task.
func (s *TaskService) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	if req.TaskID == "" || req.ID == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "taskId and id are required")
	}
	configs, err := s.pushConfigs(ctx, req.TaskID)
	if err != nil {
		return nil, err
	}
	for _, c := range configs {
		if c.ID == req.ID {
			return RedactPushConfig(c), nil
		}
	}
	return nil, a2a.NewError(a2a.ErrTaskNotFound, fmt.Sprintf("task %s has no push notification config %q", req.TaskID, req.ID))
}

// ListTaskPushConfigs implements A2A ListTaskPushNotificationConfigs with a
// workflow query, oldest config first. The page token is the position of the
// page's first config.
func (s *TaskService) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	if req.TaskID == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "taskId is required")
	}
	configs, err := s.pushConfigs(ctx, req.TaskID)
	if err != nil {
		return nil, err
	}
	start, end, err := pageBounds(len(configs), req.PageSize, req.PageToken)
	if err != nil {
		return nil, err
	}
	resp := &a2a.ListTaskPushConfigResponse{Configs: []*a2a.PushConfig{}}
	if end < len(configs) {
		resp.NextPageToken = strconv.Itoa(end)
	}
	for _, stored := range configs[start:end] {
		c := RedactPushConfig(stored)
		resp.Configs = append(resp.Configs, c)
	}
	return resp, nil
}

// pageBounds returns the slice [start:end] of n items that a page of
// pageSize (0: all) starting at pageToken (a position; "": the first) holds.
// A token past the end gives an empty page.
func pageBounds(n, pageSize int, pageToken string) (start, end int, err error) {
	if pageSize < 0 {
		return 0, 0, a2a.NewError(a2a.ErrInvalidParams, "pageSize must not be negative")
	}
	if pageToken != "" {
		start, err = strconv.Atoi(pageToken)
		if err != nil || start < 0 {
			return 0, 0, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("pageToken %q is not one this server returned", pageToken))
		}
	}
	start = min(start, n)
	end = n
	if pageSize > 0 {
		end = min(start+pageSize, n)
	}
	return start, end, nil
}

// DeleteTaskPushConfig implements A2A DeleteTaskPushNotificationConfig with
// an update: the webhook gets no further events, and a delivery being
// retried stops. On a task that has ended the config is deleted from those
// kept beside it, or left out of reads (endedpush.go). Deleting a config
// the caller's task does not have (any more) succeeds: A2A §3.1.10 says
// the operation "MUST be idempotent", and lists only
// PushNotificationNotSupported and TaskNotFound, for the task, as its
// errors (the TCK's PUSH-DEL-002).
func (s *TaskService) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	if req.TaskID == "" || req.ID == "" {
		return a2a.NewError(a2a.ErrInvalidParams, "taskId and id are required")
	}
	handle, err := s.temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   string(req.TaskID),
		UpdateName:   wire.UpdateDeletePushConfig,
		Args:         []any{wire.DeletePushConfigInput{Agent: s.agent.Name, Owner: guard.Principal(ctx), ID: req.ID}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(ctx, nil)
	}
	if takesNoPushWrites(err) {
		return s.deleteEndedPushConfig(ctx, req.TaskID, req.ID, err)
	}
	if err != nil && !apierror.IsAppErrorType(err, wire.ErrTypePushConfigNotFound) {
		return s.writeError(ctx, string(req.TaskID), err, a2a.ErrUnsupportedOperation)
	}
	return nil
}

// pushConfigs reads a task's stored (sealed) configs: its workflow's, and
// those created after its end (endedpush.go).
func (s *TaskService) pushConfigs(ctx context.Context, taskID a2a.TaskID) ([]*a2a.PushConfig, error) {
	own, err := s.taskPushConfigs(ctx, taskID)
	if err != nil {
		return nil, err
	}
	ended, err := s.endedPushConfigs(ctx, taskID)
	if err != nil {
		return nil, err
	}
	return ended.Merge(own), nil
}

// taskPushConfigs queries the configs a task's workflow holds.
func (s *TaskService) taskPushConfigs(ctx context.Context, taskID a2a.TaskID) ([]*a2a.PushConfig, error) {
	value, err := s.temporal.QueryWorkflow(ctx, string(taskID), "", wire.QueryPushConfigs,
		wire.PushConfigsInput{Agent: s.agent.Name, Owner: guard.Principal(ctx)})
	if err != nil {
		return nil, apierror.FromTemporal(err)
	}
	var configs []*a2a.PushConfig
	if err := value.Get(&configs); err != nil {
		return nil, apierror.FromTemporal(fmt.Errorf("decode push configs of task %s: %w", taskID, err))
	}
	return configs, nil
}

// PreparePushConfig checks a config from a request and returns the copy to
// store: its ID set (a new UUID when the client gave none) and its token and
// credentials sealed. A nil config gives nil. Every problem is InvalidParams
// with a message that names the field and never a secret.
func (s *TaskService) PreparePushConfig(ctx context.Context, taskID a2a.TaskID, c *a2a.PushConfig) (*a2a.PushConfig, error) {
	if c == nil {
		return nil, nil
	}
	invalid := func(format string, args ...any) error {
		return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(format, args...))
	}
	if len(c.ID) > maxPushConfigIDLength {
		return nil, invalid("push notification config id is longer than %d bytes", maxPushConfigIDLength)
	}
	if err := s.push.Policy.CheckURL(ctx, c.URL); err != nil {
		switch {
		case errors.Is(err, webhook.ErrInvalidURL), errors.Is(err, webhook.ErrForbiddenAddress), errors.Is(err, webhook.ErrUnresolvableHost):
			return nil, invalid("push notification config url refused: %v", err)
		}
		return nil, apierror.FromTemporal(err)
	}
	var scheme, credentials string
	if c.Auth != nil {
		scheme, credentials = c.Auth.Scheme, c.Auth.Credentials
	}
	if err := webhook.CheckAuth(scheme, credentials, c.Token); err != nil {
		return nil, invalid("push notification config: %v", err)
	}
	out := *c
	if out.ID == "" {
		out.ID = uuid.NewString()
	}
	out.Token = s.push.Sealer.Seal(c.Token, taskID, out.ID)
	if c.Auth != nil {
		out.Auth = &a2a.PushAuthInfo{Scheme: scheme, Credentials: s.push.Sealer.Seal(credentials, taskID, out.ID)}
	}
	return &out, nil
}

// RedactPushConfig returns a stored config as the API shows it: its token
// and credentials, sealed or not, are replaced by webhook.Redacted. They go
// to the webhook only, never back to a caller.
func RedactPushConfig(c *a2a.PushConfig) *a2a.PushConfig {
	out := *c
	if out.Token != "" {
		out.Token = webhook.Redacted
	}
	if c.Auth != nil {
		auth := *c.Auth
		if auth.Credentials != "" {
			auth.Credentials = webhook.Redacted
		}
		out.Auth = &auth
	}
	return &out
}
