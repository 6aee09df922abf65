package tests

// The gRPC rows of the tenant matrix (tenants_test.go): every tenant drives
// every A2A method over the gRPC binding, 1.0 and 0.3, at its own task,
// another tenant's tasks and an unknown task, with a2a-go's gRPC
// transports (a2agrpc/v1 and v0). The answer's code is the gRPC status code
// (codes.NotFound for another tenant's task as for an unknown one); the
// leak check reads the result as JSON, or the whole status (message and
// details) of an error.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	grpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

// tenantVariants are the variants of the matrix's methods phase: the HTTP
// ones and gRPC's.
var tenantVariants = append(append([]matrixVariant(nil), matrixVariants...), grpcVariants...)

// grpcArgs is a call of the matrix over gRPC.
type grpcArgs struct {
	variant matrixVariant
	method  string
	args    a2aArgs
}

// grpcCallOf is the matrix's call of method over v, a gRPC variant.
func grpcCallOf(v matrixVariant, method string, a a2aArgs) tenantCall {
	return tenantCall{httpMethod: "gRPC", path: method + " " + v.version, version: v.version,
		stream: method == methodStream || method == methodSubscribe, firstEvent: method == methodSubscribe,
		echo: a.echo(), grpc: &grpcArgs{variant: v, method: method, args: a}}
}

// grpcCapture holds the last status error a call's connection saw.
type grpcCapture struct {
	mu  sync.Mutex
	err error
}

type grpcCaptureKey struct{}

func (c *grpcCapture) set(err error) {
	if err == nil || errors.Is(err, io.EOF) {
		return
	}
	if _, ok := status.FromError(err); !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
}

// capturedStream notes the status a stream ends with.
type capturedStream struct {
	grpc.ClientStream
	capture *grpcCapture
}

func (s capturedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	s.capture.set(err)
	return err
}

// grpcMatrixClients are the matrix's a2a-go clients of the gRPC binding,
// one per version, their connections noting each call's status in the
// grpcCapture of its context.
type grpcMatrixClients struct {
	once    sync.Once
	clients map[string]*a2aclient.Client
	err     error
}

func (m *tenantMatrix) grpcClient(t *testing.T, version string) *a2aclient.Client {
	t.Helper()
	g := &m.grpcClients
	g.once.Do(func() {
		dial := []grpc.DialOption{
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				err := invoker(ctx, method, req, reply, cc, opts...)
				if c, ok := ctx.Value(grpcCaptureKey{}).(*grpcCapture); ok {
					c.set(err)
				}
				return err
			}),
			grpc.WithStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
				cs, err := streamer(ctx, desc, cc, method, opts...)
				c, ok := ctx.Value(grpcCaptureKey{}).(*grpcCapture)
				if !ok {
					return cs, err
				}
				c.set(err)
				if err != nil {
					return cs, err
				}
				return capturedStream{cs, c}, nil
			}),
		}
		g.clients = map[string]*a2aclient.Client{}
		ctx := context.Background()
		v1, err := a2aclient.NewFromEndpoints(ctx,
			[]*a2a.AgentInterface{{URL: m.grpcAddr, ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: a2a.Version}},
			a2aclient.WithDefaultsDisabled(), grpcv1.WithGRPCTransport(dial...))
		if err != nil {
			g.err = err
			return
		}
		v0, err := a2aclient.NewFromEndpoints(ctx,
			[]*a2a.AgentInterface{{URL: m.grpcAddr, ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: "0.3"}},
			a2aclient.WithDefaultsDisabled(), grpcv0.WithGRPCTransport(dial...))
		if err != nil {
			g.err = err
			return
		}
		g.clients["1.0"], g.clients["0.3"] = v1, v0
		// The matrix's own test: a subtest's cleanup would close them for the others.
		m.t.Cleanup(func() { _ = v1.Destroy(); _ = v0.Destroy() })
	})
	if g.err != nil {
		t.Fatalf("gRPC clients of %s: %v", m.grpcAddr, g.err)
	}
	return g.clients[version]
}

// doGRPC sends c, a gRPC call, as who and reads its answer (a stream until
// it ends, or its first event).
func (m *tenantMatrix) doGRPC(t *testing.T, who *tenant, c tenantCall) tenantAnswer {
	t.Helper()
	m.slots <- struct{}{}
	defer func() { <-m.slots }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g := c.grpc
	a := g.args
	client := m.grpcClient(t, g.variant.version)

	// The credential as metadata; the agent as the 1.0 request's tenant,
	// or, in 0.3, which has none, as the a2aflow-agent metadata.
	params := a2aclient.ServiceParams{}
	if who.token != "" {
		params.Append("authorization", "Bearer "+who.token)
	} else {
		params.Append("x-api-key", who.apiKey)
	}
	agent := strings.TrimPrefix(a.agentPath, "/agents/")
	tenant := ""
	if g.variant.version == "1.0" {
		tenant = agent
	} else if agent != "" {
		params.Append("a2aflow-agent", agent)
	}
	ctx = a2aclient.AttachServiceParams(ctx, params)
	capture := &grpcCapture{}
	ctx = context.WithValue(ctx, grpcCaptureKey{}, capture)

	var result any
	var err error
	var events []string
	readStream := func(seq func(func(a2a.Event, error) bool)) {
		for e, serr := range seq {
			if serr != nil {
				if len(events) == 0 {
					err = serr
				} else {
					events = append(events, "error: "+serr.Error())
				}
				break
			}
			b, _ := json.Marshal(e)
			events = append(events, string(b))
			if c.firstEvent {
				break
			}
		}
	}
	sendReq := func() *a2a.SendMessageRequest {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(a.message.text))
		if a.message.data != nil {
			msg = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(a.message.data))
		}
		msg.ID, msg.TaskID = a.message.id, a2a.TaskID(a.message.taskID)
		req := &a2a.SendMessageRequest{Tenant: tenant, Message: msg}
		if a.push != nil {
			req.Config = &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{ID: a.push.id, URL: a.push.url, Token: a.push.token}}
		}
		return req
	}
	switch g.method {
	case methodSend:
		result, err = client.SendMessage(ctx, sendReq())
	case methodStream:
		readStream(client.SendStreamingMessage(ctx, sendReq()))
	case methodGet:
		result, err = client.GetTask(ctx, &a2a.GetTaskRequest{Tenant: tenant, ID: a2a.TaskID(a.taskID)})
	case methodList:
		result, err = client.ListTasks(ctx, &a2a.ListTasksRequest{Tenant: tenant, ContextID: a.contextID, PageSize: a.pageSize, PageToken: a.pageToken})
	case methodCancel:
		result, err = client.CancelTask(ctx, &a2a.CancelTaskRequest{Tenant: tenant, ID: a2a.TaskID(a.taskID)})
	case methodSubscribe:
		readStream(client.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Tenant: tenant, ID: a2a.TaskID(a.taskID)}))
	case methodCreatePush:
		result, err = client.CreateTaskPushConfig(ctx, &a2a.PushConfig{Tenant: tenant, TaskID: a2a.TaskID(a.taskID), ID: a.push.id, URL: a.push.url, Token: a.push.token})
	case methodGetPush:
		result, err = client.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{Tenant: tenant, TaskID: a2a.TaskID(a.taskID), ID: a.configID})
	case methodListPush:
		result, err = client.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{Tenant: tenant, TaskID: a2a.TaskID(a.taskID)})
	case methodDeletePush:
		err = client.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{Tenant: tenant, TaskID: a2a.TaskID(a.taskID), ID: a.configID})
	case methodCard:
		result, err = client.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{Tenant: tenant})
	default:
		t.Fatalf("no gRPC form of %s", g.method)
	}

	ans := tenantAnswer{status: 200, ctype: "application/grpc", events: events}
	if err != nil {
		st, ok := status.FromError(capture.err)
		if !ok {
			st = status.New(codes.Unknown, err.Error()) // no status on the wire: the client's own error
		}
		ans.code, ans.isError, ans.message = int(st.Code()), true, st.Message()
		ans.inStream = c.stream
		ans.raw, _ = protojson.Marshal(st.Proto())
		if ans.code == int(codes.Unknown) {
			ans.raw = []byte(err.Error())
		}
		ans.timedOut = ctx.Err() != nil
		return ans
	}
	if c.stream {
		ans.raw = []byte(strings.Join(events, "\n"))
		for _, e := range events {
			if strings.HasPrefix(e, "error: ") {
				ans.laterError = e
			}
		}
		return ans
	}
	if result != nil {
		ans.raw, _ = json.Marshal(result)
	}
	return ans
}
