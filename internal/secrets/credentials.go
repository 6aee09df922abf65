package secrets

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/workerenv"
)

// ErrNoCredential: the reference names no credential of the task.
var ErrNoCredential = workerenv.ErrNoCredential

// Credential is a secret a user gave a task that asked for it
// (auth-required): an API key, a token, a password.
type Credential struct {
	// Service names what the credential is for, as the task asked ("github").
	Service string `json:"service"`
	// AuthType says what kind of credential it is, as the task asked
	// ("bearer", "api_key", "basic", "oauth2"...).
	AuthType string `json:"authType"`
	// Secret is the value itself. It never leaves the store but to the
	// activity that uses it.
	Secret string `json:"secret"`
	// TaskID and Owner are the task it was given to and its owner.
	TaskID string `json:"taskId"`
	Owner  string `json:"owner,omitempty"`
	// Agent and RemoteTask, set for a credential a remote agent asked for
	// when the task delegated to it (Task.CallAgent), are that agent (as the
	// task names it) and its task: the credential is for them alone
	// (DelegatedSecret); the task's own activities do not read it (Secret).
	Agent      string `json:"agent,omitempty"`
	RemoteTask string `json:"remoteTask,omitempty"`
	// Created is when it was given.
	Created time.Time `json:"created"`
}

// CredentialStore keeps credentials sealed in the payload store, one blob
// per credential under <namespace>/credentials/<task ID>/<ref>. A task's
// history holds the reference only.
type CredentialStore struct {
	// Store is the payload store api and worker share; required.
	Store blobstore.Store
	// Sealer seals every credential; without a key the store refuses to
	// keep any, as a credential must never be kept in the clear.
	Sealer *Sealer
	// Namespace is the Temporal namespace, the first segment of every key.
	Namespace string
}

// refPrefix starts every credential reference.
const refPrefix = "cred-"

// Put seals and stores c and returns its reference.
func (s *CredentialStore) Put(ctx context.Context, c Credential) (string, error) {
	if !s.Sealer.Enabled() {
		return "", errors.New("no secrets key is configured (--secrets-key): credentials cannot be kept")
	}
	if c.TaskID == "" || c.Secret == "" {
		return "", errors.New("a credential needs its task and its secret")
	}
	if err := blobstore.ValidateKey(c.TaskID); err != nil {
		return "", fmt.Errorf("credential for task %q: %w", c.TaskID, err)
	}
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	ref := refPrefix + hex.EncodeToString(id)
	raw, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	sealed := s.Sealer.Seal(string(raw), sealContext(c.TaskID, ref))
	if err := s.Store.Put(ctx, s.key(c.TaskID, ref), []byte(sealed)); err != nil {
		return "", fmt.Errorf("store the credential: %w", err)
	}
	return ref, nil
}

// Secret returns the secret of the credential ref of task taskID, for
// activities (workflows.CredentialRef.Secret through workerenv). A
// credential given for a remote agent is that agent's only: Secret does not
// return it (ErrNoCredential).
func (s *CredentialStore) Secret(ctx context.Context, taskID, ref string) (string, error) {
	c, err := s.Get(ctx, taskID, ref)
	if err != nil {
		return "", err
	}
	if c.Agent != "" {
		return "", fmt.Errorf("%w: credential %s was given for agent %s", ErrNoCredential, ref, c.Agent)
	}
	return c.Secret, nil
}

// DelegatedSecret returns the secret of the credential ref of task taskID
// when it was given for remote task remoteTask of agent (Credential.Agent,
// RemoteTask), for the activity that sends it there; any other credential
// is ErrNoCredential.
func (s *CredentialStore) DelegatedSecret(ctx context.Context, taskID, ref, agent, remoteTask string) (string, error) {
	c, err := s.Get(ctx, taskID, ref)
	if err != nil {
		return "", err
	}
	if c.Agent == "" || c.Agent != agent || c.RemoteTask != remoteTask {
		return "", fmt.Errorf("%w: credential %s was not given for task %s of agent %s", ErrNoCredential, ref, remoteTask, agent)
	}
	return c.Secret, nil
}

var _ workerenv.Credentials = (*CredentialStore)(nil)

// Get returns the credential ref of task taskID.
func (s *CredentialStore) Get(ctx context.Context, taskID, ref string) (Credential, error) {
	if !strings.HasPrefix(ref, refPrefix) || blobstore.ValidateKey(ref) != nil || blobstore.ValidateKey(taskID) != nil {
		return Credential{}, ErrNoCredential
	}
	data, err := s.Store.Get(ctx, s.key(taskID, ref))
	if errors.Is(err, blobstore.ErrNotFound) {
		return Credential{}, ErrNoCredential
	}
	if err != nil {
		return Credential{}, fmt.Errorf("read credential %s: %w", ref, err)
	}
	plain, err := s.Sealer.Open(string(data), sealContext(taskID, ref))
	if err != nil {
		return Credential{}, fmt.Errorf("open credential %s: %w", ref, err)
	}
	var c Credential
	if err := json.Unmarshal([]byte(plain), &c); err != nil || c.TaskID != taskID {
		return Credential{}, ErrNoCredential
	}
	return c, nil
}

func (s *CredentialStore) key(taskID, ref string) string {
	ns := s.Namespace
	if ns == "" {
		ns = "default"
	}
	return ns + "/credentials/" + taskID + "/" + ref
}

func sealContext(taskID, ref string) string { return "credential:" + taskID + ":" + ref }
