package taskservice

// Push configs on ended tasks. A2A's CreateTaskPushNotificationConfig has
// no terminal-task exception (§3.1.7: its only errors are
// PushNotificationNotSupported and TaskNotFound), but a task's workflow
// takes no update once it has closed (and refuses new configs once the task
// is terminal). A config created, or deleted, after the end goes to the
// workflow of the task's ended push configs (engine.EndedPushConfigsWorkflow,
// started on the first such write), and every read of the task's configs
// merges its state into the task's own (wire.EndedPushConfigs.Merge). Such a
// config gets no notification: an ended task has no more events.
//
// The tenant rule is the task's: a write is taken only after the task was
// read for the caller (LoadTask: unknown and another owner's are
// TaskNotFound alike), and the workflow scopes every handler by the task's
// agent and owner, as the task's workflow does.

import (
	"context"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// endedPushKeep is how long a run of the workflow of an ended task's push
// configs lives. It need not outlive the task: a closed run answers
// queries for its namespace's retention, which counts from its end, after
// the task's (deleted a retention after the task's end, before the run's
// start). A write after the run completed starts a new one from the state
// read from the last (updateEndedPush). Two writes around that moment can
// lose the earlier one's change: the later read the state before it and
// started the new run from that.
const endedPushKeep = 30 * 24 * time.Hour

// takesNoPushWrites reports whether err, of a push config update of a
// task's workflow, says that the workflow takes no more: closed
// (Temporal's NotFound, also for a task that does not exist, which the
// caller's read of the task then says), or its task ended (the
// validator's UnsupportedOperation).
func takesNoPushWrites(err error) bool {
	return apierror.IsNotFound(err) || apierror.IsAppErrorType(err, wire.ErrTypeUnsupportedOperation)
}

// unguarded is the Temporal client without taskIDGuard, which refuses the
// workflow IDs of ended tasks' push configs as task IDs.
func (s *TaskService) unguarded() client.Client {
	if g, ok := s.temporal.(taskIDGuard); ok {
		return g.Client
	}
	return s.temporal
}

// endedTask reads task id for the caller and checks that it ended: the
// task's own configs and the state of its ended push configs. A task that
// has not ended gives writeErr, the error of the write that led here.
func (s *TaskService) endedTask(ctx context.Context, id a2a.TaskID, writeErr error) ([]*a2a.PushConfig, wire.EndedPushConfigs, error) {
	snap, err := s.LoadTask(ctx, id, new(int))
	if err != nil {
		return nil, wire.EndedPushConfigs{}, err
	}
	if !snap.Task.Status.State.Terminal() {
		return nil, wire.EndedPushConfigs{}, apierror.FromWrite(string(id), writeErr)
	}
	own, err := s.taskPushConfigs(ctx, id)
	if err != nil {
		return nil, wire.EndedPushConfigs{}, err
	}
	ended, err := s.endedPushConfigs(ctx, id)
	return own, ended, err
}

// createEndedPushConfig stores config, checked and sealed, for ended task
// id (CreateTaskPushConfig once the task's workflow refused it).
func (s *TaskService) createEndedPushConfig(ctx context.Context, id a2a.TaskID, config *a2a.PushConfig, writeErr error) (*a2a.PushConfig, error) {
	own, ended, err := s.endedTask(ctx, id, writeErr)
	if err != nil {
		return nil, err
	}
	var stored a2a.PushConfig
	in := wire.CreatePushConfigInput{Agent: s.agent.Name, Owner: guard.Principal(ctx), Config: config}
	if err := s.updateEndedPush(ctx, id, own, ended, wire.UpdateCreatePushConfig, in, &stored); err != nil {
		return nil, err
	}
	return RedactPushConfig(&stored), nil
}

// deleteEndedPushConfig deletes config configID of ended task id
// (DeleteTaskPushConfig once the task's workflow refused it): one created
// after the end, or one of the task's own, which reads then leave out. A
// config the task does not have is deleted already (idempotent).
func (s *TaskService) deleteEndedPushConfig(ctx context.Context, id a2a.TaskID, configID string, writeErr error) error {
	own, ended, err := s.endedTask(ctx, id, writeErr)
	if err != nil {
		return err
	}
	found := false
	for _, c := range ended.Merge(own) {
		found = found || c.ID == configID
	}
	if !found {
		return nil
	}
	in := wire.DeletePushConfigInput{Agent: s.agent.Name, Owner: guard.Principal(ctx), ID: configID}
	return s.updateEndedPush(ctx, id, own, ended, wire.UpdateDeletePushConfig, in, nil)
}

// updateEndedPush sends update name to the workflow of task id's ended
// push configs, starting it when there is none (or its run completed: the
// new one starts from ended, the state read). own are the task's configs.
func (s *TaskService) updateEndedPush(ctx context.Context, id a2a.TaskID, own []*a2a.PushConfig, ended wire.EndedPushConfigs, name string, arg, result any) error {
	start := wire.EndedPushConfigsInput{
		TaskID: id, Agent: s.agent.Name, Owner: guard.Principal(ctx),
		Until: time.Now().Add(endedPushKeep), EndedPushConfigs: ended,
	}
	for _, c := range own {
		start.Own = append(start.Own, c.ID)
	}
	c := s.unguarded()
	op := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID:                       wire.EndedPushConfigsID(id),
		TaskQueue:                s.taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		StaticSummary:            fmt.Sprintf("Push notification configs of task %s, created after it ended", id),
	}, wire.EndedPushConfigsWorkflowName, start)
	wctx, cancel := context.WithTimeout(ctx, s.waitTimeout)
	defer cancel()
	handle, err := c.UpdateWithStartWorkflow(wctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{
			WorkflowID: wire.EndedPushConfigsID(id), UpdateName: name, Args: []any{arg},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err == nil {
		err = handle.Get(wctx, result)
	}
	if apierror.BoundPassed(wctx, err) {
		return noWorkerError(id, s.waitTimeout, "took the push notification config")
	}
	if err != nil {
		return apierror.FromWrite(string(id), err)
	}
	return nil
}

// endedPushConfigs reads the state of task id's ended push configs: none
// when the task has no such workflow.
func (s *TaskService) endedPushConfigs(ctx context.Context, id a2a.TaskID) (wire.EndedPushConfigs, error) {
	value, err := s.unguarded().QueryWorkflow(ctx, wire.EndedPushConfigsID(id), "", wire.QueryEndedPushConfigs,
		wire.PushConfigsInput{Agent: s.agent.Name, Owner: guard.Principal(ctx)})
	if apierror.IsNotFound(err) {
		return wire.EndedPushConfigs{}, nil
	}
	if err != nil {
		return wire.EndedPushConfigs{}, apierror.FromTemporal(err)
	}
	var ended wire.EndedPushConfigs
	if err := value.Get(&ended); err != nil {
		return wire.EndedPushConfigs{}, apierror.FromTemporal(fmt.Errorf("decode the ended push configs of task %s: %w", id, err))
	}
	return ended, nil
}
