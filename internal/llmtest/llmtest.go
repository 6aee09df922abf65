// Package llmtest writes streamed LLM answers in the providers' real wire
// formats, for the httptest fakes of tests: OpenAI's Chat Completions
// server-sent events (chat.completion.chunk objects, a usage chunk, [DONE]),
// Anthropic's Messages events (message_start, content_block_start,
// content_block_delta, content_block_stop, message_delta, message_stop)
// and Gemini's streamGenerateContent events (alt=sse: one
// GenerateContentResponse per event, the last with the finish reason and
// the usage); WriteGeminiJSON answers generateContent whole.
package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Script is one streamed answer.
type Script struct {
	// Model is the model the answer names.
	Model string
	// TTFT is how long the fake thinks before its first token.
	TTFT time.Duration
	// Pieces are the answer's text, one delta each.
	Pieces []string
	// Gap is the pause between two pieces.
	Gap time.Duration
	// ToolCalls are streamed after the text, each as deltas: its ID and
	// name first, then its arguments in two halves.
	ToolCalls []ToolCall
	// CutAfter, when above 0, aborts the connection after that many pieces,
	// mid-answer, as a provider that fails mid-stream.
	CutAfter int
	// InputTokens and OutputTokens are the usage reported at the end.
	InputTokens, OutputTokens int64
	// FirstToken, when set, is called right before the first piece is
	// written (the provider's own time to first token).
	FirstToken func()
}

// ToolCall is a tool call the answer asks for.
type ToolCall struct{ ID, Name, Arguments string }

// sse writes server-sent events.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func start(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return sse{w: w, f: f}
}

func (s sse) event(name string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", raw)
	if s.f != nil {
		s.f.Flush()
	}
}

// pieces writes the script's text pieces with each, pausing as told, and
// aborts the connection at CutAfter.
func (sc Script) pieces(each func(text string)) {
	time.Sleep(sc.TTFT)
	for i, p := range sc.Pieces {
		if sc.CutAfter > 0 && i == sc.CutAfter {
			panic(http.ErrAbortHandler) // the connection is cut mid-answer
		}
		if i > 0 {
			time.Sleep(sc.Gap)
		}
		if i == 0 && sc.FirstToken != nil {
			sc.FirstToken()
		}
		each(p)
	}
}

// WriteOpenAI streams the script as an OpenAI Chat Completions answer.
func WriteOpenAI(w http.ResponseWriter, sc Script) {
	s := start(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000, "model": sc.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}}
	}
	s.event("", chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
	sc.pieces(func(text string) { s.event("", chunk(map[string]any{"content": text}, nil)) })
	for i, tc := range sc.ToolCalls {
		s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""}}}}, nil))
		half := len(tc.Arguments) / 2
		for _, part := range []string{tc.Arguments[:half], tc.Arguments[half:]} {
			s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": part}}}}, nil))
		}
	}
	finish := "stop"
	if len(sc.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	s.event("", chunk(map[string]any{}, finish))
	s.event("", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000, "model": sc.Model,
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": sc.InputTokens, "completion_tokens": sc.OutputTokens,
			"total_tokens": sc.InputTokens + sc.OutputTokens}})
	fmt.Fprint(w, "data: [DONE]\n\n")
	if s.f != nil {
		s.f.Flush()
	}
}

// WriteAnthropic streams the script as an Anthropic Messages answer.
func WriteAnthropic(w http.ResponseWriter, sc Script) {
	s := start(w)
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": sc.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": sc.InputTokens, "output_tokens": 1}}})
	index := 0
	if len(sc.Pieces) > 0 {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		sc.pieces(func(text string) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": text}})
		})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		index++
	}
	for _, tc := range sc.ToolCalls {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}}})
		half := len(tc.Arguments) / 2
		for _, part := range []string{tc.Arguments[:half], tc.Arguments[half:]} {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	stop := "end_turn"
	if len(sc.ToolCalls) > 0 {
		stop = "tool_use"
	}
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": sc.OutputTokens}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// geminiCalls are the script's tool calls as Gemini's functionCall parts:
// Gemini sends each call whole, its arguments an object.
func (sc Script) geminiCalls() []any {
	var parts []any
	for _, tc := range sc.ToolCalls {
		var args map[string]any
		_ = json.Unmarshal([]byte(tc.Arguments), &args)
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": tc.ID, "name": tc.Name, "args": args}})
	}
	return parts
}

func (sc Script) geminiUsage() map[string]any {
	return map[string]any{"promptTokenCount": sc.InputTokens, "candidatesTokenCount": sc.OutputTokens,
		"totalTokenCount": sc.InputTokens + sc.OutputTokens}
}

// WriteGemini streams the script as a Gemini streamGenerateContent answer
// (alt=sse): each text piece an event, then the function calls, then the
// finish reason with the usage.
func WriteGemini(w http.ResponseWriter, sc Script) {
	s := start(w)
	chunk := func(parts []any, finish string) map[string]any {
		c := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		if finish != "" {
			c["finishReason"] = finish
		}
		out := map[string]any{"candidates": []any{c}, "modelVersion": sc.Model, "responseId": "fake-gemini"}
		if finish != "" {
			out["usageMetadata"] = sc.geminiUsage()
		}
		return out
	}
	sc.pieces(func(text string) { s.event("", chunk([]any{map[string]any{"text": text}}, "")) })
	if calls := sc.geminiCalls(); len(calls) > 0 {
		s.event("", chunk(calls, ""))
	}
	s.event("", chunk([]any{}, "STOP"))
}

// WriteGeminiJSON answers a Gemini generateContent request with the script
// whole: its text in one part, then its function calls.
func WriteGeminiJSON(w http.ResponseWriter, sc Script) {
	var parts []any
	text := ""
	for _, p := range sc.Pieces {
		text += p
	}
	if text != "" {
		parts = append(parts, map[string]any{"text": text})
	}
	parts = append(parts, sc.geminiCalls()...)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": sc.geminiUsage(), "modelVersion": sc.Model, "responseId": "fake-gemini"})
}
