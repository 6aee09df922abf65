package server

import (
	"bytes"
	"encoding/base64"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	newKey = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	oldKey = base64.StdEncoding.EncodeToString([]byte("fedcba9876543210fedcba9876543210"))
)

// loadWorker builds worker with args, its stderr into errOut, and loads its
// config file.
func loadWorker(t *testing.T, errOut io.Writer, args ...string) *config {
	t.Helper()
	cmd := newWorkerCmd(testApp())
	cmd.SetErr(errOut)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	v, _ := processConfigs.Load(cmd)
	cfg := v.(*config)
	if err := cfg.loadConfigFile(cmd); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestSecretsKeyFormerNames: --push-key, A2AFLOW_PUSH_KEY and the config
// file's push-key still give the secrets key, and --credentials the
// outbound credentials, each saying what to use instead; the new names win.
func TestSecretsKeyFormerNames(t *testing.T) {
	clearA2AflowEnv(t)
	var errOut bytes.Buffer
	cfg := loadWorker(t, &errOut, "--push-key", oldKey, "--credentials", "keys.json", "--insecure-store-push-secrets")
	if cfg.Secrets.Key.Get() != oldKey || cfg.OutboundCredentialsFile != "keys.json" || !cfg.Secrets.Insecure {
		t.Errorf("old flags: key %q, outbound credentials %q, insecure %t", cfg.Secrets.Key.Get(), cfg.OutboundCredentialsFile, cfg.Secrets.Insecure)
	}
	if cfg.sources["secrets-key"] != sourceFlag {
		t.Errorf("--push-key: secrets-key from %s, want flag", cfg.sources["secrets-key"])
	}

	t.Setenv("A2AFLOW_PUSH_KEY", oldKey)
	t.Setenv("A2AFLOW_CREDENTIALS", "env-keys.json")
	cfg = loadWorker(t, &errOut)
	if cfg.Secrets.Key.Get() != oldKey || cfg.OutboundCredentialsFile != "env-keys.json" || cfg.sources["secrets-key"] != sourceEnv {
		t.Errorf("old variables: key %q from %s, outbound credentials %q", cfg.Secrets.Key.Get(), cfg.sources["secrets-key"], cfg.OutboundCredentialsFile)
	}
	t.Setenv("A2AFLOW_SECRETS_KEY", newKey)
	if cfg = loadWorker(t, &errOut); cfg.Secrets.Key.Get() != newKey {
		t.Errorf("A2AFLOW_SECRETS_KEY does not win over A2AFLOW_PUSH_KEY")
	}

	clearA2AflowEnv(t)
	errOut.Reset()
	path := writeConfig(t, "push-key = \""+oldKey+"\"\ncredentials = \"file-keys.json\"\n")
	cfg = loadWorker(t, &errOut, "--config", path)
	if cfg.Secrets.Key.Get() != oldKey || cfg.sources["secrets-key"] != sourceFile || cfg.OutboundCredentialsFile != "file-keys.json" {
		t.Errorf("config file push-key: key %q from %s, outbound credentials %q", cfg.Secrets.Key.Get(), cfg.sources["secrets-key"], cfg.OutboundCredentialsFile)
	}
	for _, want := range []string{`key "push-key" is deprecated, use "secrets-key"`, `key "credentials" is deprecated, use "outbound-credentials"`} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("config file warnings lack %q:\n%s", want, errOut.String())
		}
	}
	// The flag wins over the file's former key.
	if cfg = loadWorker(t, &errOut, "--config", path, "--secrets-key", newKey); cfg.Secrets.Key.Get() != newKey {
		t.Errorf("--secrets-key does not win over the file's push-key")
	}
}

// TestSecretsKeyFile: serve generates secrets.key once, and keeps using the
// push.key of a data dir from an earlier release.
func TestSecretsKeyFile(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	var c secretsConfig
	if err := c.build(dir, logger); err != nil || len(c.keys) != 1 {
		t.Fatalf("build: %v, %d keys", err, len(c.keys))
	}
	raw, err := os.ReadFile(filepath.Join(dir, "secrets.key"))
	if err != nil || strings.TrimSpace(string(raw)) != base64.StdEncoding.EncodeToString(c.keys[0]) {
		t.Fatalf("secrets.key: %q, %v", raw, err)
	}
	var again secretsConfig
	if err := again.build(dir, logger); err != nil || !bytes.Equal(again.keys[0], c.keys[0]) {
		t.Errorf("a restart generated another key (%v)", err)
	}

	old := t.TempDir()
	if err := os.WriteFile(filepath.Join(old, "push.key"), []byte(oldKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var former secretsConfig
	if err := former.build(old, logger); err != nil || base64.StdEncoding.EncodeToString(former.keys[0]) != oldKey {
		t.Errorf("a data dir with push.key: %v, key %x", err, former.keys)
	}
	if _, err := os.Stat(filepath.Join(old, "secrets.key")); err == nil {
		t.Error("secrets.key generated beside push.key")
	}

	// api and worker need a key, or --insecure-store-secrets.
	var none secretsConfig
	if err := none.build("", logger); err == nil || !strings.Contains(err.Error(), "A2AFLOW_SECRETS_KEY") || !strings.Contains(err.Error(), "--insecure-store-secrets") {
		t.Errorf("no key: %v", err)
	}
}
