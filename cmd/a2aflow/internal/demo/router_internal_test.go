package demo

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

func TestMention(t *testing.T) {
	tests := []struct {
		text, name, rest string
		ok               bool
	}{
		{"@beta Book a flight", "beta", "Book a flight", true},
		{"@beta   @gamma-travel Book", "beta", "@gamma-travel Book", true},
		{"@beta", "beta", "", true},
		{"@ beta", "", "", false},
		{"@", "", "", false},
		{"mail me@example.com", "", "", false},
	}
	for _, tt := range tests {
		name, rest, ok := mention(tt.text)
		if name != tt.name || rest != tt.rest || ok != tt.ok {
			t.Errorf("mention(%q) = %q, %q, %v; want %q, %q, %v", tt.text, name, rest, ok, tt.name, tt.rest, tt.ok)
		}
	}
}

func TestToolCallIn(t *testing.T) {
	msg := func(parts ...*a2a.Part) *a2a.Message { return a2a.NewMessage(a2a.MessageRoleUser, parts...) }
	tests := []struct {
		name   string
		m      *a2a.Message
		tool   string
		params string
		ok     bool
	}{
		{"tool and params", msg(a2a.NewDataPart(map[string]any{"tool": "echo", "params": map[string]any{"text": "hi"}})), "echo", `{"text":"hi"}`, true},
		{"no params", msg(a2a.NewDataPart(map[string]any{"tool": "clock"})), "clock", "", true},
		{"after a text part", msg(a2a.NewTextPart("run this"), a2a.NewDataPart(map[string]any{"tool": "clock"})), "clock", "", true},
		{"text only", msg(a2a.NewTextPart(`{"tool":"echo"}`)), "", "", false},
		{"data without tool", msg(a2a.NewDataPart(map[string]any{"params": map[string]any{}})), "", "", false},
		{"tool not a string", msg(a2a.NewDataPart(map[string]any{"tool": 3})), "", "", false},
		{"nil message", nil, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, ok := toolCallIn(tt.m)
			if ok != tt.ok || call.Tool != tt.tool || string(call.Params) != tt.params {
				t.Errorf("toolCallIn = %q, %s, %v; want %q, %s, %v", call.Tool, call.Params, ok, tt.tool, tt.params, tt.ok)
			}
		})
	}
}
