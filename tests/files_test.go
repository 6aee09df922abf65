package tests

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestFilesAsInput: an image sent inline and a PDF given by URI reach the
// assistant's model (a fake OpenAI endpoint) as an image_url part and a file
// part, in OpenAI's wire format, the PDF fetched by the worker through the
// guarded outbound client (loopback allowed here, a private address not);
// an agent that takes no images refuses one with UnsupportedContentType
// (-32005) through the a2a-go client, naming what it takes.
func TestFilesAsInput(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR e2e")
	pdf := []byte("%PDF-1.4\n% e2e\n%%EOF\n")
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(pdf)
	}))
	t.Cleanup(files.Close)

	var mu sync.Mutex
	var userContents []json.RawMessage // the content of each request's last user message
	llmFake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(raw, &req); err != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		mu.Lock()
		userContents = append(userContents, req.Messages[len(req.Messages)-1].Content)
		mu.Unlock()
		fakes.WriteChat(w, false, "chatcmpl-files", req.Model, fakes.TextMessage("A dot and a PDF."), 100, 5)
	}))
	t.Cleanup(llmFake.Close)
	fakes.UseOpenAI(t, llmFake.URL, fakes.OpenAIKey, "fake-model")
	s := harness.StartServe(t, t.TempDir(), "--outbound-allow-hosts", "loopback")
	ctx := harness.Context(t)

	t.Run("image and PDF reach the model", func(t *testing.T) {
		c, card := harness.NewClient(t, ctx, s.APIURL+"/agents/assistant")
		if !strings.Contains(strings.Join(card.DefaultInputModes, ","), "application/pdf") {
			t.Errorf("assistant card input modes %v do not name application/pdf", card.DefaultInputModes)
		}
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("What are these?"),
			&a2a.Part{Content: a2a.Raw(png), Filename: "dot.png", MediaType: "image/png"},
			&a2a.Part{Content: a2a.URL(files.URL + "/report.pdf"), Filename: "report.pdf", MediaType: "application/pdf"})
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		harness.WantState(t, task, a2a.TaskStateCompleted, "")
		if got := harness.StatusText(task); got != "A dot and a PDF." {
			t.Errorf("answer %q, want the model's", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(userContents) != 1 {
			t.Fatalf("%d model calls, want 1", len(userContents))
		}
		var got []map[string]any
		if err := json.Unmarshal(userContents[0], &got); err != nil {
			t.Fatalf("user content %s is not a list of parts: %v", userContents[0], err)
		}
		want := []map[string]any{
			{"type": "text", "text": "What are these?"},
			{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)}},
			{"type": "file", "file": map[string]any{"file_data": "data:application/pdf;base64," + base64.StdEncoding.EncodeToString(pdf), "filename": "report.pdf"}},
		}
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(want)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("user content sent to the model:\n got %s\nwant %s", gotJSON, wantJSON)
		}
	})

	t.Run("a URI the policy forbids is not fetched", func(t *testing.T) {
		c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/assistant")
		mu.Lock()
		before := len(userContents)
		mu.Unlock()
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Read this."),
			&a2a.Part{Content: a2a.URL("http://10.255.255.1/secret.pdf"), Filename: "secret.pdf", MediaType: "application/pdf"})
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		harness.WantState(t, task, a2a.TaskStateFailed, "")
		if got := harness.StatusText(task); !strings.Contains(got, "forbidden") {
			t.Errorf("failure %q does not say the address is forbidden", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(userContents) != before {
			t.Errorf("the model was called for a file it could not see")
		}
	})

	t.Run("input modes enforced", func(t *testing.T) {
		c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/echo")
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"),
			&a2a.Part{Content: a2a.Raw(png), Filename: "dot.png", MediaType: "image/png"})
		_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
		if !errors.Is(err, a2a.ErrUnsupportedContentType) {
			t.Fatalf("an image to echo: error %v, want %v", err, a2a.ErrUnsupportedContentType)
		}
		if want := "it takes text/plain, application/json"; !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
		// The same request over HTTP+JSON: 400, A2A 1.0.1's status of
		// ContentTypeNotSupported (§5.4).
		body := `{"message":{"messageId":"img-rest","role":"ROLE_USER","parts":[{"raw":"` + base64.StdEncoding.EncodeToString(png) + `","mediaType":"image/png"}]}}`
		req, err := http.NewRequest(http.MethodPost, s.APIURL+"/agents/echo/message:send", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), "image/png") || !strings.Contains(string(raw), "CONTENT_TYPE_NOT_SUPPORTED") {
			t.Errorf("HTTP+JSON: %d %s, want 400 CONTENT_TYPE_NOT_SUPPORTED naming image/png", resp.StatusCode, raw)
		}
	})
}
