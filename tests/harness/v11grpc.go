package harness

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The A2A 1.1 gRPC client's types. No SDK and no generated Go code carries
// the dev-1.1 proto, and protoc is not a build dependency, so the client
// builds them at run time: the 1.0 proto's descriptor (a2a-go's a2apb, the
// same package lf.a2a.v1) plus every generation field the dev-1.1 proto
// declares, read from its text, testdata/a2a-dev-1.1.proto
// (specification/a2a.proto of github.com/a2aproject/A2A, branch dev-1.1,
// commit 28491879ff41a9c230fb51f3f7bd6096b80cc341, verbatim, Apache-2.0),
// as dynamicpb messages the client fills and reads through their
// ProtoJSON, the same JSON the other bindings speak.

//go:embed testdata/a2a-dev-1.1.proto
var protoV11 string

var (
	v11FilesOnce sync.Once
	v11File      protoreflect.FileDescriptor
	v11FileErr   error
)

// protoV11Field is a field of the dev-1.1 proto: `[optional] int64 NAME = N;`.
var protoV11Field = regexp.MustCompile(`^\s*(optional\s+)?int64\s+(\w*generation\w*)\s*=\s*(\d+)\s*;`)

// V11ProtoFields returns the generation fields of the dev-1.1 proto, as
// "Message.field=N" ("?" after N when optional), in the order of the file.
func V11ProtoFields() []string {
	var out []string
	message := ""
	for _, line := range strings.Split(protoV11, "\n") {
		if m := regexp.MustCompile(`^message (\w+) \{`).FindStringSubmatch(line); m != nil {
			message = m[1]
		}
		if m := protoV11Field.FindStringSubmatch(line); m != nil {
			opt := ""
			if m[1] != "" {
				opt = "?"
			}
			out = append(out, fmt.Sprintf("%s.%s=%s%s", message, m[2], m[3], opt))
		}
	}
	return out
}

// v11Descriptor is the 1.0 proto's file with the dev-1.1 generation fields.
func v11Descriptor() (protoreflect.FileDescriptor, error) {
	v11FilesOnce.Do(func() {
		fdp := protodesc.ToFileDescriptorProto(a2apb.File_a2av1_proto)
		for _, f := range V11ProtoFields() {
			msg, rest, _ := strings.Cut(f, ".")
			name, num, _ := strings.Cut(rest, "=")
			optional := strings.HasSuffix(num, "?")
			n, _ := strconv.Atoi(strings.TrimSuffix(num, "?"))
			var target *descriptorpb.DescriptorProto
			for _, m := range fdp.MessageType {
				if m.GetName() == msg {
					target = m
				}
			}
			if target == nil {
				v11FileErr = fmt.Errorf("the 1.0 proto has no message %s", msg)
				return
			}
			fd := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(int32(n)),
				Type:  descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum(),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()}
			if optional { // proto3 optional: a synthetic oneof, after the real ones
				target.OneofDecl = append(target.OneofDecl, &descriptorpb.OneofDescriptorProto{Name: proto.String("_" + name)})
				fd.OneofIndex, fd.Proto3Optional = proto.Int32(int32(len(target.OneofDecl)-1)), proto.Bool(true)
			}
			target.Field = append(target.Field, fd)
		}
		v11File, v11FileErr = protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	})
	return v11File, v11FileErr
}

// V11GRPC is a minimal A2A 1.1 gRPC client (the dev-1.1 proto, above):
// requests and answers are their ProtoJSON, as maps.
type V11GRPC struct {
	Addr    string // host:port of serve --grpc-addr
	Tenant  string // the agent
	Version string // "" is 1.1
	once    sync.Once
	conn    *grpc.ClientConn
	err     error
}

// Close closes the client's connection.
func (c *V11GRPC) Close() {
	if c.conn != nil {
		_ = c.conn.Close()
	}
}

func (c *V11GRPC) dial() (*grpc.ClientConn, error) {
	c.once.Do(func() {
		c.conn, c.err = grpc.NewClient(c.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	})
	return c.conn, c.err
}

func (c *V11GRPC) message(name string, in map[string]any) (*dynamicpb.Message, error) {
	fd, err := v11Descriptor()
	if err != nil {
		return nil, err
	}
	md := fd.Messages().ByName(protoreflect.Name(name))
	if md == nil {
		return nil, fmt.Errorf("no message %s", name)
	}
	m := dynamicpb.NewMessage(md)
	if in == nil {
		return m, nil
	}
	if c.Tenant != "" && md.Fields().ByName("tenant") != nil {
		if _, ok := in["tenant"]; !ok {
			in["tenant"] = c.Tenant
		}
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	return m, protojson.Unmarshal(b, m)
}

func (c *V11GRPC) ctx(ctx context.Context) context.Context {
	v := c.Version
	if v == "" {
		v = "1.1"
	}
	return metadata.AppendToOutgoingContext(ctx, "a2a-version", v)
}

// asMap is m's ProtoJSON as a map.
func asMap(m proto.Message) (map[string]any, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

// Call makes the unary call method (of lf.a2a.v1.A2AService) with the
// request in, of type reqType, whose answer is of type respType.
func (c *V11GRPC) Call(ctx context.Context, method, reqType, respType string, in map[string]any) (map[string]any, error) {
	conn, err := c.dial()
	if err != nil {
		return nil, err
	}
	req, err := c.message(reqType, in)
	if err != nil {
		return nil, err
	}
	resp, err := c.message(respType, nil)
	if err != nil {
		return nil, err
	}
	if err := conn.Invoke(c.ctx(ctx), "/lf.a2a.v1.A2AService/"+method, req, resp); err != nil {
		return nil, err
	}
	return asMap(resp)
}

// Stream makes the streaming call method with the request in, of type
// reqType, and returns every StreamResponse, as ProtoJSON maps, and the
// error that ended the stream, if any.
func (c *V11GRPC) Stream(ctx context.Context, method, reqType string, in map[string]any) ([]map[string]any, error) {
	conn, err := c.dial()
	if err != nil {
		return nil, err
	}
	req, err := c.message(reqType, in)
	if err != nil {
		return nil, err
	}
	s, err := conn.NewStream(c.ctx(ctx), &grpc.StreamDesc{ServerStreams: true}, "/lf.a2a.v1.A2AService/"+method)
	if err != nil {
		return nil, err
	}
	if err := s.SendMsg(req); err != nil {
		return nil, err
	}
	if err := s.CloseSend(); err != nil {
		return nil, err
	}
	var out []map[string]any
	for {
		resp, err := c.message("StreamResponse", nil)
		if err != nil {
			return out, err
		}
		if err := s.RecvMsg(resp); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		m, err := asMap(resp)
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
}
