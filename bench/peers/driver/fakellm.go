package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
)

// fakeLLM is one OpenAI-compatible Chat Completions endpoint
// (POST /v1/chat/completions, plain JSON or server-sent events when the
// request streams) that every peer's agent calls. It plays the same script
// for all of them, reading the conversation it is sent:
//
//   - the first user message: ask "Where to?" — with the ask_user tool when
//     the agent offers one (a2aflow's durable question), else as the
//     answer's text (the other frameworks end their turn there and take the
//     next user message as the answer);
//   - the city (the ask_user tool's result, or the next user message): call
//     book_trip {"city": ...} when the agent offers that tool, else answer
//     "Booked <city>";
//   - book_trip's result: answer it as the text ("Booked <city>").
type fakeLLM struct{ calls atomic.Int64 }

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type chatRequest struct {
	Model    string        `json:"model"`
	Stream   bool          `json:"stream"`
	Messages []chatMessage `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// text is a message's content, a string or a list of text parts.
func (m chatMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

type reply struct {
	text     string
	toolName string
	toolArgs string
}

func (f *fakeLLM) script(req chatRequest) (reply, error) {
	has := map[string]bool{}
	for _, t := range req.Tools {
		has[t.Function.Name] = true
	}
	if len(req.Messages) == 0 {
		return reply{}, fmt.Errorf("no messages")
	}
	last := req.Messages[len(req.Messages)-1]
	var city string
	switch last.Role {
	case "tool":
		name := ""
		for _, m := range req.Messages {
			for _, c := range m.ToolCalls {
				if c.ID == last.ToolCallID {
					name = c.Function.Name
				}
			}
		}
		if name != "ask_user" {
			return reply{text: strings.Trim(last.text(), `"`)}, nil
		}
		city = last.text()
	case "user":
		assistant := false
		for _, m := range req.Messages {
			assistant = assistant || m.Role == "assistant"
		}
		if !assistant {
			if has["ask_user"] {
				return reply{toolName: "ask_user", toolArgs: `{"question":"Where to?"}`}, nil
			}
			return reply{text: "Where to?"}, nil
		}
		city = last.text()
	default:
		return reply{}, fmt.Errorf("last message is %q", last.Role)
	}
	city = strings.TrimSpace(city)
	if has["book_trip"] {
		args, _ := json.Marshal(map[string]string{"city": city})
		return reply{toolName: "book_trip", toolArgs: string(args)}, nil
	}
	return reply{text: "Booked " + city}, nil
}

func (f *fakeLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	rep, err := f.script(req)
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": err.Error(), "type": "invalid_request_error"}})
		return
	}
	n := f.calls.Add(1)
	id := fmt.Sprintf("chatcmpl-%d", n)
	model := req.Model
	if model == "" {
		model = "fake"
	}
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	message := map[string]any{"role": "assistant", "content": rep.text}
	finish := "stop"
	var toolCalls []map[string]any
	if rep.toolName != "" {
		toolCalls = []map[string]any{{"index": 0, "id": fmt.Sprintf("call_%d", n), "type": "function",
			"function": map[string]any{"name": rep.toolName, "arguments": rep.toolArgs}}}
		message["content"] = nil
		message["tool_calls"] = toolCalls
		finish = "tool_calls"
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": id, "object": "chat.completion", "created": 1767225600, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any, usage any) {
		b, _ := json.Marshal(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1767225600, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
			"usage":   usage,
		})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	if toolCalls != nil {
		chunk(map[string]any{"role": "assistant", "tool_calls": toolCalls}, nil, nil)
	} else {
		chunk(map[string]any{"role": "assistant", "content": rep.text}, nil, nil)
	}
	chunk(map[string]any{}, finish, usage)
	fmt.Fprint(w, "data: [DONE]\n\n")
}
