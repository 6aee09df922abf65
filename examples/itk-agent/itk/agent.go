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
	t.Reply(strings.Join(out, "\n"))
	return nil
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
	if c.Resubscribe {
		return nil, temporal.NewNonRetryableApplicationError("the resubscribe behavior is not implemented", "Unsupported", nil)
	}
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
		if i.ProtocolBinding == binding && (i.ProtocolVersion == a2a.Version || i.ProtocolVersion == a2av0.Version) {
			endpoints = append(endpoints, i)
		}
	}
	if len(endpoints) == 0 {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s lists no %s interface", c.AgentCardURI, binding), "Unsupported", nil)
	}
	opts := []a2aclient.FactoryOption{
		grpcv1.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())),
		a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolJSONRPC, a2av0.NewJSONRPCTransportFactory(a2av0.JSONRPCTransportConfig{})),
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
