package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Forks (docs/guides/fork.md): a fork is a new task whose workflow input
// holds the original's recorded activity results and inputs; the API reads
// them from the original's history and the fork's skill runs again from the
// start on them.

// ForkMetadataKey names, in a fork's task metadata, where it comes from: a
// [ForkOrigin].
const ForkMetadataKey = "a2aflow.fork"

// ErrTypeForkMismatch is the error type of a fork whose agent no longer
// makes the calls the original made: it fails before anything runs live.
const ErrTypeForkMismatch = "ForkMismatch"

// ForkInput is what a fork's workflow gets in its input ([TaskInput] Fork).
type ForkInput struct {
	// From is the original task, FromContextID its context.
	From          a2a.TaskID `json:"from"`
	FromContextID string     `json:"fromContextId,omitempty"`
	// Started is when the original's first run started: the fork reads its
	// context's earlier tasks as of then (Task.ContextThread).
	Started *time.Time `json:"started,omitempty"`
	// AtMessage is the fork point: recorded inputs are delivered while the
	// fork's history holds fewer messages.
	AtMessage int `json:"atMessage"`
	// Retry marks a retry of a failed task (every input, the failures that
	// ended it left out).
	Retry bool `json:"retry,omitempty"`
	// Activities are the original's activity results, in the order they
	// completed.
	Activities []RecordedActivity `json:"activities,omitempty"`
	// Inputs are the original's inputs after its first message, in the
	// order it accepted them.
	Inputs []RecordedInput `json:"inputs,omitempty"`
}

// ForkOrigin is the fork's metadata under [ForkMetadataKey].
type ForkOrigin struct {
	From      a2a.TaskID `json:"from"`
	AtMessage int        `json:"atMessage"`
	Retry     bool       `json:"retry,omitempty"`
	// Refused is set when the fork failed because the agent changed.
	Refused string `json:"refused,omitempty"`
}

// RecordedActivity is one activity of the original task as its history
// holds it.
type RecordedActivity struct {
	// Kind is "" for an activity, [RecordedLocalActivity] for a local
	// activity (its input is not in Temporal's history: Hash is the
	// [LocalForkHash] its result names, or empty) or
	// [RecordedTimer] for a timer that fired (Hash is its duration,
	// time.Duration.String, and Type is empty).
	Kind string `json:"kind,omitempty"`
	Type string `json:"type"`
	// Hash is [ForkHash] of the activity's input.
	Hash string `json:"hash"`
	// Result are its result payloads; Failure, instead, its final failure.
	Result  []RecordedPayload `json:"result,omitempty"`
	Failure *RecordedFailure  `json:"failure,omitempty"`
}

// LocalForkHash is the field of a local activity's result (a JSON object)
// that names its input, for forks: Temporal's marker of a local activity
// holds its result but not its input, so the CompleteChat activity, run
// as a local activity, adds [ForkHash] of its input to its answer's
// fields (a workflow decoding the answer ignores it). A fork's call of it
// matches a recorded one whose hash is its own; one that names none (or
// any other local activity) by its type and order only.
const LocalForkHash = "a2aflowForkHash"

// Kinds of [RecordedActivity].
const (
	RecordedLocalActivity = "local"
	RecordedTimer         = "timer"
)

// RecordedPayload is one Temporal payload.
type RecordedPayload struct {
	Metadata map[string][]byte `json:"metadata,omitempty"`
	Data     []byte            `json:"data,omitempty"`
}

// RecordedFailure is an activity's final failure.
type RecordedFailure struct {
	Message      string `json:"message"`
	Type         string `json:"type,omitempty"`
	NonRetryable bool   `json:"nonRetryable,omitempty"`
}

// RecordedInput is one input the original accepted: an update (its name,
// [UpdateSendMessage], [UpdateDecideApproval] or [UpdateCompleteWaitpoint])
// and its argument's JSON.
type RecordedInput struct {
	Update string          `json:"update"`
	Arg    json.RawMessage `json:"arg"`
	// After is how many recorded activities completed before it.
	After int `json:"after"`
}

// ForkRecorded reports whether a fork answers activities of a type from
// the original's records: the skill's. The task's own bookkeeping
// (history pages, webhooks, the notices of its approvals, whose IDs are
// the fork's) runs in the fork as in any task.
func ForkRecorded(activityType string) bool {
	switch activityType {
	case ActivityStoreHistoryPage, ActivityDeliverPush, ActivityNotifyApprovalWebhook:
		return false
	}
	return true
}

// ForkHash hashes an activity's input payloads (their data) with the task's
// own ID and context ID put in place of taskID and contextID, so that the
// same call hashes alike in the original task and in its fork.
func ForkHash(data [][]byte, taskID a2a.TaskID, contextID string) string {
	h := sha256.New()
	for _, d := range data {
		s := string(d)
		if taskID != "" {
			s = strings.ReplaceAll(s, string(taskID), "\x00task\x00")
		}
		if contextID != "" {
			s = strings.ReplaceAll(s, contextID, "\x00context\x00")
		}
		h.Write([]byte(s))
		h.Write([]byte{0xff})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ForkArg returns a recorded input's argument with the original's IDs
// replaced by the fork's (approval and waitpoint IDs embed the task's).
func ForkArg(arg json.RawMessage, from, to a2a.TaskID, fromContext, toContext string) []byte {
	s := string(arg)
	if from != "" && from != to {
		s = strings.ReplaceAll(s, string(from), string(to))
	}
	if fromContext != "" && fromContext != toContext {
		s = strings.ReplaceAll(s, fromContext, toContext)
	}
	return []byte(s)
}

// UpdateForkSettled is the update the API starts a fork with
// (Update-with-Start): it completes once the fork has reached its fork
// point and then stopped to wait (input-required, auth-required) or ended,
// or once the fork failed, with the [TaskUpdateResult] and, when small, the
// task. Its name is none of the inputs a fork records, so a fork of a fork
// does not replay it.
const UpdateForkSettled = "a2aflow.ForkSettled"

// ForkSettledInput is the argument of [UpdateForkSettled].
type ForkSettledInput struct {
	Agent string `json:"agent,omitempty"`
	Owner string `json:"owner,omitempty"`
	// HistoryLength is the history the answered task holds (nil: all).
	HistoryLength *int `json:"historyLength,omitempty"`
}
