package wire

import (
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// FetchTaskInput is the argument of the ActivityFetchTask activity.
type FetchTaskInput struct {
	// TaskID is the task to read.
	TaskID a2a.TaskID
	// Owner is the reading task's owner: a task of another principal is
	// not found. Empty (no auth) skips the check.
	Owner string
}

// ContextHistoryInput is the argument of the ActivityContextHistory activity.
type ContextHistoryInput struct {
	// ContextID is the context whose tasks are read.
	ContextID string
	// Owner limits the read to tasks of this principal; empty (no auth) skips the check.
	Owner string
	// Exclude is the calling task, left out.
	Exclude a2a.TaskID
	// StartedBefore leaves out tasks started at or after this time.
	StartedBefore time.Time
	// MaxTasks limits how many of the latest earlier tasks are read; default 20.
	MaxTasks int
}

// HistoryPageSize is how many messages one history page holds.
const HistoryPageSize = 100

// HistoryPage is a run of a task's older messages kept in the payload store
// (blobstore) as a JSON array of A2A messages.
type HistoryPage struct {
	// Key is the page's key in the payload store.
	Key string `json:"key"`
	// First is the position of the page's first message in the task's
	// history, from 0.
	First int `json:"first"`
	// Count is how many messages the page holds.
	Count int `json:"count"`
}

// StoreHistoryPageInput is the argument of [ActivityStoreHistoryPage].
type StoreHistoryPageInput struct {
	TaskID a2a.TaskID `json:"taskId"`
	// First is the position of Messages[0] in the task's history.
	First    int            `json:"first"`
	Messages []*a2a.Message `json:"messages"`
}

// HistoryPageKey is the key of the page of taskID's history starting at
// first, in namespace.
func HistoryPageKey(namespace string, taskID a2a.TaskID, first int) string {
	return fmt.Sprintf("%s/tasks/%s/history/%010d.json", namespace, taskID, first)
}
