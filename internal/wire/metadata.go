package wire

// UsageMetadataKey is the task metadata key holding the task's LLM token
// usage, a [TokenUsage] (JSON: {"inputTokens":..,"outputTokens":..,"calls":..}).
const UsageMetadataKey = "a2aflow.llmUsage"

// ScheduleMetadataKey is the task metadata key naming the schedule a task
// is a run of (a string, the schedule's ID).
const ScheduleMetadataKey = "a2aflow.schedule"

// ScheduleSealBinding is the task ID a schedule's push config secrets are
// sealed for: every run of the schedule opens them (the webhook sealer
// recognises the runs' task IDs, the schedule's ID and a timestamp).
func ScheduleSealBinding(scheduleID string) string { return "schedule/" + scheduleID }

// ErrTypeCredentialRequired: the task waits for a credential and the
// message carries none as a reference. Its details hold the
// [CredentialRequest]; the API stores the secret and sends a reference.
const ErrTypeCredentialRequired = "CredentialRequired"

// CredentialRequest is the credential a task waits for, as the workflow
// hands it to the API (the details of [ErrTypeCredentialRequired]) and
// carries it across continue-as-new: what Task.RequireCredential asks for
// (workflows.CredentialRequest, the same JSON), or what a remote agent
// asked for through the task's delegation (Task.CallAgent), that agent and
// its task then named too. The API seals the credential with Agent and
// RemoteTask, and only the activity sending to that remote task opens it.
type CredentialRequest struct {
	// Service names what the credential is for, e.g. "github".
	Service string `json:"service"`
	// AuthType is the kind of credential: "bearer", "api_key"...
	AuthType string `json:"authType"`
	// Prompt is the status message asking for it.
	Prompt string `json:"prompt,omitempty"`
	// Agent, for a remote agent's request, is that agent as the task names
	// it (CallRequest.Agent), and RemoteTask its task that asked.
	Agent      string `json:"agent,omitempty"`
	RemoteTask string `json:"remoteTask,omitempty"`
}

// Keys of the data parts of credential requests and references.
const (
	// CredentialRefKey names the reference in the answer's data part.
	CredentialRefKey = "credentialRef"
	// CredentialAgentKey names, in the request's status data part and in
	// the answer's, the remote agent a delegated credential is for.
	CredentialAgentKey = "agent"
	// CredentialSecretKey may carry the secret in a data part of the user's
	// answer, instead of the message's text.
	CredentialSecretKey = "credential"
)
