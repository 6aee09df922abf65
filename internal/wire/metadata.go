package wire

// UsageMetadataKey is the task metadata key holding the task's LLM token
// usage, a [TokenUsage] (JSON: {"inputTokens":..,"outputTokens":..,"calls":..}).
const UsageMetadataKey = "a2aflow.llmUsage"

// ErrTypeCredentialRequired: the task waits for a credential and the
// message carries none as a reference. Its details hold the
// [CredentialRequest]; the API stores the secret and sends a reference.
const ErrTypeCredentialRequired = "CredentialRequired"

// Keys of the data parts of credential requests and references.
const (
	// CredentialRefKey names the reference in the answer's data part.
	CredentialRefKey = "credentialRef"
	// CredentialSecretKey may carry the secret in a data part of the user's
	// answer, instead of the message's text.
	CredentialSecretKey = "credential"
)
