package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Error types of the delegation activities' non-retryable errors.
const (
	// ErrTypeUnknownRemoteAgent: the agent is not in the directory.
	ErrTypeUnknownRemoteAgent = "UnknownRemoteAgent"
	// ErrTypeRemoteConfig: the remote agent cannot be called as configured
	// (no usable interface in its card, unknown credentials).
	ErrTypeRemoteConfig = "RemoteAgentConfig"
	// ErrTypeRemoteA2A: the remote agent answered with an A2A error that a
	// retry would not change (task not found, invalid params, unauthenticated...).
	ErrTypeRemoteA2A = "RemoteA2AError"
)

// DelegationsMetadataKey is the task metadata key listing the remote tasks
// the task delegated to, a []Delegation, also kept in the workflow memo
// under the same key so the Temporal UI shows it.
const DelegationsMetadataKey = "a2aflow.delegations"

// RemoteSendInput is the argument of [ActivitySendRemoteMessage].
type RemoteSendInput struct {
	// Agent is a directory name or an http(s) URL of an agent card's base.
	Agent string
	// Message is sent as is: its ID is deterministic, so a retried send
	// is recognised by an agent that deduplicates by message ID (a2aflow
	// does); TaskID and ContextID are empty for a new remote task.
	Message *a2a.Message
	// Extensions are the URIs of the calling agent's extensions
	// (Agent.Extensions): the client activates those the remote card
	// declares (a2aext's activator), so a remote agent that requires one
	// the caller supports is not refused.
	Extensions []string `json:",omitempty"`
	// Answered is, for a message answering the remote task's question, that
	// question (its status message ID): to an agent that streams, the send
	// reads the task's events until it moves past that question (as
	// [ActivityFollowRemoteTask] does), for up to a second, so that an
	// answer the agent settles at once needs no follow.
	Answered string `json:",omitempty"`
	// Credential is, for the answer to the remote task's auth-required
	// question, the reference of the credential our user gave for it
	// (sealed by the API for this agent and remote task): the activity
	// opens it and sends the secret as the message's text instead of
	// Message's parts, which name the reference only, as history records
	// them. It goes only over https or to an agent the operator configured.
	Credential string `json:",omitempty"`
	// RelayArtifacts: the remote task's artifact updates are relayed live
	// to our task's streams, under the IDs RelayedArtifactID gives (the
	// IDs the workflow gives its durable copies). Set by workflows that
	// copy the remote artifacts under those IDs.
	RelayArtifacts bool `json:",omitempty"`
	// Relayed are the generations of the remote artifacts relayed so far
	// that the remote replaced (see RemoteTaskResult.Relayed).
	Relayed map[a2a.ArtifactID]int `json:",omitempty"`
}

// RemoteFollowInput is the argument of [ActivityFollowRemoteTask].
type RemoteFollowInput struct {
	// Agent is a directory name or an http(s) URL, as in RemoteSendInput.
	Agent string
	// TaskID is the remote task.
	TaskID a2a.TaskID
	// Window bounds one call: it returns the task as it is then, and the
	// workflow follows again. Default an hour.
	Window time.Duration
	// Answered is the question (status message ID) the workflow just
	// answered: until the remote agent takes the answer, its task may still
	// show that question, which is not a new one and is followed past.
	Answered string `json:",omitempty"`
	// Extensions are as in RemoteSendInput.
	Extensions []string `json:",omitempty"`
	// RelayArtifacts and Relayed are as in RemoteSendInput.
	RelayArtifacts bool                   `json:",omitempty"`
	Relayed        map[a2a.ArtifactID]int `json:",omitempty"`
}

// RemoteCancelInput is the argument of [ActivityCancelRemoteTask].
type RemoteCancelInput struct {
	Agent  string
	TaskID a2a.TaskID
	// Extensions are as in RemoteSendInput.
	Extensions []string `json:",omitempty"`
}

// RemoteTaskResult is what the send and follow activities answer.
type RemoteTaskResult struct {
	// Task is the remote task as last seen, without history (its status
	// message and artifacts are there). Nil when the agent answered a
	// message without a task.
	Task *a2a.Task `json:"task,omitempty"`
	// Message is the agent's answer when it replied with a message rather
	// than a task (A2A allows it for a quick answer): the call is complete.
	Message *a2a.Message `json:"message,omitempty"`
	// Relayed are the generations of the remote artifacts the activity
	// relayed live that the remote replaced (an artifact-update with
	// append false for an artifact it had sent): generation n+1 starts
	// over what generation n showed. The workflow hands them to the next
	// follow, so that its chunks continue the same generation.
	Relayed map[a2a.ArtifactID]int `json:"relayed,omitempty"`
}

// RelayedArtifactID is the ID our task ourTask gives the artifact
// artifact of the remote task remoteTask it delegated to: the same for the
// live chunks relayed as they come and for the durable copy the workflow
// makes when the remote task completes, and for every attempt of every
// activity that relays it.
func RelayedArtifactID(ourTask string, remoteTask a2a.TaskID, artifact a2a.ArtifactID) a2a.ArtifactID {
	sum := sha256.Sum256([]byte(string(remoteTask) + "\x00" + string(artifact)))
	return a2a.ArtifactID(ourTask + "-remote-" + hex.EncodeToString(sum[:12]))
}

// IsAnsweredQuestion reports whether status still asks the question
// identified by answered (see RemoteFollowInput.Answered).
func IsAnsweredQuestion(status a2a.TaskStatus, answered string) bool {
	return answered != "" && Interrupted(status.State) && QuestionID(status) == answered
}

// OneLine shortens s to at most n runes, on one line: for summaries shown
// in the Temporal UI and in logs.
func OneLine(s string, n int) string {
	runes := []rune(s)
	for i, r := range runes {
		if r == '\n' || r == '\r' {
			runes[i] = ' '
		}
	}
	if len(runes) <= n {
		return string(runes)
	}
	return string(runes[:n-1]) + "…"
}

// QuestionID identifies the question a status asks: its message ID, or
// its timestamp when the agent sent no message.
func QuestionID(s a2a.TaskStatus) string {
	if s.Message != nil && s.Message.ID != "" {
		return "message:" + s.Message.ID
	}
	if s.Timestamp != nil {
		return "time:" + s.Timestamp.UTC().Format(time.RFC3339Nano)
	}
	return "state:" + string(s.State)
}
