package taskservice

import (
	"errors"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/workflows"
)

func TestCheckInputModes(t *testing.T) {
	textOnly := &workflows.Agent{Name: "echo"}
	vision := &workflows.Agent{Name: "vision", InputModes: []string{"text/plain", "image/*"},
		Skills: []a2a.AgentSkill{{ID: "read", Name: "Read", InputModes: []string{"application/pdf"}}}}
	file := func(mt string) *a2a.Part { return &a2a.Part{Content: a2a.Raw("x"), MediaType: mt} }
	for _, tc := range []struct {
		name  string
		agent *workflows.Agent
		parts []*a2a.Part
		want  string // "" accepted, else in the error
	}{
		{"text and data by default", textOnly, []*a2a.Part{a2a.NewTextPart("hi"), a2a.NewDataPart(map[string]any{"a": 1})}, ""},
		{"an image to a text agent", textOnly, []*a2a.Part{a2a.NewTextPart("hi"), file("image/png")},
			"message.parts[1] is image/png: agent echo does not take it; it takes text/plain, application/json"},
		{"a file without a type", textOnly, []*a2a.Part{file("")}, "application/octet-stream"},
		{"a URI file", textOnly, []*a2a.Part{{Content: a2a.URL("https://example.com/a.pdf"), MediaType: "application/pdf"}}, "application/pdf"},
		{"wildcard", vision, []*a2a.Part{file("image/jpeg; q=1")}, ""},
		{"a skill's mode", vision, []*a2a.Part{file("application/pdf")}, ""},
		{"data to an agent without json", vision, []*a2a.Part{a2a.NewDataPart(map[string]any{})}, "it takes text/plain, image/*, application/pdf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckInputModes(tc.agent, a2a.NewMessage(a2a.MessageRoleUser, tc.parts...))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
			case err == nil:
				t.Fatalf("accepted, want a refusal saying %q", tc.want)
			case !errors.Is(err, a2a.ErrUnsupportedContentType):
				t.Errorf("error %v is not UnsupportedContentType", err)
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}
