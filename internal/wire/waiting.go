package wire

import (
	"cmp"
	"time"
)

// WaitingMemoKey is the memo key under which a task that waits (input-required,
// auth-required) says what it waits for ([Waiting]), so that a list of tasks
// reads it from visibility instead of reading each task: written when the task
// parks, cleared (removed) when it moves on (tasks recording [WaitingMemo]).
const WaitingMemoKey = "a2aflow.waiting"

// What a Waiting memo holds at most: it is written in visibility with every
// park, so it stays small (well under 4 KiB).
const (
	// WaitingItems bounds each list (approvals, waitpoints, remote tasks,
	// an approval's groups); More counts what was left out.
	WaitingItems = 5
	// WaitingTextRunes bounds the question; WaitingNameRunes a title, a
	// name, a group, a service or an ID.
	WaitingTextRunes = 200
	WaitingNameRunes = 120
)

// Kinds of [Waiting]: why the task's status waits.
const (
	WaitingForInput      = "input"      // the user's answer to a question
	WaitingForApproval   = "approval"   // approvals (the status is theirs)
	WaitingForWaitpoint  = "waitpoint"  // a waitpoint's completion
	WaitingForCredential = "credential" // a credential (auth-required)
)

// Waiting is what a parked task waits for, as its memo holds it
// ([WaitingMemoKey]): never a secret (of a credential request only what it
// is for), every text cut to its bound, set only when the task parks.
type Waiting struct {
	// Kind is the status's reason: input, approval, waitpoint or credential.
	Kind string `json:"kind"`
	// Question is the status message's text, on one line, abbreviated.
	Question   string              `json:"question,omitempty"`
	Approvals  []WaitingApproval   `json:"approvals,omitempty"`
	Waitpoints []WaitingWaitpoint  `json:"waitpoints,omitempty"`
	Credential *WaitingCredential  `json:"credential,omitempty"`
	Remote     []WaitingRemoteTask `json:"remote,omitempty"`
	More       int                 `json:"more,omitempty"`
}

// WaitingApproval is a pending approval of a [Waiting].
type WaitingApproval struct {
	ID       string     `json:"id"`
	Title    string     `json:"title,omitempty"`
	Groups   []string   `json:"groups,omitempty"`
	Required int        `json:"required,omitempty"`
	Deadline *time.Time `json:"deadline,omitempty"`
}

// WaitingWaitpoint is a pending waitpoint of a [Waiting].
type WaitingWaitpoint struct {
	ID       string     `json:"id"`
	Name     string     `json:"name,omitempty"`
	Deadline *time.Time `json:"deadline,omitempty"`
}

// WaitingCredential is the credential request of a [Waiting]: what it is
// for, never the secret.
type WaitingCredential struct {
	Service    string `json:"service"`
	AuthType   string `json:"authType,omitempty"`
	Agent      string `json:"agent,omitempty"`
	RemoteTask string `json:"remoteTask,omitempty"`
}

// WaitingRemoteTask is a delegation under way of a [Waiting]: the remote
// agent, as the task names it, and its task.
type WaitingRemoteTask struct {
	Agent  string `json:"agent"`
	TaskID string `json:"taskId"`
}

// Line says in one line what w waits for, as the console's list shows it:
// "approval: TITLE", "waitpoint: NAME", "credential: SERVICE" or
// "input: QUESTION".
func (w *Waiting) Line() string {
	switch {
	case w.Kind == WaitingForApproval && len(w.Approvals) > 0:
		return "approval: " + cmp.Or(w.Approvals[0].Title, w.Approvals[0].ID)
	case w.Kind == WaitingForWaitpoint && len(w.Waitpoints) > 0:
		return "waitpoint: " + cmp.Or(w.Waitpoints[0].Name, w.Waitpoints[0].ID)
	case w.Kind == WaitingForCredential:
		if w.Credential != nil && w.Credential.Service != "" {
			return "credential: " + w.Credential.Service
		}
		return "credential: " + cmp.Or(OneLine(w.Question, 120), "a credential")
	}
	return "input: " + cmp.Or(OneLine(w.Question, 120), "an answer")
}
