package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/api/guard"
)

// clearEnv unsets the variables that would change the flags' defaults.
func clearEnv(t *testing.T, keys ...string) {
	t.Helper()
	for _, k := range keys {
		t.Setenv(k, "")
	}
}

// flagDefaults returns the default of each named flag of cmd.
func flagDefaults(t *testing.T, cmd *cobra.Command, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range names {
		f := cmd.Flags().Lookup(n)
		if f == nil {
			t.Fatalf("%s has no --%s", cmd.Name(), n)
		}
		out[n] = f.DefValue
	}
	return out
}

// TestHTTPFlagDefaults: serve and api have the HTTP hardening flags with
// their safe defaults: timeouts on, 200 streams per principal, no rate
// limit, any host.
func TestHTTPFlagDefaults(t *testing.T) {
	clearEnv(t, "A2AFLOW_HTTP_READ_HEADER_TIMEOUT", "A2AFLOW_HTTP_READ_TIMEOUT", "A2AFLOW_HTTP_WRITE_TIMEOUT", "A2AFLOW_HTTP_IDLE_TIMEOUT",
		"A2AFLOW_MAX_STREAMS_PER_PRINCIPAL", "A2AFLOW_RATE_LIMIT", "A2AFLOW_RATE_BURST", "A2AFLOW_ALLOWED_HOSTS")
	want := map[string]string{
		"http-read-header-timeout": "10s", "http-read-timeout": "1m0s", "http-write-timeout": "2m0s", "http-idle-timeout": "2m0s",
		"max-streams-per-principal": "200", "rate-limit": "0", "rate-burst": "0", "allowed-hosts": "[]",
	}
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for _, cmd := range []*cobra.Command{newServeCmd(testApp()), newAPICmd(testApp())} {
		if diff := cmp.Diff(want, flagDefaults(t, cmd, names...)); diff != "" {
			t.Errorf("%s flag defaults (-want +got):\n%s", cmd.Name(), diff)
		}
	}
}

// TestHTTPConfigCheck: flags that cannot work are refused at start.
func TestHTTPConfigCheck(t *testing.T) {
	ok := httpConfig{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute, MaxStreams: 200}
	tests := []struct {
		name string
		edit func(*httpConfig)
		want string // "" accepted
	}{
		{"defaults", func(*httpConfig) {}, ""},
		{"no timeouts at all", func(c *httpConfig) { *c = httpConfig{} }, ""},
		{"negative timeout", func(c *httpConfig) { c.ReadTimeout = -time.Second }, "--http-read-timeout -1s: must not be negative"},
		{"write timeout within the wait", func(c *httpConfig) { c.WriteTimeout = 30 * time.Second }, "--http-write-timeout 30s must be longer than --wait-timeout 30s"},
		{"negative stream cap", func(c *httpConfig) { c.MaxStreams = -1 }, "--max-streams-per-principal -1"},
		{"negative rate", func(c *httpConfig) { c.RateLimit = -1 }, "--rate-limit -1"},
		{"a URL as host", func(c *httpConfig) { c.AllowedHosts = []string{"https://agents.example.com/"} }, `--allowed-hosts "https://agents.example.com/"`},
		{"hosts", func(c *httpConfig) { c.AllowedHosts = []string{"agents.example.com", "api.example.com:8443"} }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			var srv http.Server
			err := c.apply(&srv, 30*time.Second)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			case err == nil:
				got := [4]time.Duration{srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout}
				if want := [4]time.Duration{c.ReadHeaderTimeout, c.ReadTimeout, c.WriteTimeout, c.IdleTimeout}; got != want {
					t.Errorf("server timeouts %v, want %v", got, want)
				}
			}
		})
	}
}

// TestHTTPLimits: the flags' 0 streams means no cap, not the API's default.
func TestHTTPLimits(t *testing.T) {
	tests := []struct {
		flags httpConfig
		want  guard.Limits
	}{
		{httpConfig{MaxStreams: 200}, guard.Limits{MaxStreamsPerPrincipal: 200}},
		{httpConfig{MaxStreams: 0}, guard.Limits{MaxStreamsPerPrincipal: -1}},
		{httpConfig{MaxStreams: 5, RateLimit: 2.5, RateBurst: 10, AllowedHosts: []string{"a.example"}},
			guard.Limits{MaxStreamsPerPrincipal: 5, RatePerSecond: 2.5, RateBurst: 10, AllowedHosts: []string{"a.example"}}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.flags.limits()); diff != "" {
			t.Errorf("limits of %+v (-want +got):\n%s", tt.flags, diff)
		}
	}
}

// TestHTTPFlagsFromEnv: the environment sets each flag, and "0" turns a
// timeout off.
func TestHTTPFlagsFromEnv(t *testing.T) {
	t.Setenv("A2AFLOW_HTTP_WRITE_TIMEOUT", "0")
	t.Setenv("A2AFLOW_HTTP_READ_TIMEOUT", "15s")
	t.Setenv("A2AFLOW_MAX_STREAMS_PER_PRINCIPAL", "7")
	t.Setenv("A2AFLOW_RATE_LIMIT", "0.5")
	t.Setenv("A2AFLOW_RATE_BURST", "3")
	t.Setenv("A2AFLOW_ALLOWED_HOSTS", "agents.example.com, localhost")
	cmd := newAPICmd(testApp())
	got := flagDefaults(t, cmd, "http-write-timeout", "http-read-timeout", "max-streams-per-principal", "rate-limit", "rate-burst", "allowed-hosts")
	want := map[string]string{"http-write-timeout": "0s", "http-read-timeout": "15s", "max-streams-per-principal": "7",
		"rate-limit": "0.5", "rate-burst": "3", "allowed-hosts": "[agents.example.com,localhost]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flag defaults from the environment (-want +got):\n%s", diff)
	}
}
