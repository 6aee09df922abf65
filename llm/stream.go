package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Streamer is a [Provider] that streams its answers. CompleteStream makes
// the same single call as Complete (same errors, no client-side retries)
// in the provider's streaming wire format, and calls onText with each piece
// of the answer's text as it arrives, in order, on the calling goroutine
// (never with tool call arguments, which are assembled from their deltas
// into the Response). The Response is the same as Complete's.
//
// A server that ignores the request to stream and answers with one JSON
// document is read like Complete's answer: onText then gets the whole text
// at once.
type Streamer interface {
	Provider
	CompleteStream(ctx context.Context, req Request, onText func(text string)) (Response, error)
}

var (
	_ Streamer = (*OpenAI)(nil)
	_ Streamer = (*Anthropic)(nil)
)

// errStreamCut is a stream that ended before the provider said the answer
// was complete (a connection closed mid-answer): worth another attempt.
var errStreamCut = errors.New("the answer's stream ended before the answer did")

// maxWholeAnswer bounds a JSON answer given instead of a stream.
const maxWholeAnswer = 64 << 20

// wholeJSON is a client middleware that takes aside the body of a
// successful answer that is one JSON document instead of a stream, leaving
// the stream empty; *whole is then set.
func wholeJSON(whole *[]byte) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(r *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(r)
		if err != nil || resp.StatusCode >= 300 {
			return resp, err
		}
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
			return resp, nil
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxWholeAnswer))
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		*whole = body
		resp.Body = io.NopCloser(bytes.NewReader(nil))
		return resp, nil
	}
}

// CompleteStream implements Streamer with one streamed Chat Completions
// request (stream: true, stream_options.include_usage: true). The chunks
// are assembled by the client library's ChatCompletionAccumulator, tool
// calls included.
func (p *OpenAI) CompleteStream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	params, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	var httpResp *http.Response
	var whole []byte
	stream := p.client.Chat.Completions.NewStreaming(ctx, params,
		option.WithResponseInto(&httpResp), option.WithMiddleware(wholeJSON(&whole)))
	defer func() { _ = stream.Close() }()
	var acc openai.ChatCompletionAccumulator
	finished := false
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			return Response{}, errors.New("openai: the answer's stream does not add up (chunks of different answers)")
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue
			}
			if c.Delta.Content != "" {
				onText(c.Delta.Content)
			}
			if c.FinishReason != "" {
				finished = true
			}
		}
	}
	if err := stream.Err(); err != nil {
		return Response{}, p.error(err, httpResp)
	}
	if whole != nil {
		var completion openai.ChatCompletion
		if err := json.Unmarshal(whole, &completion); err != nil {
			return Response{}, fmt.Errorf("openai: the answer is not a chat completion: %w", err)
		}
		resp, err := openAIResponse(&completion)
		if err == nil && resp.Text != "" && resp.StopReason != StopRefusal {
			onText(resp.Text)
		}
		return resp, err
	}
	if !finished {
		return Response{}, fmt.Errorf("openai: %w", errStreamCut)
	}
	return openAIResponse(&acc.ChatCompletion)
}

// CompleteStream implements Streamer with one streamed Messages request
// (its message_start, content_block_* and message_delta events), assembled
// by the client library's Message.Accumulate, tool calls included.
func (p *Anthropic) CompleteStream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	params, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	var whole []byte
	stream := p.client.Messages.NewStreaming(ctx, params, anthropicoption.WithMiddleware(wholeJSON(&whole)))
	defer func() { _ = stream.Close() }()
	var msg anthropic.Message
	stopped := false
	for stream.Next() {
		event := stream.Current()
		if err := msg.Accumulate(event); err != nil {
			return Response{}, fmt.Errorf("anthropic: the answer's stream does not add up: %w", err)
		}
		switch event.Type {
		case "content_block_delta":
			if event.Delta.Type == "text_delta" && event.Delta.Text != "" {
				onText(event.Delta.Text)
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return Response{}, p.error(err)
	}
	if whole != nil {
		var m anthropic.Message
		if err := json.Unmarshal(whole, &m); err != nil {
			return Response{}, fmt.Errorf("anthropic: the answer is not a message: %w", err)
		}
		resp := anthropicResponse(&m)
		if resp.Text != "" {
			onText(resp.Text)
		}
		return resp, nil
	}
	if !stopped {
		return Response{}, fmt.Errorf("anthropic: %w", errStreamCut)
	}
	return anthropicResponse(&msg), nil
}
