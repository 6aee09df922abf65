package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"
)

// temporalEnv lists every variable the connection reads; each test starts
// with all of them unset and no temporal.toml.
var temporalEnv = []string{
	"A2AFLOW_TEMPORAL_ADDR", "A2AFLOW_NAMESPACE", envTLS, envTLSCert, envTLSKey, envTLSCA, envTLSServerName, envAPIKeyFile,
	"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_API_KEY", "TEMPORAL_TLS", "TEMPORAL_TLS_CLIENT_CERT_PATH",
	"TEMPORAL_TLS_CLIENT_KEY_PATH", "TEMPORAL_TLS_SERVER_CA_CERT_PATH", "TEMPORAL_TLS_SERVER_NAME",
	"TEMPORAL_TLS_DISABLE_HOST_VERIFICATION", "TEMPORAL_PROFILE", "TEMPORAL_CONFIG_FILE",
}

func cleanTemporalEnv(t *testing.T) {
	for _, k := range temporalEnv {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
	t.Setenv("TEMPORAL_CONFIG_FILE", filepath.Join(t.TempDir(), "none.toml"))
}

// resolve binds a dialing command's flags (after the environment is set),
// parses args and resolves the connection.
func resolve(t *testing.T, args ...string) (*config, client.Options, error) {
	t.Helper()
	cfg := &config{}
	fs := pflag.NewFlagSet("worker", pflag.ContinueOnError)
	cfg.bindTemporal(fs, false)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	opts, err := cfg.temporalClientOptions(client.Options{})
	return cfg, opts, err
}

// writeCert writes a self-signed certificate for name and its key into dir.
func writeCert(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func writeProfile(t *testing.T, toml string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "temporal.toml")
	if err := os.WriteFile(file, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEMPORAL_CONFIG_FILE", file)
}

// TestTemporalAddressPrecedence: flag > A2AFLOW_* > TEMPORAL_* > profile >
// default, for the address and the namespace, and the config carries the
// ones used.
func TestTemporalAddressPrecedence(t *testing.T) {
	profile := `
[profile.default]
address = "default-profile:7233"
namespace = "default-profile-ns"

[profile.prod]
address = "prod:7233"
namespace = "prod-ns"
`
	cases := []struct {
		name           string
		env            map[string]string
		profile        string
		args           []string
		wantAddr, want string
	}{
		{"defaults", nil, "", nil, "127.0.0.1:7233", "default"},
		{"profile default", nil, profile, nil, "default-profile:7233", "default-profile-ns"},
		{"TEMPORAL_PROFILE", map[string]string{"TEMPORAL_PROFILE": "prod"}, profile, nil, "prod:7233", "prod-ns"},
		{"TEMPORAL_* over profile", map[string]string{"TEMPORAL_PROFILE": "prod", "TEMPORAL_ADDRESS": "env:7233", "TEMPORAL_NAMESPACE": "env-ns"}, profile, nil, "env:7233", "env-ns"},
		{"A2AFLOW_* over TEMPORAL_*", map[string]string{"TEMPORAL_ADDRESS": "env:7233", "TEMPORAL_NAMESPACE": "env-ns",
			"A2AFLOW_TEMPORAL_ADDR": "a2aflow:7233", "A2AFLOW_NAMESPACE": "a2aflow-ns"}, profile, nil, "a2aflow:7233", "a2aflow-ns"},
		{"flags over all", map[string]string{"TEMPORAL_ADDRESS": "env:7233", "A2AFLOW_TEMPORAL_ADDR": "a2aflow:7233", "TEMPORAL_NAMESPACE": "env-ns"}, profile,
			[]string{"--temporal-addr", "flag:7233", "--namespace", "flag-ns"}, "flag:7233", "flag-ns"},
		{"flag equal to the default still wins", map[string]string{"TEMPORAL_ADDRESS": "env:7233"}, "",
			[]string{"--temporal-addr", "127.0.0.1:7233"}, "127.0.0.1:7233", "default"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cleanTemporalEnv(t)
			if tc.profile != "" {
				writeProfile(t, tc.profile)
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, opts, err := resolve(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if opts.HostPort != tc.wantAddr || opts.Namespace != tc.want {
				t.Errorf("dials %s namespace %s, want %s namespace %s", opts.HostPort, opts.Namespace, tc.wantAddr, tc.want)
			}
			if cfg.TemporalAddr != opts.HostPort || cfg.Namespace != opts.Namespace {
				t.Errorf("config says %s namespace %s, the options %s %s", cfg.TemporalAddr, cfg.Namespace, opts.HostPort, opts.Namespace)
			}
			if opts.ConnectionOptions.TLS != nil {
				t.Errorf("TLS on without any TLS setting")
			}
		})
	}
}

// TestTemporalTLSPrecedence: TLS on and off, certificates and API keys
// from flags over variables over the profile.
func TestTemporalTLSPrecedence(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeCert(t, dir, "client")
	ca, _ := writeCert(t, dir, "ca")
	_, otherKey := writeCert(t, dir, "other")
	keyFile := filepath.Join(dir, "api.key")
	if err := os.WriteFile(keyFile, []byte("key-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")

	t.Run("TEMPORAL_TLS", func(t *testing.T) {
		cleanTemporalEnv(t)
		t.Setenv("TEMPORAL_TLS", "true")
		_, opts, err := resolve(t)
		if err != nil || tlsMode(opts) != "on" {
			t.Fatalf("tls %s, err %v; want on", tlsMode(opts), err)
		}
	})
	t.Run("--temporal-tls=false over TEMPORAL_TLS and an API key", func(t *testing.T) {
		cleanTemporalEnv(t)
		t.Setenv("TEMPORAL_TLS", "true")
		t.Setenv("TEMPORAL_API_KEY", "k")
		_, opts, err := resolve(t, "--temporal-tls=false")
		if err != nil || tlsMode(opts) != "off" {
			t.Fatalf("tls %s, err %v; want off", tlsMode(opts), err)
		}
	})
	t.Run("A2AFLOW_TEMPORAL_TLS=false over the profile", func(t *testing.T) {
		cleanTemporalEnv(t)
		writeProfile(t, "[profile.default]\naddress = \"p:7233\"\n[profile.default.tls]\n")
		t.Setenv(envTLS, "false")
		_, opts, err := resolve(t)
		if err != nil || tlsMode(opts) != "off" {
			t.Fatalf("tls %s, err %v; want off", tlsMode(opts), err)
		}
	})
	t.Run("A2AFLOW_TEMPORAL_TLS not a boolean", func(t *testing.T) {
		cleanTemporalEnv(t)
		t.Setenv(envTLS, "yes")
		if _, _, err := resolve(t); err == nil || !strings.Contains(err.Error(), "A2AFLOW_TEMPORAL_TLS=yes: want true or false") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("API key: TEMPORAL_API_KEY implies TLS", func(t *testing.T) {
		cleanTemporalEnv(t)
		t.Setenv("TEMPORAL_API_KEY", "k")
		cfg, opts, err := resolve(t)
		if err != nil || tlsMode(opts) != "on" || opts.Credentials == nil || cfg.Conn.apiKeyFrom != "TEMPORAL_API_KEY" {
			t.Fatalf("tls %s, credentials %v, from %q, err %v", tlsMode(opts), opts.Credentials, cfg.Conn.apiKeyFrom, err)
		}
	})
	t.Run("API key: the file flag over TEMPORAL_API_KEY", func(t *testing.T) {
		cleanTemporalEnv(t)
		t.Setenv("TEMPORAL_API_KEY", "k")
		cfg, opts, err := resolve(t, "--temporal-api-key-file", keyFile)
		if err != nil || opts.Credentials == nil || cfg.Conn.apiKeyFrom != "--temporal-api-key-file" {
			t.Fatalf("credentials %v, from %q, err %v", opts.Credentials, cfg.Conn.apiKeyFrom, err)
		}
		if strings.Contains(strings.Join(func() []string {
			var s []string
			for _, v := range cfg.Conn.describe {
				s = append(s, v.(string))
			}
			return s
		}(), " "), "key-from-file") {
			t.Error("the log line carries the key")
		}
	})
	t.Run("mutual TLS from TEMPORAL_*", func(t *testing.T) {
		cleanTemporalEnv(t)
		t.Setenv("TEMPORAL_TLS_CLIENT_CERT_PATH", cert)
		t.Setenv("TEMPORAL_TLS_CLIENT_KEY_PATH", key)
		t.Setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", ca)
		t.Setenv("TEMPORAL_TLS_SERVER_NAME", "temporal.internal")
		_, opts, err := resolve(t)
		if err != nil || tlsMode(opts) != "mutual" || opts.ConnectionOptions.TLS.RootCAs == nil || opts.ConnectionOptions.TLS.ServerName != "temporal.internal" {
			t.Fatalf("tls %s, err %v", tlsMode(opts), err)
		}
	})
	t.Run("certificate flags over TEMPORAL_* paths", func(t *testing.T) {
		cleanTemporalEnv(t)
		t.Setenv("TEMPORAL_TLS_CLIENT_CERT_PATH", missing)
		t.Setenv("TEMPORAL_TLS_CLIENT_KEY_PATH", missing)
		t.Setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", missing)
		t.Setenv("TEMPORAL_TLS_SERVER_NAME", "env.name")
		_, opts, err := resolve(t, "--temporal-tls-cert", cert, "--temporal-tls-key", key, "--temporal-tls-ca", ca, "--temporal-tls-server-name", "flag.name")
		if err != nil || tlsMode(opts) != "mutual" || opts.ConnectionOptions.TLS.ServerName != "flag.name" {
			t.Fatalf("tls %s, err %v", tlsMode(opts), err)
		}
	})
	t.Run("A2AFLOW_* certificate over the profile's", func(t *testing.T) {
		cleanTemporalEnv(t)
		writeProfile(t, "[profile.default.tls]\nclient_cert_path = \""+missing+"\"\nclient_key_path = \""+missing+"\"\n")
		t.Setenv(envTLSCert, cert)
		t.Setenv(envTLSKey, key)
		_, opts, err := resolve(t)
		if err != nil || tlsMode(opts) != "mutual" {
			t.Fatalf("tls %s, err %v", tlsMode(opts), err)
		}
	})

	// Errors name the file and the setting it came from.
	errCases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"certificate without key", nil, []string{"--temporal-tls-cert", cert}, "the Temporal client certificate (--temporal-tls-cert) needs its private key"},
		{"key without certificate", map[string]string{"TEMPORAL_TLS_CLIENT_KEY_PATH": key}, nil, "the Temporal client key (TEMPORAL_TLS_CLIENT_KEY_PATH) needs its certificate"},
		{"missing key file", map[string]string{envTLSCert: cert, envTLSKey: missing}, nil, "the Temporal client key (A2AFLOW_TEMPORAL_TLS_KEY): open " + missing},
		{"key of another certificate", nil, []string{"--temporal-tls-cert", cert, "--temporal-tls-key", otherKey}, "do not make a pair"},
		{"CA not PEM", map[string]string{"TEMPORAL_TLS_SERVER_CA_CERT_PATH": keyFile}, nil, "the Temporal server CA " + keyFile + " holds no PEM certificate"},
		{"missing API key file", nil, []string{"--temporal-api-key-file", missing}, "Temporal API key (--temporal-api-key-file): open " + missing},
		{"unknown profile", map[string]string{"TEMPORAL_PROFILE": "nope"}, nil, "unable to find profile nope"},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			cleanTemporalEnv(t)
			if tc.name == "unknown profile" {
				writeProfile(t, "[profile.default]\naddress = \"p:7233\"\n")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, _, err := resolve(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of several lines: %q", err)
			}
		})
	}
}

// TestFrontendTLSFlags: serve and temporal take the frontend's TLS flags,
// and a partial set is one clear error.
func TestFrontendTLSFlags(t *testing.T) {
	cleanTemporalEnv(t)
	cfg := &config{}
	fs := pflag.NewFlagSet("temporal", pflag.ContinueOnError)
	cfg.bindTemporal(fs, true)
	if fs.Lookup(flagTLSCert) != nil || fs.Lookup(flagTLSServerCert) == nil {
		t.Fatal("serve and temporal bind the server's TLS flags, not the client's")
	}
	if ft, err := cfg.Conn.frontendTLS(); ft != nil || err != nil {
		t.Errorf("no flags: %v, %v; want plain gRPC", ft, err)
	}
	if err := fs.Parse([]string{"--temporal-tls-client-ca", "ca.pem"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Conn.frontendTLS(); err == nil || !strings.Contains(err.Error(), "--temporal-tls-server-cert") {
		t.Errorf("client CA without a certificate: %v", err)
	}
	if err := fs.Parse([]string{"--temporal-tls-server-cert", "c.pem"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Conn.frontendTLS(); err == nil || !strings.Contains(err.Error(), "--temporal-tls-server-key") {
		t.Errorf("certificate without key: %v", err)
	}
}
