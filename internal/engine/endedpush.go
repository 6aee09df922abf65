package engine

import (
	"fmt"
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/webhook"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// EndedPushConfigsWorkflow keeps the push notification configs an ended
// task gets after its end (wire.EndedPushConfigsWorkflowName): A2A lets a
// client create one on any task it can read (§3.1.7), and the task's own
// workflow, closed, takes no more updates. It stores, replaces and deletes
// configs as the task workflow's handlers do, scoped by the task's agent
// and owner, and delivers nothing: an ended task has no more events. It
// continues as new when Temporal suggests it and completes at in.Until;
// the API starts a new run, from the last one's state, for a write after
// that.
func EndedPushConfigsWorkflow(ctx workflow.Context, in wire.EndedPushConfigsInput) (wire.EndedPushConfigs, error) {
	e := &endedPush{in: in}
	if err := e.register(ctx); err != nil {
		return wire.EndedPushConfigs{}, err
	}
	suggested := func() bool { return workflow.GetInfo(ctx).GetContinueAsNewSuggested() }
	if wait := in.Until.Sub(workflow.Now(ctx)); wait > 0 {
		if _, err := workflow.AwaitWithTimeout(ctx, wait, suggested); err != nil {
			return e.in.EndedPushConfigs, err
		}
	}
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return e.in.EndedPushConfigs, err
	}
	if suggested() && workflow.Now(ctx).Before(in.Until) {
		return wire.EndedPushConfigs{}, workflow.NewContinueAsNewError(ctx, wire.EndedPushConfigsWorkflowName, e.in)
	}
	return e.in.EndedPushConfigs, nil
}

// endedPush is the workflow's state: its input, updated in place.
type endedPush struct {
	in wire.EndedPushConfigsInput
}

func (e *endedPush) register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, wire.QueryEndedPushConfigs, func(in wire.PushConfigsInput) (wire.EndedPushConfigs, error) {
		if err := e.checkAccess(in.Agent, in.Owner); err != nil {
			return wire.EndedPushConfigs{}, err
		}
		return e.in.EndedPushConfigs, nil
	}); err != nil {
		return fmt.Errorf("set query handler %s: %w", wire.QueryEndedPushConfigs, err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.UpdateCreatePushConfig, e.create, workflow.UpdateHandlerOptions{
		Validator:   e.validateCreate,
		Description: "A2A CreateTaskPushNotificationConfig on an ended task: store a config (nothing is delivered)",
	}); err != nil {
		return fmt.Errorf("set update handler %s: %w", wire.UpdateCreatePushConfig, err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.UpdateDeletePushConfig, e.delete, workflow.UpdateHandlerOptions{
		Validator:   e.validateDelete,
		Description: "A2A DeleteTaskPushNotificationConfig on an ended task",
	}); err != nil {
		return fmt.Errorf("set update handler %s: %w", wire.UpdateDeletePushConfig, err)
	}
	return nil
}

// checkAccess refuses a caller of another agent or owner as the task
// workflow does: as if the task did not exist.
func (e *endedPush) checkAccess(agent, owner string) error {
	if (agent != "" && agent != e.in.Agent) || (owner != "" && owner != e.in.Owner) {
		return temporal.NewApplicationError(fmt.Sprintf("task %s not found", e.in.TaskID), wire.ErrTypeTaskNotFound)
	}
	return nil
}

func (e *endedPush) find(id string) int {
	for i, c := range e.in.Configs {
		if c.ID == id {
			return i
		}
	}
	return -1
}

func (e *endedPush) validateCreate(_ workflow.Context, in wire.CreatePushConfigInput) error {
	if err := e.checkAccess(in.Agent, in.Owner); err != nil {
		return err
	}
	invalid := func(format string, args ...any) error {
		return temporal.NewApplicationError(fmt.Sprintf(format, args...), wire.ErrTypeInvalidParams)
	}
	c := in.Config
	switch {
	case c == nil:
		return invalid("the push notification config is required")
	case c.ID == "":
		return invalid("the push notification config needs an id")
	case c.TaskID != "" && c.TaskID != e.in.TaskID:
		return invalid("push notification config taskId %q does not match task %q", c.TaskID, e.in.TaskID)
	case e.find(c.ID) < 0 && len(e.in.Configs) >= wire.MaxPushConfigs:
		return invalid("task %s already has %d push notification configs created after its end, the most it takes", e.in.TaskID, wire.MaxPushConfigs)
	}
	if _, err := webhook.ParseURL(c.URL); err != nil {
		return invalid("push notification config url: %v", err)
	}
	return nil
}

func (e *endedPush) create(_ workflow.Context, in wire.CreatePushConfigInput) (*a2a.PushConfig, error) {
	stored := *in.Config
	stored.TaskID = e.in.TaskID
	if stored.Auth != nil {
		auth := *stored.Auth
		stored.Auth = &auth
	}
	if i := e.find(stored.ID); i >= 0 {
		e.in.Configs[i] = &stored
	} else {
		e.in.Configs = append(e.in.Configs, &stored)
	}
	// A config of the task's own deleted, then created again, shows as
	// created (Merge hides the task's own of its ID).
	e.in.Deleted = slices.DeleteFunc(e.in.Deleted, func(d string) bool { return d == stored.ID })
	out := stored
	return &out, nil
}

func (e *endedPush) validateDelete(_ workflow.Context, in wire.DeletePushConfigInput) error {
	if err := e.checkAccess(in.Agent, in.Owner); err != nil {
		return err
	}
	if e.find(in.ID) < 0 && (!slices.Contains(e.in.Own, in.ID) || slices.Contains(e.in.Deleted, in.ID)) {
		return temporal.NewApplicationError(fmt.Sprintf("task %s has no push notification config %q", e.in.TaskID, in.ID), wire.ErrTypePushConfigNotFound)
	}
	return nil
}

// delete removes a config created after the end and hides the task's own
// config of that ID. Deleted holds only IDs of Own: it stays as small.
func (e *endedPush) delete(_ workflow.Context, in wire.DeletePushConfigInput) error {
	if i := e.find(in.ID); i >= 0 {
		e.in.Configs = slices.Delete(e.in.Configs, i, i+1)
	}
	if slices.Contains(e.in.Own, in.ID) && !slices.Contains(e.in.Deleted, in.ID) {
		e.in.Deleted = append(e.in.Deleted, in.ID)
	}
	return nil
}
