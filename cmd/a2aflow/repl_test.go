package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
)

// fakeSender answers like a travel agent: the first message asks, the answer completes.
type fakeSender struct{ sent []string }

func (f *fakeSender) Card(_ context.Context, url string) (*a2a.AgentCard, error) {
	if strings.Contains(url, "bad") {
		return nil, errors.New("agent card at " + url + ": not found")
	}
	return &a2a.AgentCard{Name: "agent-" + url[len(url)-1:]}, nil
}

func (f *fakeSender) Send(_ context.Context, url string, msg *a2a.Message) (a2a.SendMessageResult, error) {
	f.sent = append(f.sent, url+"|"+string(msg.TaskID)+"|"+msg.ContextID+"|"+partsText(msg.Parts))
	t := &a2a.Task{ID: "t1", ContextID: "c1"}
	if msg.TaskID == "" {
		t.Status = a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Where to?"))}
		return t, nil
	}
	t.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted}
	t.Artifacts = []*a2a.Artifact{{Name: "booking", Parts: a2a.ContentParts{a2a.NewTextPart("ok")}}}
	return t, nil
}

func TestREPLHandle(t *testing.T) {
	servers := func() ([]replServer, error) { return []replServer{{name: "r", url: "http://r"}}, nil }
	tests := []struct {
		name       string
		lines      []string
		wantSent   []string
		wantPrompt string
		wantOut    []string
		wantErr    string
	}{
		{"ask and answer", []string{"Book", "Lisbon", "again"},
			[]string{"http://l||" + "|Book", "http://l|t1|c1|Lisbon", "http://l||c1|again"},
			"agent-l [input-required: Where to?]> ", []string{"Agent asks: Where to?", "Artifact booking: ok"}, ""},
		{"connect by index and disconnect", []string{":connect 1", "hi", ":disconnect"},
			[]string{"http://r|||hi"}, "agent-l> ", []string{"Connected to agent-r", "Back to the local agent"}, ""},
		{"remote keeps local default", []string{":connect http://r", ":remote hi"},
			[]string{"http://r|||hi"}, "agent-r [input-required: Where to?]> ", nil, ""},
		{"remote without connect", []string{":remote hi"}, nil, "agent-l> ", nil, "no remote agent connected"},
		{"servers", []string{":servers"}, nil, "agent-l> ", []string{"* 0 local http://l", "  1 r http://r"}, ""},
		{"bad index", []string{":connect 7"}, nil, "agent-l> ", nil, "no such server"},
		{"bad card", []string{":connect http://bad"}, nil, "agent-l> ", nil, "not found"},
		{"listen unsupported", []string{":listen 9000"}, nil, "agent-l> ", nil, "not supported in this build"},
		{"tool unsupported", []string{":tool x {}"}, nil, "agent-l> ", nil, "not supported in this build"},
		{"unknown", []string{":nope"}, nil, "agent-l> ", nil, "unknown command"},
		{"quit", []string{":quit"}, nil, "agent-l> ", nil, "quit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeSender{}
			var out bytes.Buffer
			s := newREPLSession(f, "http://l", servers, &out)
			s.task("http://l").name = "agent-l"
			var err error
			for _, l := range tt.lines {
				if err = s.handle(context.Background(), l); err != nil {
					break
				}
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantSent, f.sent); diff != "" {
				t.Errorf("sent (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantPrompt, s.prompt()); diff != "" {
				t.Errorf("prompt (-want +got):\n%s", diff)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestREPLRunPipe(t *testing.T) {
	var out, errOut bytes.Buffer
	s := newREPLSession(&fakeSender{}, "http://l", nil, &out)
	if err := s.run(context.Background(), strings.NewReader("Book\n:bogus\nLisbon\n"), &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "[input-required: Where to?]> ") || !strings.Contains(out.String(), "completed") {
		t.Errorf("output:\n%s", out.String())
	}
	if !strings.Contains(errOut.String(), "unknown command :bogus") {
		t.Errorf("stderr: %s", errOut.String())
	}
}
