// Package itk is an agent of the A2A interop kit (github.com/a2aproject/a2a-itk) on a2aflow: it
// reads the kit's nested instruction from a message, calls the agents it names (each call an
// activity, so a walk survives a crash of the worker), and answers with their answers joined.
package itk

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	grpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/a2aflow/a2aflow/workflows"
)

// MediaType is the media type of the part holding the instruction.
const MediaType = "application/x-protobuf"

// Agent is the kit's agent.
func Agent() *workflows.Agent {
	return &workflows.Agent{
		Name:        "itk",
		Description: "An agent of the A2A interop kit: follows the kit's nested instruction, calling the agents it names.",
		InputModes:  []string{MediaType, "text/plain"},
		OutputModes: []string{"text/plain"},
		Activities:  []any{CallAgentActivity},
		Handle:      handle,
	}
}

func handle(ctx workflow.Context, t *workflows.Task) error {
	raw, err := instructionBytes(t.Message())
	if err != nil {
		return err
	}
	in, err := ParseInstruction(raw)
	if err != nil {
		return err
	}
	out, err := run(ctx, in)
	if err != nil {
		return err
	}
	text := strings.Join(out, "\n")
	if holds(in) {
		// hold_task: the answer as a working status, marked finished for
		// the caller that resubscribes, then working until it cancels
		// the task (the sleep ends with the cancellation), HoldFor at
		// most.
		t.Progress(ctx, text+"\n"+finished)
		if err := workflow.Sleep(ctx, HoldFor); err != nil {
			return err
		}
	}
	t.Reply(text)
	return nil
}

// finished ends the answer of a held task (hold_task), for the caller
// that resubscribed to it.
const finished = "task-finished"

// HoldFor is how long a held task stays working when nobody cancels it.
const HoldFor = 10 * time.Second

// holds reports whether in asks to hold the task: a ReturnResponse with
// hold_task, at its top or in its steps.
func holds(in *Instruction) bool {
	if in.Return != nil && in.Return.HoldTask {
		return true
	}
	for _, s := range in.Steps {
		if holds(s) {
			return true
		}
	}
	return false
}

// instructionBytes finds the instruction in msg: a raw part of MediaType
// (or named instruction.bin), or, as the kit may send it, its base64 in a
// text part.
func instructionBytes(msg *a2a.Message) ([]byte, error) {
	if msg == nil {
		return nil, errors.New("no message")
	}
	for _, p := range msg.Parts {
		if raw := p.Raw(); raw != nil && (p.MediaType == MediaType || p.Filename == "instruction.bin") {
			return raw, nil
		}
	}
	return nil, temporal.NewNonRetryableApplicationError("the message holds no instruction (a raw part of "+MediaType+")", "InvalidParams", nil)
}

// run follows in and returns its answers.
func run(ctx workflow.Context, in *Instruction) ([]string, error) {
	switch {
	case in.Return != nil:
		return []string{in.Return.Response}, nil
	case in.Steps != nil:
		var out []string
		for _, s := range in.Steps {
			got, err := run(ctx, s)
			if err != nil {
				return nil, err
			}
			out = append(out, got...)
		}
		return out, nil
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var out []string
	err := workflow.ExecuteActivity(actx, CallAgentActivity, *in.Call).Get(ctx, &out)
	return out, err
}

// CallAgentActivity calls the agent c names, over its transport, with its
// instruction, and returns the texts of its answer.
func CallAgentActivity(ctx context.Context, c CallAgent) ([]string, error) {
	resolver := agentcard.NewResolver(nil)
	resolver.CardParser = a2av0.NewAgentCardParser() // reads 0.3 cards too
	card, err := resolver.Resolve(ctx, c.AgentCardURI)
	if err != nil {
		return nil, fmt.Errorf("card of %s: %w", c.AgentCardURI, err)
	}
	binding := a2a.TransportProtocolJSONRPC
	switch strings.ToLower(c.Transport) {
	case "grpc":
		binding = a2a.TransportProtocolGRPC
	case "http_json", "rest", "http+json":
		binding = a2a.TransportProtocolHTTPJSON
	}
	var endpoints []*a2a.AgentInterface
	for _, i := range card.SupportedInterfaces {
		// Every version: the client factory picks one it speaks (a 0.3
		// card's interfaces say "0.3.0", or nothing).
		if i.ProtocolBinding == binding {
			endpoints = append(endpoints, i)
		}
	}
	if len(endpoints) == 0 {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s lists no %s interface", c.AgentCardURI, binding), "Unsupported", nil)
	}
	// Every binding in 1.0 and 0.3.
	insecureGRPC := grpc.WithTransportCredentials(insecure.NewCredentials())
	opts := []a2aclient.FactoryOption{
		grpcv1.WithGRPCTransport(insecureGRPC),
		grpcv0.WithGRPCTransport(insecureGRPC),
		a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolJSONRPC, a2av0.NewJSONRPCTransportFactory(a2av0.JSONRPCTransportConfig{})),
		a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolHTTPJSON, a2av0.NewRESTTransportFactory(a2av0.RESTTransportConfig{})),
	}
	if c.PushURL != "" {
		opts = append(opts, a2aclient.WithConfig(a2aclient.Config{
			PushConfig: &a2a.PushConfig{URL: strings.TrimRight(c.PushURL, "/") + "/notifications", Token: "itk-token"}}))
	}
	client, err := a2aclient.NewFactory(opts...).CreateFromEndpoints(ctx, endpoints)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", c.AgentCardURI, err)
	}
	part := a2a.NewRawPart(c.Instruction)
	part.MediaType, part.Filename = MediaType, "instruction.bin"
	req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, part)}
	var out []string
	if c.Resubscribe {
		return resubscribe(ctx, client, req)
	}
	if c.Streaming {
		for e, err := range client.SendStreamingMessage(ctx, req) {
			if err != nil {
				return nil, fmt.Errorf("stream from %s: %w", c.AgentCardURI, err)
			}
			out = append(out, texts(e)...)
		}
		return out, nil
	}
	res, err := client.SendMessage(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("message to %s: %w", c.AgentCardURI, err)
	}
	return texts(res), nil
}

// texts are the texts of an answer's message: a Message's, or the status
// message of a task or status update.
func texts(e any) []string {
	var msg *a2a.Message
	switch v := e.(type) {
	case *a2a.Message:
		msg = v
	case *a2a.Task:
		msg = v.Status.Message
	case *a2a.TaskStatusUpdateEvent:
		msg = v.Status.Message
	}
	if msg == nil {
		return nil
	}
	var out []string
	for _, p := range msg.Parts {
		if t := p.Text(); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// resubscribe is the kit's resubscribe behavior: a streaming message whose
// stream is dropped once it names its task, a subscription to the task
// read until the callee's answer is marked finished, then the task
// canceled. It returns the answer.
func resubscribe(ctx context.Context, client *a2aclient.Client, req *a2a.SendMessageRequest) ([]string, error) {
	first, drop := context.WithCancel(ctx)
	var id a2a.TaskID
	for e, err := range client.SendStreamingMessage(first, req) {
		if err != nil {
			drop()
			return nil, fmt.Errorf("stream: %w", err)
		}
		if id = taskIDOf(e); id != "" {
			break
		}
	}
	drop()
	if id == "" {
		return nil, errors.New("the stream named no task")
	}
	var out []string
	done := false
	for e, err := range client.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
		if err != nil {
			return nil, fmt.Errorf("subscribe to %s: %w", id, err)
		}
		got := texts(e)
		if t, ok := e.(*a2a.Task); ok && len(got) == 0 && t.Status.Message == nil {
			for _, m := range t.History {
				if m.Role == a2a.MessageRoleAgent {
					got = append(got, texts(&a2a.Message{Parts: m.Parts})...)
				}
			}
		}
		for _, s := range got {
			done = done || strings.Contains(s, finished)
			if s = strings.TrimSpace(strings.ReplaceAll(s, finished, "")); s != "" {
				out = append(out, s)
			}
		}
		if done {
			break
		}
	}
	if _, err := client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); err != nil {
		return nil, fmt.Errorf("cancel %s: %w", id, err)
	}
	return out, nil
}

func taskIDOf(e a2a.Event) a2a.TaskID {
	switch v := e.(type) {
	case *a2a.Task:
		return v.ID
	case *a2a.TaskStatusUpdateEvent:
		return v.TaskID
	case *a2a.TaskArtifactUpdateEvent:
		return v.TaskID
	}
	return ""
}
