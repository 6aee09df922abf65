package wire

import (
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Names of the push notification handlers and activity. Like the other
// names, they are shared by the API and the worker and never change.
const (
	// UpdateCreatePushConfig adds a webhook to a task, or replaces the one
	// with the same ID (A2A CreateTaskPushNotificationConfig). Its argument is
	// a [CreatePushConfigInput] and its result the stored [*a2a.PushConfig].
	UpdateCreatePushConfig = "CreateTaskPushNotificationConfig"

	// UpdateDeletePushConfig removes a webhook from a task (A2A
	// DeleteTaskPushNotificationConfig). Its argument is a
	// [DeletePushConfigInput]; it has no result.
	UpdateDeletePushConfig = "DeleteTaskPushNotificationConfig"

	// QueryPushConfigs returns a task's webhooks, oldest first (A2A Get and
	// ListTaskPushNotificationConfig). Its argument is a [PushConfigsInput]
	// and its result a []*a2a.PushConfig.
	QueryPushConfigs = "PushNotificationConfigs"
)

// MaxPushConfigs is how many webhooks one task takes: each one costs an
// activity per event in the task's history.
const MaxPushConfigs = 10

// CreatePushConfigInput is the argument of the UpdateCreatePushConfig update.
type CreatePushConfigInput struct {
	// Agent and Owner scope the write as in [SendMessageInput].
	Agent string
	Owner string
	// Config is the webhook. Its ID is required (the API assigns one when the
	// client gave none); its token and credentials should be sealed with a
	// webhook.Sealer so that history does not carry them in the clear.
	Config *a2a.PushConfig
	// Generation is whether the config was created by an A2A 1.1 request:
	// the events delivered to it then carry the task's generation
	// ([PushDelivery.Generation]). Creating the config again (same ID)
	// sets it anew.
	Generation bool `json:",omitempty"`
}

// DeletePushConfigInput is the argument of the UpdateDeletePushConfig update.
type DeletePushConfigInput struct {
	// Agent and Owner scope the write as in [SendMessageInput].
	Agent string
	Owner string
	// ID names the config to delete.
	ID string
}

// PushConfigsInput is the argument of the QueryPushConfigs query.
type PushConfigsInput struct {
	// Agent and Owner scope the read as in [GetTaskInput].
	Agent string
	Owner string
}

// PushDelivery is the argument of the ActivityDeliverPush activity: one
// event for one webhook.
type PushDelivery struct {
	// Config is the webhook, as stored in the task (token and credentials
	// sealed when the API has a secrets key).
	Config a2a.PushConfig
	// Event is the task event to POST, as an A2A StreamResponse. Its Seq is
	// unique within the task, so a receiver can drop a repeated delivery.
	Event Event
	// Generation is whether the config is an A2A 1.1 one
	// ([CreatePushConfigInput.Generation]): the event is posted with its
	// generation, [Generation](Event.Seq), as A2A 1.1's StreamResponse.
	Generation bool `json:",omitempty"`
}

// The push notification configs of ended tasks. A2A's
// CreateTaskPushNotificationConfig has no terminal-task exception (§3.1.7),
// but a task's workflow takes no updates once it has closed. A config
// created (or deleted) after the task ended is kept by a small workflow of
// its own, one per ended task that gets one, which the API reads beside the
// task's: it delivers nothing, since an ended task has nothing more to
// send.
const (
	// EndedPushConfigsWorkflowName is the workflow type of an ended task's
	// push configs. Its input is an [EndedPushConfigsInput] and its result
	// an [EndedPushConfigs]; it takes the [UpdateCreatePushConfig] and
	// [UpdateDeletePushConfig] updates with their inputs and answers
	// [QueryEndedPushConfigs].
	EndedPushConfigsWorkflowName = "EndedTaskPushConfigs"

	// EndedPushConfigsIDPrefix, followed by the task's ID, is the workflow
	// ID of an ended task's push configs. The API takes no task ID that
	// starts with it, so that no request reaches that workflow as a task.
	EndedPushConfigsIDPrefix = "a2aflow-ended-task-push-configs:"

	// QueryEndedPushConfigs returns an [EndedPushConfigs]. Its argument is a
	// [PushConfigsInput].
	QueryEndedPushConfigs = "EndedTaskPushNotificationConfigs"
)

// EndedPushConfigsID is the workflow ID of the push configs of ended task
// taskID.
func EndedPushConfigsID(taskID a2a.TaskID) string {
	return EndedPushConfigsIDPrefix + string(taskID)
}

// EndedPushConfigsInput starts (or continues as new) the workflow of an
// ended task's push configs.
type EndedPushConfigsInput struct {
	// TaskID is the ended task's.
	TaskID a2a.TaskID
	// Agent and Owner are the task's (the first writer's, whom the API
	// found allowed to read the task); reads and writes are scoped by them
	// as a task's are.
	Agent string
	Owner string
	// Until is when the workflow completes. A completed run stays readable
	// for the namespace's retention, longer than the task; a write after
	// it starts a new run from its state.
	Until time.Time
	// Own are the IDs of the configs the task's workflow holds, which a
	// delete after the end hides (EndedPushConfigs.Deleted).
	Own []string `json:",omitempty"`
	// EndedPushConfigs is the state it starts with (a continued run's, or
	// that of a completed run the API read).
	EndedPushConfigs
}

// EndedPushConfigs are the push configs an ended task got after its end.
type EndedPushConfigs struct {
	// Configs are the configs created after the end, oldest first, as
	// stored (token and credentials sealed).
	Configs []*a2a.PushConfig `json:",omitempty"`
	// Deleted are the IDs of the task's own configs (those in its
	// workflow) deleted after its end; reads leave them out.
	Deleted []string `json:",omitempty"`
}

// Merge returns the configs a read of the task shows: the task's own
// (taskConfigs, oldest first) but those deleted or created again after the
// end, then those created after the end.
func (e EndedPushConfigs) Merge(taskConfigs []*a2a.PushConfig) []*a2a.PushConfig {
	hidden := map[string]bool{}
	for _, id := range e.Deleted {
		hidden[id] = true
	}
	for _, c := range e.Configs {
		hidden[c.ID] = true
	}
	out := make([]*a2a.PushConfig, 0, len(taskConfigs)+len(e.Configs))
	for _, c := range taskConfigs {
		if !hidden[c.ID] {
			out = append(out, c)
		}
	}
	return append(out, e.Configs...)
}
