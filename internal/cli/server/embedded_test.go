package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/temporalserver"
)

// TestUIFlagDefaults: serve and temporal bind the UI and the frontend to
// loopback and keep the UI's write actions off unless told otherwise.
func TestUIFlagDefaults(t *testing.T) {
	clearEnv(t, "A2AFLOW_UI_ADDR", "A2AFLOW_TEMPORAL_ADDR", "A2AFLOW_UI_WRITE_ACTIONS", "A2AFLOW_UI_OIDC_ISSUER")
	want := map[string]string{"ui-addr": "127.0.0.1:8233", "temporal-addr": "127.0.0.1:7233", "ui-write-actions": "false", "ui-oidc-issuer": ""}
	for _, cmd := range []*cobra.Command{newServeCmd(testApp()), newTemporalCmd(testApp())} {
		got := flagDefaults(t, cmd, "ui-addr", "temporal-addr", "ui-write-actions", "ui-oidc-issuer")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s flag defaults (-want +got):\n%s", cmd.Name(), diff)
		}
		for _, addr := range []string{got["ui-addr"], got["temporal-addr"]} {
			if exposed(addr) {
				t.Errorf("%s: default %s is open to the network", cmd.Name(), addr)
			}
		}
	}
	t.Setenv("A2AFLOW_UI_WRITE_ACTIONS", "true")
	if got := flagDefaults(t, newServeCmd(testApp()), "ui-write-actions")["ui-write-actions"]; got != "true" {
		t.Errorf("A2AFLOW_UI_WRITE_ACTIONS=true: --ui-write-actions defaults to %s", got)
	}
}

// TestUIOIDCFlags: the OIDC flags become temporalserver.UIOIDC, the secret
// from its file or the environment.
func TestUIOIDCFlags(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := uiConfig{OIDCIssuer: "https://issuer.example", OIDCClientID: "ui", OIDCCallbackURL: "https://t.example/auth/sso/callback"}
	tests := []struct {
		name    string
		flags   uiConfig
		env     string // A2AFLOW_UI_OIDC_CLIENT_SECRET
		want    *temporalserver.UIOIDC
		wantErr string
	}{
		{"none", uiConfig{}, "", nil, ""},
		{"secret from env", base, "from-env",
			&temporalserver.UIOIDC{IssuerURL: "https://issuer.example", ClientID: "ui", ClientSecret: "from-env", CallbackURL: "https://t.example/auth/sso/callback"}, ""},
		{"secret from file", func() uiConfig {
			c := base
			c.OIDCClientSecretFile = secretFile
			c.OIDCScopes = []string{"openid"}
			return c
		}(), "",
			&temporalserver.UIOIDC{IssuerURL: "https://issuer.example", ClientID: "ui", ClientSecret: "from-file", CallbackURL: "https://t.example/auth/sso/callback", Scopes: []string{"openid"}}, ""},
		{"secret twice", func() uiConfig { c := base; c.OIDCClientSecretFile = secretFile; return c }(), "from-env", nil, "not both"},
		{"no issuer", uiConfig{OIDCClientID: "ui"}, "", nil, "need --ui-oidc-issuer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("A2AFLOW_UI_OIDC_CLIENT_SECRET", tt.env)
			got, err := tt.flags.oidc()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("UIOIDC (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUINotes: the printout says when the UI or the frontend is open to
// the network, has a login or write actions, and nothing for the default.
func TestUINotes(t *testing.T) {
	tests := []struct {
		addr  string
		flags uiConfig
		want  string
	}{
		{"127.0.0.1:8233", uiConfig{}, ""},
		{"localhost:8233", uiConfig{}, ""},
		{"[::1]:8233", uiConfig{}, ""},
		{":8233", uiConfig{}, "  (open to the network)"},
		{"0.0.0.0:8233", uiConfig{OIDCIssuer: "https://issuer.example"}, "  (open to the network, OIDC login)"},
		{"192.168.1.5:8233", uiConfig{WriteActions: true}, "  (open to the network, write actions on)"},
		{"127.0.0.1:8233", uiConfig{WriteActions: true}, "  (write actions on)"},
	}
	for _, tt := range tests {
		if got := tt.flags.notes(tt.addr); got != tt.want {
			t.Errorf("notes(%q, %+v) = %q, want %q", tt.addr, tt.flags, got, tt.want)
		}
	}
	if got := frontendNote("0.0.0.0:7233"); got != "; open to the network, no authentication" {
		t.Errorf("frontendNote(0.0.0.0:7233) = %q", got)
	}
	if got := frontendNote("127.0.0.1:7233"); got != "" {
		t.Errorf("frontendNote(127.0.0.1:7233) = %q, want nothing", got)
	}
}
