package guard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/api/guard/guardtest"
)

func TestNewAuthenticatorErrors(t *testing.T) {
	k := guardtest.NewKeys(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)

	tests := []struct {
		name string
		cfg  AuthConfig
		ok   bool
		on   bool
	}{
		{"zero value: off", AuthConfig{}, true, false},
		{"API keys", AuthConfig{APIKeys: map[string]string{"a": "k1"}}, true, true},
		{"JWKS URL", AuthConfig{JWT: JWTConfig{JWKSURL: k.JWKSURL}}, true, true},
		{"short HS256 secret", AuthConfig{JWT: JWTConfig{HS256Secret: []byte("short")}}, false, false},
		{"empty key", AuthConfig{APIKeys: map[string]string{"a": ""}}, false, false},
		{"empty name", AuthConfig{APIKeys: map[string]string{" ": "k"}}, false, false},
		{"shared key", AuthConfig{APIKeys: map[string]string{"a": "k", "b": "k"}}, false, false},
		{"issuer without JWT", AuthConfig{JWT: JWTConfig{Issuer: guardtest.Issuer}}, false, false},
		{"JWKS URL down", AuthConfig{JWT: JWTConfig{JWKSURL: failing.URL}}, false, false},
		{"JWKS URL not a URL", AuthConfig{JWT: JWTConfig{JWKSURL: "::"}}, false, false},
		{"JWKS file missing", AuthConfig{JWT: JWTConfig{JWKSFile: filepath.Join(dir, "nope.json")}}, false, false},
		{"JWKS file not JSON", AuthConfig{JWT: JWTConfig{JWKSFile: write("bad.json", "{")}}, false, false},
		{"JWKS file without keys", AuthConfig{JWT: JWTConfig{JWKSFile: write("empty.json", `{"keys":[]}`)}}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewAuthenticator(t.Context(), tt.cfg)
			if tt.ok != (err == nil) {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrAuthConfig) {
				t.Errorf("err = %v, want it to wrap ErrAuthConfig", err)
			}
			if err == nil && a.Enabled() != tt.on {
				t.Errorf("Enabled() = %v, want %v", a.Enabled(), tt.on)
			}
		})
	}
	var nilAuth *Authenticator
	if nilAuth.Enabled() {
		t.Error("a nil Authenticator is enabled")
	}
}

func TestParseAPIKeys(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
		ok   bool
	}{
		{"empty", "", map[string]string{}, true},
		{"flag form", "alice=k1, bob=k2", map[string]string{"alice": "k1", "bob": "k2"}, true},
		{"file form", "# keys\nalice = k1\n\nbob=k=2\n", map[string]string{"alice": "k1", "bob": "k=2"}, true},
		{"no =", "alice", nil, false},
		{"no key", "alice=", nil, false},
		{"no name", "=k", nil, false},
		{"duplicate name", "alice=k1\nalice=k2", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAPIKeys(tt.in)
			if tt.ok != (err == nil) {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}
