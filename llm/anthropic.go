package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// AnthropicConfig configures an Anthropic Messages provider. The zero value
// talks to api.anthropic.com without a key (every call then fails with 401).
type AnthropicConfig struct {
	// BaseURL is the API's base URL; default https://api.anthropic.com.
	BaseURL string
	// APIKey is sent as x-api-key.
	APIKey string
	// Model is the default model; default "claude-sonnet-4-5".
	Model string
	// MaxTokens is the answer limit when a Request sets none (Anthropic
	// requires one); default 4096.
	MaxTokens int64
	// HTTPClient makes the requests; default the library's client.
	HTTPClient *http.Client
}

// Anthropic is a [Provider] for the Anthropic Messages API.
type Anthropic struct {
	client    anthropic.Client
	model     string
	maxTokens int64
	apiKey    string
}

var _ Provider = (*Anthropic)(nil)

// NewAnthropic returns a provider for cfg. The client library's own retries
// and its environment and profile lookups are off: Temporal retries the
// activity, and only cfg decides where requests go and with which key.
func NewAnthropic(cfg AnthropicConfig) *Anthropic {
	if cfg.Model == "" {
		cfg.Model = "claude-sonnet-4-5"
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 4096
	}
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithMaxRetries(0), option.WithAPIKey(cfg.APIKey)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &Anthropic{client: anthropic.NewClient(opts...), model: cfg.Model, maxTokens: cfg.MaxTokens, apiKey: cfg.APIKey}
}

// Name implements Provider.
func (p *Anthropic) Name() string { return "anthropic" }

// Model implements Provider.
func (p *Anthropic) Model() string { return p.model }

// Complete implements Provider with one Messages request.
func (p *Anthropic) Complete(ctx context.Context, req Request) (Response, error) {
	params, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	msg, err := p.client.Messages.New(ctx, params)
	if err != nil {
		return Response{}, p.error(err)
	}
	return anthropicResponse(msg), nil
}

// anthropicResponse is the Response of a Message, whole or accumulated from
// a stream.
func anthropicResponse(msg *anthropic.Message) Response {
	resp := Response{
		Model: string(msg.Model),
		// Anthropic counts the prompt's cached (read and written) tokens
		// apart; Usage.InputTokens counts them all, as OpenAI does.
		Usage: Usage{InputTokens: msg.Usage.InputTokens + msg.Usage.CacheReadInputTokens + msg.Usage.CacheCreationInputTokens,
			CachedInputTokens: msg.Usage.CacheReadInputTokens, OutputTokens: msg.Usage.OutputTokens},
	}
	var texts []string
	for _, block := range msg.Content {
		switch block.Type {
		case "text":
			texts = append(texts, block.Text)
		case "tool_use":
			args := string(block.Input)
			if args == "" || args == "null" {
				args = "{}"
			}
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: block.ID, Name: block.Name, Arguments: args})
		}
	}
	resp.Text = strings.Join(texts, "")
	switch msg.StopReason {
	case anthropic.StopReasonEndTurn, anthropic.StopReasonStopSequence:
		resp.StopReason = StopEnd
	case anthropic.StopReasonToolUse:
		resp.StopReason = StopToolUse
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		resp.StopReason = StopMaxTokens
	case anthropic.StopReasonRefusal:
		resp.StopReason = StopRefusal
	default:
		resp.StopReason = StopOther
	}
	if len(resp.ToolCalls) > 0 {
		resp.StopReason = StopToolUse
	}
	return resp
}

func (p *Anthropic) params(req Request) (anthropic.MessageNewParams, error) {
	params := anthropic.MessageNewParams{Model: anthropic.Model(p.model), MaxTokens: p.maxTokens}
	if req.Model != "" {
		params.Model = anthropic.Model(req.Model)
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = req.MaxTokens
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	// Anthropic wants user and assistant turns to alternate, with all the
	// results of one assistant turn's tool calls in the next user turn, so
	// consecutive messages of the same side are merged.
	for _, m := range req.Messages {
		var role anthropic.MessageParamRole
		var blocks []anthropic.ContentBlockParamUnion
		switch m.Role {
		case RoleUser:
			role = anthropic.MessageParamRoleUser
			blocks = anthropicContent(m)
		case RoleTool:
			role = anthropic.MessageParamRoleUser
			blocks = append(blocks, anthropic.NewToolResultBlock(m.ToolCallID, m.Text, m.IsError))
		case RoleAssistant:
			role = anthropic.MessageParamRoleAssistant
			if m.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Text))
			}
			for _, c := range m.ToolCalls {
				var input any = json.RawMessage(c.Arguments)
				if !json.Valid([]byte(c.Arguments)) {
					input = map[string]any{} // the model's broken JSON was answered with an error already
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, input, c.Name))
			}
		default:
			return params, fmt.Errorf("anthropic: message role %q: %w", m.Role, ErrInvalidRequest)
		}
		if n := len(params.Messages); n > 0 && params.Messages[n-1].Role == role {
			params.Messages[n-1].Content = append(params.Messages[n-1].Content, blocks...)
			continue
		}
		params.Messages = append(params.Messages, anthropic.MessageParam{Role: role, Content: blocks})
	}
	for _, t := range req.Tools {
		schema, err := schemaMap(t.Parameters)
		if err != nil {
			return params, fmt.Errorf("anthropic: tool %s: %w", t.Name, err)
		}
		input := anthropic.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: map[string]any{}}
		for k, v := range schema {
			switch k {
			case "type", "properties":
			case "required":
				input.Required = stringList(v)
			default:
				input.ExtraFields[k] = v
			}
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: input}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	if f := req.ResponseFormat; f != nil {
		schema, err := schemaMap(f.Schema)
		if err != nil {
			return params, fmt.Errorf("anthropic: response format %s: %w", f.Name, err)
		}
		params.OutputConfig = anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: schema}}
	}
	return params, nil
}

// anthropicContent is a user message as content blocks: its text, then an
// image as an image block and a PDF as a document block (both base64), a
// text file as a text block.
func anthropicContent(m Message) []anthropic.ContentBlockParamUnion {
	var blocks []anthropic.ContentBlockParamUnion
	if m.Text != "" || len(m.Files) == 0 {
		blocks = append(blocks, anthropic.NewTextBlock(m.Text))
	}
	for _, f := range m.Files {
		switch f.kind() {
		case fileImage:
			blocks = append(blocks, anthropic.NewImageBlockBase64(f.mediaType(), base64.StdEncoding.EncodeToString(f.Data)))
		case filePDF:
			blocks = append(blocks, anthropic.NewDocumentBlock(anthropic.Base64PDFSourceParam{Data: base64.StdEncoding.EncodeToString(f.Data)}))
		default:
			blocks = append(blocks, anthropic.NewTextBlock(f.asText()))
		}
	}
	return blocks
}

func stringList(v any) []string {
	items, _ := v.([]any)
	var out []string
	for _, it := range items {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// error turns a library error into an *APIError for HTTP error statuses and
// into a key-free error otherwise. The library's own Error() is not used: it
// includes the request URL and the whole response body.
func (p *Anthropic) error(err error) error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		var body struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		msg := apiErr.RawJSON()
		if json.Unmarshal([]byte(msg), &body) == nil && body.Error.Message != "" {
			msg = body.Error.Message
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
	return errors.New("anthropic: " + redact(err.Error(), p.apiKey))
}
