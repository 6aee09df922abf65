package client

import "testing"

func TestPlainCommand(t *testing.T) {
	for _, tc := range []struct {
		line, want string
		ok         bool
	}{
		{"connect http://localhost:4201", ":connect http://localhost:4201", true},
		{"Connect 2", ":connect 2", true},
		{"connect localhost:8080", ":connect localhost:8080", true},
		{"list servers", ":servers", true},
		{"List Servers", ":servers", true},
		{"disconnect", ":disconnect", true},
		{"quit", ":quit", true},
		{"connect me with sales", "", false},
		{"connect", "", false},
		{"list servers please", "", false},
		{"What is the capital of France?", "", false},
	} {
		got, ok := plainCommand(tc.line)
		if got != tc.want || ok != tc.ok {
			t.Errorf("plainCommand(%q) = %q, %v; want %q, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}
