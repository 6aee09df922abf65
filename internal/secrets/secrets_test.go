package secrets_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/secrets"
)

func TestSealer(t *testing.T) {
	oldKey, newKey := secrets.NewKey(), secrets.NewKey()
	old, err := secrets.NewSealer(oldKey)
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := secrets.NewSealer(newKey, oldKey) // the new key seals, both open
	if err != nil {
		t.Fatal(err)
	}
	other, _ := secrets.NewSealer(secrets.NewKey())

	sealed := old.Seal("s3cr3t", "push:task-1:hook")
	if !secrets.IsSealed(sealed) || strings.Contains(sealed, "s3cr3t") {
		t.Fatalf("Seal = %q, want ciphertext", sealed)
	}
	tests := []struct {
		name    string
		sealer  *secrets.Sealer
		value   string
		context string
		want    string
		wantErr error
	}{
		{"same key and context", old, sealed, "push:task-1:hook", "s3cr3t", nil},
		{"after a rotation, the old key still opens", rotated, sealed, "push:task-1:hook", "s3cr3t", nil},
		{"another context (copied into another task)", old, sealed, "push:task-2:hook", "", secrets.ErrCannotOpen},
		{"another key", other, sealed, "push:task-1:hook", "", secrets.ErrCannotOpen},
		{"no key", nil, sealed, "push:task-1:hook", "", secrets.ErrNoKey},
		{"tampered", old, sealed[:len(sealed)-2] + "AA", "push:task-1:hook", "", secrets.ErrCannotOpen},
		{"a value never sealed", old, "plain", "push:task-1:hook", "plain", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.sealer.Open(tt.value, tt.context)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Errorf("Open = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
	if got := rotated.Seal("x", "c"); !strings.Contains(got, ":") || old.Seal("x", "c") == got {
		t.Errorf("the rotated sealer seals with its first key")
	}
	if _, err := rotated.Open(rotated.Seal("x", "c"), "c"); err != nil {
		t.Errorf("open what the new key sealed: %v", err)
	}
	if _, err := old.Open(rotated.Seal("x", "c"), "c"); err == nil {
		t.Error("the old sealer opened what only the new key sealed")
	}
	if _, err := secrets.NewSealer([]byte("short")); err == nil {
		t.Error("NewSealer took a short key")
	}
}

func TestCredentialStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := blobstore.NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	sealer, _ := secrets.NewSealer(secrets.NewKey())
	cs := &secrets.CredentialStore{Store: store, Sealer: sealer, Namespace: "default"}
	ref, err := cs.Put(ctx, secrets.Credential{Service: "github", AuthType: "bearer", Secret: "ghp_secret", TaskID: "task-1", Owner: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := cs.Get(ctx, "task-1", ref)
	if err != nil || got.Secret != "ghp_secret" || got.Service != "github" || got.Owner != "alice" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	raw, err := store.Get(ctx, "default/credentials/task-1/"+ref)
	if err != nil || strings.Contains(string(raw), "ghp_secret") || !secrets.IsSealed(string(raw)) {
		t.Errorf("stored blob %q (%v), want it sealed", raw, err)
	}
	for name, try := range map[string]func() error{
		"another task's reference": func() error { _, err := cs.Get(ctx, "task-2", ref); return err },
		"an unknown reference":     func() error { _, err := cs.Get(ctx, "task-1", "cred-00"); return err },
		"a path, not a reference":  func() error { _, err := cs.Get(ctx, "task-1", "../../x"); return err },
	} {
		if err := try(); !errors.Is(err, secrets.ErrNoCredential) {
			t.Errorf("%s: %v, want ErrNoCredential", name, err)
		}
	}
	if _, err := (&secrets.CredentialStore{Store: store}).Put(ctx, secrets.Credential{Service: "x", Secret: "y", TaskID: "t"}); err == nil {
		t.Error("a store without a key kept a credential")
	}
}

// TestDelegatedCredential: a credential given for a remote agent's task
// opens for that agent and task only, and never for the task's own
// activities; a local one never opens for a remote agent.
func TestDelegatedCredential(t *testing.T) {
	ctx := context.Background()
	store, err := blobstore.NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sealer, _ := secrets.NewSealer(secrets.NewKey())
	cs := &secrets.CredentialStore{Store: store, Sealer: sealer, Namespace: "default"}
	delegated, err := cs.Put(ctx, secrets.Credential{Service: "github", Secret: "ghp_remote", TaskID: "task-1", Agent: "issues", RemoteTask: "remote-1"})
	if err != nil {
		t.Fatal(err)
	}
	local, err := cs.Put(ctx, secrets.Credential{Service: "github", Secret: "ghp_local", TaskID: "task-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := cs.DelegatedSecret(ctx, "task-1", delegated, "issues", "remote-1"); err != nil || got != "ghp_remote" {
		t.Errorf("DelegatedSecret for its agent and task = %q, %v", got, err)
	}
	if got, err := cs.Secret(ctx, "task-1", local); err != nil || got != "ghp_local" {
		t.Errorf("Secret of the local credential = %q, %v", got, err)
	}
	for name, try := range map[string]func() (string, error){
		"the task's activities":     func() (string, error) { return cs.Secret(ctx, "task-1", delegated) },
		"another agent":             func() (string, error) { return cs.DelegatedSecret(ctx, "task-1", delegated, "evil", "remote-1") },
		"another remote task":       func() (string, error) { return cs.DelegatedSecret(ctx, "task-1", delegated, "issues", "remote-2") },
		"another task":              func() (string, error) { return cs.DelegatedSecret(ctx, "task-2", delegated, "issues", "remote-1") },
		"a local one, to an agent":  func() (string, error) { return cs.DelegatedSecret(ctx, "task-1", local, "issues", "remote-1") },
		"a local one, no agent set": func() (string, error) { return cs.DelegatedSecret(ctx, "task-1", local, "", "") },
	} {
		if got, err := try(); !errors.Is(err, secrets.ErrNoCredential) || got != "" {
			t.Errorf("%s: %q, %v; want ErrNoCredential", name, got, err)
		}
	}
}
