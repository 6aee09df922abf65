package llm

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/workflows"
)

// pngBytes is a 1x1 PNG; pdfBytes the start of a PDF. The providers get
// them base64 encoded, exactly.
var (
	pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	pdfBytes = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
	b64      = base64.StdEncoding.EncodeToString
)

var filesMessage = Message{Role: RoleUser, Text: "What is in these?", Files: []File{
	{Name: "dot.png", MediaType: "image/png", Data: pngBytes},
	{Name: "report.pdf", MediaType: "application/pdf", Data: pdfBytes},
	{Name: "notes.txt", MediaType: "text/plain; charset=utf-8", Data: []byte("buy milk")},
	{Name: "blob.bin", MediaType: "application/octet-stream", Data: []byte{0, 1, 2}},
}}

func TestOpenAIFiles(t *testing.T) {
	srv, reqs := fakeServer(t, 200, `{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-test",
		"choices": [{"index": 0, "finish_reason": "stop", "logprobs": null,
			"message": {"role": "assistant", "content": "A dot and a report.", "refusal": null}}],
		"usage": {"prompt_tokens": 900, "completion_tokens": 6, "total_tokens": 906}}`, nil)
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: testKey, Model: "gpt-test"})
	resp, err := p.Complete(context.Background(), Request{Messages: []Message{filesMessage}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "A dot and a report." {
		t.Errorf("text = %q", resp.Text)
	}
	if len(*reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(*reqs))
	}
	want := jsonOf(t, `{
		"model": "gpt-test",
		"messages": [{"role": "user", "content": [
			{"type": "text", "text": "What is in these?"},
			{"type": "image_url", "image_url": {"url": "data:image/png;base64,`+b64(pngBytes)+`"}},
			{"type": "file", "file": {"file_data": "data:application/pdf;base64,`+b64(pdfBytes)+`", "filename": "report.pdf"}},
			{"type": "text", "text": "File notes.txt (text/plain):\nbuy milk"},
			{"type": "text", "text": "[file blob.bin, application/octet-stream, 3 bytes, in a format the model does not read]"}
		]}]
	}`)
	if diff := cmp.Diff(want, any((*reqs)[0].body)); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestAnthropicFiles(t *testing.T) {
	srv, reqs := fakeServer(t, 200, `{
		"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
		"content": [{"type": "text", "text": "A dot and a report."}],
		"stop_reason": "end_turn", "stop_sequence": null,
		"usage": {"input_tokens": 900, "output_tokens": 6}}`, nil)
	p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: testKey, Model: "claude-test"})
	resp, err := p.Complete(context.Background(), Request{Messages: []Message{filesMessage}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "A dot and a report." {
		t.Errorf("text = %q", resp.Text)
	}
	if len(*reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(*reqs))
	}
	want := jsonOf(t, `{
		"model": "claude-test", "max_tokens": 4096,
		"messages": [{"role": "user", "content": [
			{"type": "text", "text": "What is in these?"},
			{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "`+b64(pngBytes)+`"}},
			{"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "`+b64(pdfBytes)+`"}},
			{"type": "text", "text": "File notes.txt (text/plain):\nbuy milk"},
			{"type": "text", "text": "[file blob.bin, application/octet-stream, 3 bytes, in a format the model does not read]"}
		]}]
	}`)
	if diff := cmp.Diff(want, any((*reqs)[0].body)); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestThreadMessagesFiles(t *testing.T) {
	user := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("look"), &a2a.Part{Content: a2a.Raw(pngBytes), Filename: "dot.png", MediaType: "image/png"},
		&a2a.Part{Content: a2a.URL("https://example.com/r.pdf"), Filename: "r.pdf", MediaType: "application/pdf"}, a2a.NewDataPart(map[string]any{"n": 1}))
	agent := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("seen"), &a2a.Part{Content: a2a.Raw([]byte("xy")), Filename: "out.bin", MediaType: "application/octet-stream"})
	got := threadMessages(workflows.NewThread(user, agent))
	want := []Message{
		{Role: RoleUser, Text: "look\n{\"n\":1}", Files: []File{
			{Name: "dot.png", MediaType: "image/png", Data: pngBytes},
			{Name: "r.pdf", MediaType: "application/pdf", URI: "https://example.com/r.pdf"},
		}},
		{Role: RoleAssistant, Text: "seen\n[file out.bin, application/octet-stream, 2 bytes]"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}
