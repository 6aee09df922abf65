package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAIConfig configures an OpenAI-compatible Chat Completions provider.
// The zero value talks to api.openai.com without a key.
type OpenAIConfig struct {
	// BaseURL is the API's base URL, e.g. "http://localhost:11434/v1" for
	// Ollama; default https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none (local servers).
	APIKey string
	// Model is the default model; default "gpt-4o-mini".
	Model string
	// HTTPClient makes the requests; default the library's client.
	HTTPClient *http.Client
}

// OpenAI is a [Provider] for OpenAI-compatible Chat Completions endpoints:
// OpenAI itself, Ollama, vLLM, llama.cpp's server and the like.
type OpenAI struct {
	client openai.Client
	model  string
	apiKey string
}

var _ Provider = (*OpenAI)(nil)

// NewOpenAI returns a provider for cfg. The client library's own retries are
// off: Temporal retries the activity instead, so a retry is visible in
// history and survives a crash.
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	if cfg.Model == "" {
		cfg.Model = "gpt-4o-mini"
	}
	// Explicit options come after the library's environment defaults and
	// win, so the configuration given here is the one used.
	opts := []option.RequestOption{option.WithMaxRetries(0), option.WithAPIKey(cfg.APIKey)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &OpenAI{client: openai.NewClient(opts...), model: cfg.Model, apiKey: cfg.APIKey}
}

// Name implements Provider.
func (p *OpenAI) Name() string { return "openai" }

// Model implements Provider.
func (p *OpenAI) Model() string { return p.model }

// Complete implements Provider with one Chat Completions request.
func (p *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	params, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	var httpResp *http.Response
	completion, err := p.client.Chat.Completions.New(ctx, params, option.WithResponseInto(&httpResp))
	if err != nil {
		return Response{}, p.error(err, httpResp)
	}
	return openAIResponse(completion)
}

// openAIResponse is the Response of a Chat Completion, whole or accumulated
// from a stream.
func openAIResponse(completion *openai.ChatCompletion) (Response, error) {
	if len(completion.Choices) == 0 {
		return Response{}, fmt.Errorf("openai: the answer has no choices")
	}
	choice := completion.Choices[0]
	resp := Response{
		Text:  choice.Message.Content,
		Model: completion.Model,
		Usage: Usage{InputTokens: completion.Usage.PromptTokens, CachedInputTokens: completion.Usage.PromptTokensDetails.CachedTokens,
			OutputTokens: completion.Usage.CompletionTokens},
	}
	for _, tc := range choice.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue // custom tools are never offered, so never called
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	switch {
	case len(resp.ToolCalls) > 0:
		resp.StopReason = StopToolUse
	case choice.Message.Refusal != "":
		resp.StopReason, resp.Text = StopRefusal, choice.Message.Refusal
	case choice.FinishReason == "stop":
		resp.StopReason = StopEnd
	case choice.FinishReason == "length":
		resp.StopReason = StopMaxTokens
	case choice.FinishReason == "content_filter":
		resp.StopReason = StopRefusal
	default:
		resp.StopReason = StopOther
	}
	return resp, nil
}

func (p *OpenAI) params(req Request) (openai.ChatCompletionNewParams, error) {
	model := req.Model
	if model == "" {
		model = p.model
	}
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(model)}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			if len(m.Files) == 0 {
				params.Messages = append(params.Messages, openai.UserMessage(m.Text))
				continue
			}
			params.Messages = append(params.Messages, openai.UserMessage(openAIContent(m)))
		case RoleAssistant:
			var a openai.ChatCompletionAssistantMessageParam
			if m.Text != "" {
				a.Content.OfString = openai.String(m.Text)
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments},
					},
				})
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case RoleTool:
			params.Messages = append(params.Messages, openai.ToolMessage(m.Text, m.ToolCallID))
		default:
			return params, fmt.Errorf("openai: message role %q: %w", m.Role, ErrInvalidRequest)
		}
	}
	for _, t := range req.Tools {
		schema, err := schemaMap(t.Parameters)
		if err != nil {
			return params, fmt.Errorf("openai: tool %s: %w", t.Name, err)
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema)}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if f := req.ResponseFormat; f != nil {
		schema, err := schemaMap(f.Schema)
		if err != nil {
			return params, fmt.Errorf("openai: response format %s: %w", f.Name, err)
		}
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: f.Name, Schema: schema},
			},
		}
	}
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = openai.Int(req.MaxTokens)
	}
	return params, nil
}

// openAIContent is a user message with files as content parts: an image as
// an image_url part (a data URL), a PDF as a file part (file_data, a data
// URL, with its filename), a text file as a text part.
func openAIContent(m Message) []openai.ChatCompletionContentPartUnionParam {
	var parts []openai.ChatCompletionContentPartUnionParam
	if m.Text != "" {
		parts = append(parts, openai.TextContentPart(m.Text))
	}
	for _, f := range m.Files {
		switch f.kind() {
		case fileImage:
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: f.dataURL()}))
		case filePDF:
			name := f.Name
			if name == "" {
				name = "document.pdf"
			}
			parts = append(parts, openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{
				FileData: openai.String(f.dataURL()), Filename: openai.String(name)}))
		default:
			parts = append(parts, openai.TextContentPart(f.asText()))
		}
	}
	return parts
}

// error turns a library error into an *APIError for HTTP error statuses and
// into a key-free error otherwise. httpResp, when set, is the response the
// error came with: a local server's error body that the library cannot
// decode ({"error":"..."}) is still an HTTP error status.
func (p *OpenAI) error(err error, httpResp *http.Response) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = apiErr.RawJSON() // e.g. {"error":"model not found"} from a local server
		}
		e := &APIError{Provider: p.Name(), StatusCode: apiErr.StatusCode, Message: redact(msg, p.apiKey)}
		if apiErr.Response != nil {
			e.RetryAfter = parseRetryAfter(apiErr.Response.Header.Get, time.Now())
		}
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if httpResp != nil && httpResp.StatusCode >= 400 {
		body, _ := io.ReadAll(io.LimitReader(httpResp.Body, 4096))
		msg := strings.TrimSpace(string(body))
		var plain struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &plain) == nil && plain.Error != "" {
			msg = plain.Error
		}
		return &APIError{Provider: p.Name(), StatusCode: httpResp.StatusCode, Message: redact(msg, p.apiKey),
			RetryAfter: parseRetryAfter(httpResp.Header.Get, time.Now())}
	}
	return errors.New("openai: " + redact(err.Error(), p.apiKey))
}

// schemaMap decodes a JSON schema into the map the client libraries take.
func schemaMap(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("schema is not a JSON object: %w: %w", err, ErrInvalidRequest)
	}
	return m, nil
}
