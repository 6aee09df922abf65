package webhook_test

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/webhook"
	"github.com/a2aflow/a2aflow/internal/wire"
)

func mustPolicy(t *testing.T, allow ...string) *webhook.Policy {
	t.Helper()
	p, err := webhook.ParsePolicy(allow)
	if err != nil {
		t.Fatalf("ParsePolicy(%q): %v", allow, err)
	}
	return p
}

func TestPolicyCheckAddr(t *testing.T) {
	none := mustPolicy(t)
	loopback := mustPolicy(t, "loopback")
	private := mustPolicy(t, "private", "link-local")
	cidr := mustPolicy(t, "10.1.0.0/16", "169.254.169.254")
	all := mustPolicy(t, "all")
	tests := []struct {
		addr   string
		policy *webhook.Policy
		kind   string // "" allowed, else the kind named in the error
	}{
		{"93.184.215.14", nil, ""},
		{"2606:4700::1111", none, ""},
		{"127.0.0.1", nil, "loopback"},
		{"127.0.0.1", none, "loopback"},
		{"127.9.9.9", none, "loopback"},
		{"::1", none, "loopback"},
		{"::ffff:127.0.0.1", none, "loopback"},
		{"127.0.0.1", loopback, ""},
		{"::1", loopback, ""},
		{"::ffff:127.0.0.1", loopback, ""},
		{"10.0.0.1", loopback, "private"},
		{"172.16.5.4", none, "private"},
		{"192.168.1.1", none, "private"},
		{"fd12:3456::1", none, "private"},
		{"100.64.0.1", none, "CGNAT"},
		{"169.254.1.1", none, "link-local"},
		{"fe80::1", none, "link-local"},
		{"fe80::1%eth0", none, "link-local"},
		{"169.254.169.254", none, "cloud metadata"},
		{"fd00:ec2::254", none, "cloud metadata"},
		{"100.100.100.200", none, "cloud metadata"},
		{"0.0.0.0", none, "unspecified"},
		{"::", none, "unspecified"},
		{"224.0.0.1", none, "multicast"},
		{"ff02::1", none, "multicast"},
		{"255.255.255.255", none, "reserved"},
		{"64:ff9b::a00:1", none, "private"},  // NAT64 of 10.0.0.1
		{"2002:7f00:1::1", none, "loopback"}, // 6to4 of 127.0.0.1
		{"64:ff9b::5db8:d70e", none, ""},     // NAT64 of a public address
		{"10.0.0.1", private, ""},
		{"100.64.0.1", private, ""},
		{"fd12:3456::1", private, ""},
		{"169.254.1.1", private, ""},
		{"169.254.169.254", private, "cloud metadata"}, // keywords never allow metadata
		{"fd00:ec2::254", private, "cloud metadata"},
		{"127.0.0.1", private, "loopback"},
		{"10.1.2.3", cidr, ""},
		{"10.2.0.1", cidr, "private"},
		{"169.254.169.254", cidr, ""},
		{"169.254.169.254", all, ""},
		{"127.0.0.1", all, ""},
	}
	for _, tt := range tests {
		t.Run(tt.addr+"/"+tt.policy.String(), func(t *testing.T) {
			err := tt.policy.CheckAddr(netip.MustParseAddr(tt.addr))
			if tt.kind == "" {
				if err != nil {
					t.Fatalf("CheckAddr(%s) = %v, want allowed", tt.addr, err)
				}
				return
			}
			if !errors.Is(err, webhook.ErrForbiddenAddress) || !strings.Contains(err.Error(), tt.kind) {
				t.Fatalf("CheckAddr(%s) = %v, want ErrForbiddenAddress naming %q", tt.addr, err, tt.kind)
			}
		})
	}
}

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		allow   []string
		want    string
		wantErr bool
	}{
		{nil, "public addresses only", false},
		{[]string{"", " "}, "public addresses only", false},
		{[]string{"Loopback"}, "public addresses and loopback", false},
		{[]string{"loopback", "10.0.0.0/8", "192.168.1.7"}, "public addresses and loopback, 10.0.0.0/8, 192.168.1.7/32", false},
		{[]string{"10.0.0.1/8"}, "public addresses and 10.0.0.0/8", false},
		{[]string{"all"}, "all addresses", false},
		{[]string{"localhost"}, "", true},
		{[]string{"10.0.0.0/33"}, "", true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.allow, ","), func(t *testing.T) {
			p, err := webhook.ParsePolicy(tt.allow)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParsePolicy(%q) = %v, want an error", tt.allow, p)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, p.String()); diff != "" {
				t.Errorf("String() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPolicyCheckURL(t *testing.T) {
	loopback := mustPolicy(t, "loopback")
	tests := []struct {
		url     string
		policy  *webhook.Policy
		wantErr error
	}{
		{"http://127.0.0.1:9/hook", loopback, nil},
		{"http://localhost:9/hook", loopback, nil},
		{"https://[::1]/hook", loopback, nil},
		{"http://93.184.215.14/hook?key=secret", nil, nil},
		// localhost resolves to loopback addresses: refused without allowance.
		{"http://localhost:9/hook", nil, webhook.ErrForbiddenAddress},
		{"http://127.0.0.1/hook", nil, webhook.ErrForbiddenAddress},
		{"http://10.0.0.1/", loopback, webhook.ErrForbiddenAddress},
		{"http://169.254.169.254/latest/meta-data/", loopback, webhook.ErrForbiddenAddress},
		{"http://[fd00:ec2::254]/", loopback, webhook.ErrForbiddenAddress},
		{"http://0.0.0.0:8080/", loopback, webhook.ErrForbiddenAddress},
		{"", loopback, webhook.ErrInvalidURL},
		{"ftp://127.0.0.1/", loopback, webhook.ErrInvalidURL},
		{"/relative", loopback, webhook.ErrInvalidURL},
		{"http://user:pass@127.0.0.1/", loopback, webhook.ErrInvalidURL},
		{"http://%zz/", loopback, webhook.ErrInvalidURL},
		{"http://" + strings.Repeat("a", webhook.MaxURLLength) + ".example/", loopback, webhook.ErrInvalidURL},
		{"http://no-such-host.invalid/", loopback, webhook.ErrUnresolvableHost},
	}
	for _, tt := range tests {
		name := tt.url
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			err := tt.policy.CheckURL(context.Background(), tt.url)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("CheckURL(%q) = %v, want %v", tt.url, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q shows the URL's query", err)
			}
		})
	}
}

func TestSealer(t *testing.T) {
	key, newKey := webhook.NewKey(), webhook.NewKey()
	s, err := webhook.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := webhook.NewSealer(newKey, key)
	if err != nil {
		t.Fatal(err)
	}
	other, err := webhook.NewSealer(webhook.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	sealed := s.Seal("s3cret", "task-1", "hook")
	if !webhook.IsSealed(sealed) || strings.Contains(sealed, "s3cret") {
		t.Fatalf("Seal = %q, want a sealed value without the secret", sealed)
	}
	if sealed == s.Seal("s3cret", "task-1", "hook") {
		t.Error("two seals of one value are equal; the nonce must differ")
	}
	// A value sealed by an earlier a2aflow (v1, bound to nothing).
	v1 := sealV1(t, key, "old-secret")
	tests := []struct {
		name     string
		sealer   *webhook.Sealer
		value    string
		task     a2a.TaskID
		configID string
		want     string
		wantErr  error
	}{
		{"round trip", s, sealed, "task-1", "hook", "s3cret", nil},
		{"after a key rotation", rotated, sealed, "task-1", "hook", "s3cret", nil},
		{"copied into another task", s, sealed, "task-2", "hook", "", webhook.ErrCannotOpen},
		{"copied into another config", s, sealed, "task-1", "other", "", webhook.ErrCannotOpen},
		{"plain value reads as is", s, "plain", "task-1", "hook", "plain", nil},
		{"nil sealer reads plain", nil, "plain", "task-1", "hook", "plain", nil},
		{"empty", s, "", "task-1", "hook", "", nil},
		{"nil sealer cannot open", nil, sealed, "task-1", "hook", "", webhook.ErrNoKey},
		{"other key", other, sealed, "task-1", "hook", "", webhook.ErrCannotOpen},
		{"tampered", s, sealed[:len(sealed)-2] + "AA", "task-1", "hook", "", webhook.ErrCannotOpen},
		{"v1 value still opens", s, v1, "any", "any", "old-secret", nil},
		{"v1 value after a rotation", rotated, v1, "any", "any", "old-secret", nil},
		{"v1 garbage", s, "a2aflow-sealed:v1:!!", "task-1", "hook", "", webhook.ErrCannotOpen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.sealer.Open(tt.value, tt.task, tt.configID)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Open = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Open (-want +got):\n%s", diff)
			}
		})
	}
	if got := (*webhook.Sealer)(nil).Seal("x", "t", "c"); got != "x" {
		t.Errorf("nil Seal = %q, want the value unchanged", got)
	}
	if _, err := webhook.NewSealer([]byte("short")); err == nil {
		t.Error("NewSealer(5 bytes) succeeded, want an error")
	}
}

// sealV1 seals v as a2aflow sealed push secrets before they were bound to
// their task and config: AES-256-GCM, the prefix as associated data.
func sealV1(t *testing.T, key []byte, v string) string {
	t.Helper()
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "a2aflow-sealed:v1:"
	nonce := make([]byte, aead.NonceSize())
	out := aead.Seal(nonce, nonce, []byte(v), []byte(prefix))
	return prefix + base64.RawURLEncoding.EncodeToString(out)
}

func TestCheckAuth(t *testing.T) {
	tests := []struct {
		name                       string
		scheme, credentials, token string
		wantErr                    bool
	}{
		{"none", "", "", "", false},
		{"bearer", "Bearer", "abc.def-ghi", "tok", false},
		{"basic", "Basic", "dXNlcjpwYXNz", "", false},
		{"scheme only", "Bearer", "", "", false},
		{"credentials without scheme", "", "abc", "", true},
		{"scheme with space", "Bear er", "abc", "", true},
		{"newline in credentials", "Bearer", "abc\r\nX-Evil: 1", "", true},
		{"newline in token", "", "", "t\nX", true},
		{"non-ASCII token", "", "", "tök", true},
		{"token too long", "", "", strings.Repeat("t", webhook.MaxSecretLength+1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := webhook.CheckAuth(tt.scheme, tt.credentials, tt.token)
			if (err != nil) != tt.wantErr {
				t.Fatalf("CheckAuth = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && (strings.Contains(err.Error(), "abc") || strings.Contains(err.Error(), "tök")) {
				t.Errorf("error %q shows the secret", err)
			}
		})
	}
}

// TestSealerScheduleRuns: a value sealed for a schedule (its push config,
// before any run has an ID) opens for the schedule's runs, whose task IDs
// are the schedule's ID and a time, and for no other task: not a run of
// another schedule, not a task ID that merely contains the schedule's.
func TestSealerScheduleRuns(t *testing.T) {
	s, err := webhook.NewSealer(webhook.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	const sched = "sched-1c0d7f7e-5a3b-5d8e-9b0c-0f4d2e6b9a11"
	sealed := s.Seal("hook-token", a2a.TaskID(wire.ScheduleSealBinding(sched)), "cfg-1")
	if got, err := s.Open(sealed, a2a.TaskID(sched+"-2026-11-30T08:00:00Z"), "cfg-1"); err != nil || got != "hook-token" {
		t.Errorf("a run of the schedule opens %q, %v", got, err)
	}
	for _, other := range []string{
		"sched-00000000-0000-0000-0000-000000000000-2026-11-30T08:00:00Z", // another schedule's run
		sched,                                  // the schedule's ID alone
		"x" + sched + "-2026-11-30T08:00:00Z",  // a longer prefix
		sched + "-2026-11-30T08:00:00Z-extra",  // not a run's ID
		"6b0202ee-3c1f-4f1e-9a55-1d2c3b4a5f60", // a task of the API
	} {
		if _, err := s.Open(sealed, a2a.TaskID(other), "cfg-1"); !errors.Is(err, webhook.ErrCannotOpen) {
			t.Errorf("task %s opens the schedule's secret (%v)", other, err)
		}
	}
	if _, err := s.Open(sealed, a2a.TaskID(sched+"-2026-11-30T08:00:00Z"), "cfg-2"); !errors.Is(err, webhook.ErrCannotOpen) {
		t.Errorf("another config of the run opens the schedule's secret (%v)", err)
	}
	if id, ok := webhook.ScheduleOfRun(a2a.TaskID(sched + "-2026-11-30T08:00:00Z")); !ok || id != sched {
		t.Errorf("ScheduleOfRun = %q, %v", id, ok)
	}
}
