package llmagents_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/llmagents"
	"github.com/a2aflow/a2aflow/llm"
)

// testTaskID is the workflow ID, hence the task ID, of every test task.
const testTaskID = "task-1"

// fakeLLM is a Provider answering from a script by call number (from 1).
type fakeLLM struct {
	mu     sync.Mutex
	reqs   []llm.Request
	script func(n int, req llm.Request) llm.Response
}

func (f *fakeLLM) Name() string  { return "fake" }
func (f *fakeLLM) Model() string { return "fake-1" }
func (f *fakeLLM) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	n := len(f.reqs)
	f.mu.Unlock()
	resp := f.script(n, req)
	resp.Usage = llm.Usage{InputTokens: 50, OutputTokens: 5}
	return resp, nil
}

func (f *fakeLLM) requests() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]llm.Request(nil), f.reqs...)
}

func userText(text string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
}

func TestCalculator(t *testing.T) {
	tests := []struct {
		expression string
		want       string
		wantErr    string
	}{
		{"2 + 3 * 4", "14", ""},
		{"2340 * 17.5 / 100", "409.5", ""},
		{"7 / 2", "3.5", ""},
		{"2 ** 10", "1024", ""},
		{"sqrt(2) * sqrt(2) > 1.99", "true", ""},
		{"round(pi * 100) / 100", "3.14", ""},
		{"max(3, 9, 4) % 5", "4", ""},
		{"1 / 0", "", "the result is +Inf"},
		{"2 +", "", "cannot evaluate"},
		{`"text"`, "", "the result is not a number but string"},
		{`len("abc")`, "", "cannot evaluate"}, // non-arithmetic builtins are off
		{"now()", "", "cannot evaluate"},
	}
	for _, tt := range tests {
		t.Run(tt.expression, func(t *testing.T) {
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			llm.RegisterTools(env, llmagents.ActivityTools()...)
			value, err := env.ExecuteActivity(llm.ToolActivityPrefix+"calculator", llmagents.CalculatorInput{Expression: tt.expression})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var out llmagents.CalculatorOutput
			if err := value.Get(&out); err != nil {
				t.Fatal(err)
			}
			if out.Result != tt.want {
				t.Errorf("result = %s, want %s", out.Result, tt.want)
			}
		})
	}
}

func TestClock(t *testing.T) {
	tests := []struct {
		zone     string
		wantZone string
		wantErr  string
	}{
		{"", "UTC", ""},
		{"Asia/Tokyo", "Asia/Tokyo", ""},
		{"Mars/Olympus", "", `unknown time zone "Mars/Olympus"`},
	}
	for _, tt := range tests {
		t.Run(tt.zone, func(t *testing.T) {
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			llm.RegisterTools(env, llmagents.ActivityTools()...)
			value, err := env.ExecuteActivity(llm.ToolActivityPrefix+"clock", llmagents.ClockInput{TimeZone: tt.zone})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var out llmagents.ClockOutput
			if err := value.Get(&out); err != nil {
				t.Fatal(err)
			}
			if out.TimeZone != tt.wantZone || out.UTC == "" || out.Local == "" || out.Weekday == "" {
				t.Errorf("clock = %+v, want the time in %s", out, tt.wantZone)
			}
		})
	}
}
