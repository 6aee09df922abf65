package wire

import (
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
}
