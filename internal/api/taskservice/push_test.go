package taskservice

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/webhook"
)

func TestPreparePushConfig(t *testing.T) {
	loopback, err := webhook.ParsePolicy([]string{"loopback"})
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := webhook.NewSealer(webhook.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	s := &TaskService{push: PushOptions{Policy: loopback, Sealer: sealer}}
	tests := []struct {
		name    string
		config  *a2a.PushConfig
		wantErr string // part of the InvalidParams message; "" accepted
	}{
		{"nil", nil, ""},
		{"loopback allowed", &a2a.PushConfig{URL: "http://127.0.0.1:9/hook", Token: "tok", Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "cred"}}, ""},
		{"localhost allowed", &a2a.PushConfig{ID: "mine", URL: "http://localhost:9/hook"}, ""},
		{"private refused", &a2a.PushConfig{URL: "http://10.0.0.1/"}, "private address"},
		{"metadata refused", &a2a.PushConfig{URL: "http://169.254.169.254/latest/meta-data/"}, "cloud metadata"},
		{"no url", &a2a.PushConfig{}, "URL is empty"},
		{"not http", &a2a.PushConfig{URL: "file:///etc/passwd"}, "scheme must be http or https"},
		{"credentials without scheme", &a2a.PushConfig{URL: "http://127.0.0.1/", Auth: &a2a.PushAuthInfo{Credentials: "cred"}}, "scheme is required"},
		{"header injection", &a2a.PushConfig{URL: "http://127.0.0.1/", Token: "a\r\nX-Evil: 1"}, "token holds characters"},
		{"id too long", &a2a.PushConfig{ID: strings.Repeat("x", 257), URL: "http://127.0.0.1/"}, "id is longer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.PreparePushConfig(context.Background(), "task-1", tt.config)
			if tt.wantErr != "" {
				if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want InvalidParams saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.config == nil {
				if got != nil {
					t.Fatalf("got %+v, want nil", got)
				}
				return
			}
			if got.ID == "" || (tt.config.ID != "" && got.ID != tt.config.ID) {
				t.Errorf("id = %q, want %q or a new one", got.ID, tt.config.ID)
			}
			if tt.config.Token != "" && (got.Token == tt.config.Token || !webhook.IsSealed(got.Token)) {
				t.Errorf("token %q is not sealed", got.Token)
			}
			if tt.config.Auth != nil && !webhook.IsSealed(got.Auth.Credentials) {
				t.Errorf("credentials %q are not sealed", got.Auth.Credentials)
			}
			// Sealed for this task and config: it opens so, and only so.
			if tt.config.Token != "" {
				if tok, err := sealer.Open(got.Token, "task-1", got.ID); err != nil || tok != tt.config.Token {
					t.Errorf("open the token for its task and config: %q, %v", tok, err)
				}
				if _, err := sealer.Open(got.Token, "task-2", got.ID); err == nil {
					t.Error("the token opened for another task")
				}
			}
			// What the API answers never holds the secrets.
			shown := RedactPushConfig(got)
			want := *tt.config
			want.ID = got.ID
			if want.Token != "" {
				want.Token = webhook.Redacted
			}
			if want.Auth != nil {
				want.Auth = &a2a.PushAuthInfo{Scheme: want.Auth.Scheme, Credentials: webhook.Redacted}
			}
			if diff := cmp.Diff(&want, shown); diff != "" {
				t.Errorf("config as the API shows it (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPageBounds(t *testing.T) {
	tests := []struct {
		n, pageSize int
		token       string
		start, end  int
		wantErr     bool
	}{
		{n: 3, start: 0, end: 3},
		{n: 3, pageSize: 2, start: 0, end: 2},
		{n: 3, pageSize: 2, token: "2", start: 2, end: 3},
		{n: 3, pageSize: 5, token: "9", start: 3, end: 3},
		{n: 0, start: 0, end: 0},
		{n: 3, pageSize: -1, wantErr: true},
		{n: 3, token: "x", wantErr: true},
		{n: 3, token: "-1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("n=%d,size=%d,token=%q", tt.n, tt.pageSize, tt.token), func(t *testing.T) {
			start, end, err := pageBounds(tt.n, tt.pageSize, tt.token)
			if tt.wantErr {
				if !errors.Is(err, a2a.ErrInvalidParams) {
					t.Errorf("err = %v, want InvalidParams", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([2]int{tt.start, tt.end}, [2]int{start, end}); diff != "" {
				t.Errorf("bounds (-want +got):\n%s", diff)
			}
		})
	}
}
