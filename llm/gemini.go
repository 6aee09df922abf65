package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"
)

// GeminiConfig configures a Gemini API provider (Google AI Studio's
// generateContent). The zero value talks to generativelanguage.googleapis.com
// without a key (every call then fails with 400 or 403).
type GeminiConfig struct {
	// BaseURL is the API's base URL; default
	// https://generativelanguage.googleapis.com/ (a proxy or a test server).
	BaseURL string
	// APIKey is sent as x-goog-api-key.
	APIKey string
	// Model is the default model; default "gemini-2.5-flash".
	Model string
	// MaxTokens is the answer limit when a Request sets none; default none
	// (the model's own).
	MaxTokens int64
	// HTTPClient makes the requests; default http.DefaultClient's transport.
	HTTPClient *http.Client
}

// Gemini is a [Provider] for Google's Gemini API, through Google's official
// Go SDK (google.golang.org/genai).
type Gemini struct {
	client    *genai.Client
	err       error // a configuration the SDK refused: every call fails with it
	model     string
	maxTokens int64
	apiKey    string
}

var (
	_ Provider = (*Gemini)(nil)
	_ Streamer = (*Gemini)(nil)
)

// NewGemini returns a provider for cfg. The SDK's retries are off (it makes
// none unless asked) and so are its environment lookups (GOOGLE_API_KEY,
// GOOGLE_GEMINI_BASE_URL, Vertex AI): only cfg decides where requests go
// and with which key. Temporal retries the activity.
func NewGemini(cfg GeminiConfig) *Gemini {
	if cfg.Model == "" {
		cfg.Model = "gemini-2.5-flash"
	}
	base := http.DefaultTransport
	if cfg.HTTPClient != nil && cfg.HTTPClient.Transport != nil {
		base = cfg.HTTPClient.Transport
	}
	hc := &http.Client{Transport: retryAfterTransport{base}}
	if cfg.HTTPClient != nil {
		hc.Timeout, hc.Jar, hc.CheckRedirect = cfg.HTTPClient.Timeout, cfg.HTTPClient.Jar, cfg.HTTPClient.CheckRedirect
	}
	baseURL := cfg.BaseURL
	if baseURL == "" {
		baseURL = "https://generativelanguage.googleapis.com/"
	}
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: cfg.APIKey, Backend: genai.BackendGeminiAPI, HTTPClient: hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: baseURL},
	})
	return &Gemini{client: client, err: err, model: cfg.Model, maxTokens: cfg.MaxTokens, apiKey: cfg.APIKey}
}

// Name implements Provider.
func (p *Gemini) Name() string { return "gemini" }

// Model implements Provider.
func (p *Gemini) Model() string { return p.model }

// Complete implements Provider with one generateContent request.
func (p *Gemini) Complete(ctx context.Context, req Request) (Response, error) {
	model, contents, config, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	ctx, seen := withErrorHeaders(ctx)
	resp, err := p.client.Models.GenerateContent(ctx, model, contents, config)
	if err != nil {
		return Response{}, p.error(err, seen)
	}
	return geminiResponse(resp, model)
}

// CompleteStream implements Streamer with one streamGenerateContent request
// (server-sent events, alt=sse): each event is a GenerateContentResponse
// whose parts are the answer's next pieces; the last carries the finish
// reason and the usage.
func (p *Gemini) CompleteStream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	model, contents, config, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	ctx, seen := withErrorHeaders(ctx)
	var acc genai.GenerateContentResponse
	var parts []*genai.Part
	var finish genai.FinishReason
	for chunk, err := range p.client.Models.GenerateContentStream(ctx, model, contents, config) {
		if err != nil {
			return Response{}, p.error(err, seen)
		}
		if chunk.ModelVersion != "" {
			acc.ModelVersion = chunk.ModelVersion
		}
		if chunk.UsageMetadata != nil {
			acc.UsageMetadata = chunk.UsageMetadata
		}
		if len(chunk.Candidates) == 0 || chunk.Candidates[0] == nil {
			continue
		}
		c := chunk.Candidates[0]
		if c.Content != nil {
			for _, part := range c.Content.Parts {
				if part == nil {
					continue
				}
				if part.Text != "" && !part.Thought {
					onText(part.Text)
				}
				parts = append(parts, part)
			}
		}
		if c.FinishReason != "" {
			finish = c.FinishReason
		}
	}
	if finish == "" {
		return Response{}, fmt.Errorf("gemini: %w", errStreamCut)
	}
	acc.Candidates = []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}, FinishReason: finish}}
	return geminiResponse(&acc, model)
}

// geminiResponse is the Response of a generateContent answer, whole or
// accumulated from a stream. Gemini may leave a function call's ID empty:
// the call is then named by its place in the answer.
func geminiResponse(r *genai.GenerateContentResponse, model string) (Response, error) {
	resp := Response{Model: r.ModelVersion}
	if resp.Model == "" {
		resp.Model = model
	}
	if u := r.UsageMetadata; u != nil {
		// Thinking tokens are billed as output tokens.
		resp.Usage = Usage{InputTokens: int64(u.PromptTokenCount) + int64(u.ToolUsePromptTokenCount), CachedInputTokens: int64(u.CachedContentTokenCount),
			OutputTokens: int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount)}
	}
	if len(r.Candidates) == 0 || r.Candidates[0] == nil {
		if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
			resp.StopReason, resp.Text = StopRefusal, "the prompt was blocked: "+string(r.PromptFeedback.BlockReason)
			return resp, nil
		}
		return Response{}, errors.New("gemini: the answer has no candidates")
	}
	c := r.Candidates[0]
	var texts []string
	if c.Content != nil {
		for _, part := range c.Content.Parts {
			switch {
			case part == nil, part.Thought:
			case part.FunctionCall != nil:
				fc := part.FunctionCall
				args := "{}"
				if len(fc.Args) > 0 {
					raw, err := json.Marshal(fc.Args)
					if err != nil {
						return Response{}, fmt.Errorf("gemini: function call %s: %w", fc.Name, err)
					}
					args = string(raw)
				}
				id := fc.ID
				if id == "" {
					id = fmt.Sprintf("gemini-call-%d", len(resp.ToolCalls)+1)
				}
				resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: id, Name: fc.Name, Arguments: args})
			case part.Text != "":
				texts = append(texts, part.Text)
			}
		}
	}
	resp.Text = strings.Join(texts, "")
	switch c.FinishReason {
	case genai.FinishReasonStop:
		resp.StopReason = StopEnd
	case genai.FinishReasonMaxTokens:
		resp.StopReason = StopMaxTokens
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist, genai.FinishReasonProhibitedContent,
		genai.FinishReasonSPII, genai.FinishReasonImageSafety:
		resp.StopReason = StopRefusal
	default:
		resp.StopReason = StopOther
	}
	if len(resp.ToolCalls) > 0 {
		resp.StopReason = StopToolUse
	}
	return resp, nil
}

func (p *Gemini) params(req Request) (string, []*genai.Content, *genai.GenerateContentConfig, error) {
	if p.err != nil {
		return "", nil, nil, fmt.Errorf("gemini: %v: %w", p.err, ErrInvalidRequest)
	}
	model := req.Model
	if model == "" {
		model = p.model
	}
	contents, err := geminiContents(req.Messages)
	if err != nil {
		return "", nil, nil, err
	}
	config, err := p.config(req)
	if err != nil {
		return "", nil, nil, err
	}
	return model, contents, config, nil
}

// config is the request's generation config: the system prompt, the token
// limit, the tools and the structured output's schema.
func (p *Gemini) config(req Request) (*genai.GenerateContentConfig, error) {
	config := &genai.GenerateContentConfig{}
	if req.System != "" {
		config.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if n := req.MaxTokens; n > 0 || p.maxTokens > 0 {
		if n <= 0 {
			n = p.maxTokens
		}
		config.MaxOutputTokens = int32(min(n, 1<<31-1))
	}
	if len(req.Tools) > 0 {
		tool := &genai.Tool{}
		for _, t := range req.Tools {
			schema, err := schemaMap(t.Parameters)
			if err != nil {
				return nil, fmt.Errorf("gemini: tool %s: %w", t.Name, err)
			}
			tool.FunctionDeclarations = append(tool.FunctionDeclarations,
				&genai.FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJsonSchema: schema})
		}
		config.Tools = []*genai.Tool{tool}
	}
	if f := req.ResponseFormat; f != nil {
		schema, err := schemaMap(f.Schema)
		if err != nil {
			return nil, fmt.Errorf("gemini: response format %s: %w", f.Name, err)
		}
		config.ResponseMIMEType, config.ResponseJsonSchema = "application/json", schema
	}
	return config, nil
}

// geminiContents turns the conversation into Gemini's contents: turns of
// one role merged, as Gemini wants them alternating, and each tool result
// named by its function (Gemini pairs a response with its call by name,
// and ID when the call had one).
func geminiContents(messages []Message) ([]*genai.Content, error) {
	names := map[string]string{}
	var contents []*genai.Content
	add := func(role string, parts ...*genai.Part) {
		if n := len(contents); n > 0 && contents[n-1].Role == role {
			contents[n-1].Parts = append(contents[n-1].Parts, parts...)
			return
		}
		contents = append(contents, &genai.Content{Role: role, Parts: parts})
	}
	for _, m := range messages {
		switch m.Role {
		case RoleUser:
			add(genai.RoleUser, geminiUserParts(m)...)
		case RoleAssistant:
			if parts := geminiModelParts(m, names); len(parts) > 0 {
				add(genai.RoleModel, parts...)
			}
		case RoleTool:
			add(genai.RoleUser, geminiToolResult(m, names[m.ToolCallID]))
		default:
			return nil, fmt.Errorf("gemini: message role %q: %w", m.Role, ErrInvalidRequest)
		}
	}
	return contents, nil
}

// geminiUserParts is a user message: its text and its files (images and
// PDFs inline, other files as text).
func geminiUserParts(m Message) []*genai.Part {
	var parts []*genai.Part
	if m.Text != "" || len(m.Files) == 0 {
		parts = append(parts, &genai.Part{Text: m.Text})
	}
	for _, f := range m.Files {
		switch f.kind() {
		case fileImage, filePDF:
			parts = append(parts, &genai.Part{InlineData: &genai.Blob{MIMEType: f.mediaType(), Data: f.Data}})
		default:
			parts = append(parts, &genai.Part{Text: f.asText()})
		}
	}
	return parts
}

// geminiModelParts is an assistant message: its text and its function
// calls, whose names it notes in names by call ID for their results.
func geminiModelParts(m Message, names map[string]string) []*genai.Part {
	var parts []*genai.Part
	if m.Text != "" {
		parts = append(parts, &genai.Part{Text: m.Text})
	}
	for _, c := range m.ToolCalls {
		var args map[string]any
		if json.Unmarshal([]byte(c.Arguments), &args) != nil {
			args = map[string]any{} // the model's broken JSON was answered with an error already
		}
		names[c.ID] = c.Name
		parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: geminiCallID(c.ID), Name: c.Name, Args: args}})
	}
	return parts
}

// geminiToolResult is a tool's result (or error) for the function name.
func geminiToolResult(m Message, name string) *genai.Part {
	key := "output"
	if m.IsError {
		key = "error"
	}
	var result any = m.Text
	var structured map[string]any
	if json.Unmarshal([]byte(m.Text), &structured) == nil {
		result = structured
	}
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: geminiCallID(m.ToolCallID), Name: name, Response: map[string]any{key: result}}}
}

// geminiCallID is the ID Gemini gave a call: none for the IDs a2aflow
// made up for calls Gemini named by position.
func geminiCallID(id string) string {
	if strings.HasPrefix(id, "gemini-call-") {
		return ""
	}
	return id
}

// error turns an SDK error into an *APIError for HTTP error statuses (with
// the Retry-After its answer carried) and into a key-free error otherwise.
func (p *Gemini) error(err error, seen *errorHeaders) error {
	var apiErr genai.APIError
	var apiErrPtr *genai.APIError
	switch {
	case errors.As(err, &apiErr):
	case errors.As(err, &apiErrPtr) && apiErrPtr != nil:
		apiErr = *apiErrPtr
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	default:
		return errors.New("gemini: " + redact(err.Error(), p.apiKey))
	}
	e := &APIError{Provider: p.Name(), StatusCode: apiErr.Code, Message: redact(apiErr.Message, p.apiKey)}
	if h := seen.get(); h != nil {
		e.RetryAfter = parseRetryAfter(h.Get, time.Now())
	}
	return e
}

// errorHeaders keeps the headers of a call's error answer: the SDK's
// APIError has its status and message, not its Retry-After.
type errorHeaders struct {
	mu sync.Mutex
	h  http.Header
}

func (e *errorHeaders) get() http.Header {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.h
}

type errorHeadersKey struct{}

func withErrorHeaders(ctx context.Context) (context.Context, *errorHeaders) {
	e := &errorHeaders{}
	return context.WithValue(ctx, errorHeadersKey{}, e), e
}

// retryAfterTransport records an error answer's headers where the call's
// context asks for them (withErrorHeaders).
type retryAfterTransport struct{ base http.RoundTripper }

func (t retryAfterTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err == nil && resp.StatusCode >= 400 {
		if e, ok := r.Context().Value(errorHeadersKey{}).(*errorHeaders); ok {
			e.mu.Lock()
			e.h = resp.Header.Clone()
			e.mu.Unlock()
		}
	}
	return resp, err
}
