package activities_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/llm"
)

const secretKey = "sk-live-abcdefghijklmnop"

// appErrorView is what Temporal's retry policy and history see of an error.
type appErrorView struct {
	Type           string
	NonRetryable   bool
	NextRetryDelay time.Duration
	Message        string
}

func TestCompleteChatErrors(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		headers map[string]string
		body    string
		want    appErrorView
	}{
		{
			name:    "429 is retried after Retry-After",
			status:  429,
			headers: map[string]string{"Retry-After": "7"},
			body:    `{"error": {"message": "Rate limit reached", "type": "requests", "param": null, "code": null}}`,
			want:    appErrorView{llm.ErrTypeRateLimited, false, 7 * time.Second, "openai API answered 429: Rate limit reached"},
		},
		{
			name:   "500 is retried",
			status: 500,
			body:   `{"error": {"message": "boom", "type": "server_error", "param": null, "code": null}}`,
			want:   appErrorView{llm.ErrTypeUnavailable, false, 0, "openai API answered 500: boom"},
		},
		{
			name:   "400 is not retried",
			status: 400,
			body:   `{"error": {"message": "bad schema", "type": "invalid_request_error", "param": null, "code": null}}`,
			want:   appErrorView{llm.ErrTypeRejected, true, 0, "openai API answered 400: bad schema"},
		},
		{
			name:   "401 keeps the key out of history",
			status: 401,
			body:   `{"error": {"message": "Incorrect API key provided: ` + secretKey + `", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`,
			want:   appErrorView{llm.ErrTypeRejected, true, 0, "openai API answered 401: Incorrect API key provided: [redacted]"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.headers {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			env.RegisterActivity(&activities.LLM{Provider: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL, APIKey: secretKey})})

			_, err := env.ExecuteActivity(llm.ActivityCompleteChat, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}})
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) {
				t.Fatalf("err = %v, want an ApplicationError", err)
			}
			got := appErrorView{appErr.Type(), appErr.NonRetryable(), appErr.NextRetryDelay(), appErr.Message()}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), secretKey) || appErr.Unwrap() != nil {
				t.Errorf("the error carries the key or a cause that might: %v", err)
			}
		})
	}
}

func TestCompleteChatNotConfigured(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&activities.LLM{})
	_, err := env.ExecuteActivity(llm.ActivityCompleteChat, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != llm.ErrTypeNotConfigured || !appErr.NonRetryable() {
		t.Fatalf("err = %v, want a non-retryable %s error", err, llm.ErrTypeNotConfigured)
	}
	if !strings.Contains(appErr.Message(), "OPENAI_BASE_URL") {
		t.Errorf("message %q does not say how to configure an LLM", appErr.Message())
	}
}

// namedProvider answers every call with its own name.
type namedProvider struct{ name string }

func (p namedProvider) Name() string  { return p.name }
func (p namedProvider) Model() string { return p.name + "-model" }
func (p namedProvider) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	return llm.Response{Text: p.name, Model: p.name + "-model"}, nil
}

// TestCompleteChatProvider: a request naming a provider (llm.WithProvider)
// goes to that one, none to the default, an unconfigured one fails without
// retries.
func TestCompleteChatProvider(t *testing.T) {
	a := &activities.LLM{Provider: namedProvider{"openai"}, Providers: map[string]llm.Provider{"openai": namedProvider{"openai"}, "anthropic": namedProvider{"anthropic"}}}
	for provider, want := range map[string]string{"": "openai", "openai": "openai", "anthropic": "anthropic"} {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivity(a)
		v, err := env.ExecuteActivity(llm.ActivityCompleteChat, llm.Request{Provider: provider, Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}})
		if err != nil {
			t.Fatalf("provider %q: %v", provider, err)
		}
		var resp llm.Response
		if err := v.Get(&resp); err != nil || resp.Text != want {
			t.Errorf("provider %q answered by %q (%v), want %q", provider, resp.Text, err, want)
		}
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&activities.LLM{Provider: namedProvider{"openai"}})
	_, err := env.ExecuteActivity(llm.ActivityCompleteChat, llm.Request{Provider: "anthropic", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !appErr.NonRetryable() || appErr.Type() != llm.ErrTypeNotConfigured || !strings.Contains(err.Error(), `"anthropic" is not configured`) {
		t.Errorf("unconfigured provider: %v, want a non-retryable %s error naming it", err, llm.ErrTypeNotConfigured)
	}
}
