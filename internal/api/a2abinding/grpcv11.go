package a2abinding

import (
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/a2aflow/a2aflow/internal/api/taskservice"
)

// A2A 1.1 over gRPC. a2a-go's generated types (v2.4.0) come from the 1.0
// proto, which has no generation fields; the dev-1.1 proto adds them with
// new field numbers to the same messages of the same service
// (lf.a2a.v1.A2AService), so a 1.1 client's request decodes into a2a-go's
// types with the new fields kept as unknown fields, and an answer can
// carry them the same way: on the wire an unknown field is the field. A
// call on the 1.0 service whose a2a-version metadata says 1.1 (grpcAdmit)
//   - has its request's currentGeneration (GetTaskRequest, field 4) and
//     configuration.ifGenerationMatch (SendMessageConfiguration, field 5)
//     read from the unknown fields (grpcGeneration) and handed to the
//     service (taskservice.WithGeneration), as v11.go does for HTTP;
//   - has each generation the service put in a Task's or an event's
//     metadata (taskservice.GenerationMetadataKey) moved to the message's
//     generation field (Task 7, TaskStatusUpdateEvent 5,
//     TaskArtifactUpdateEvent 7), written as an unknown field
//     (grpcWithGeneration), in unary answers and on streams.
// The mismatch error needs nothing here: the service's error is mapped to
// ABORTED with the TASK_GENERATION_MISMATCH ErrorInfo (apierror.GRPC).
// The numbers are the dev-1.1 branch's a2a.proto (a2aproject/A2A at
// 2849187, docs/guides/protocol-versions.md).

// The generation fields of the dev-1.1 proto, by message.
const (
	protoGetTaskCurrentGeneration = protowire.Number(4) // GetTaskRequest.current_generation
	protoConfigIfGenerationMatch  = protowire.Number(5) // SendMessageConfiguration.if_generation_match
)

// protoGenerationField is the generation field of each message that has one.
var protoGenerationField = map[protoreflect.FullName]protowire.Number{
	"lf.a2a.v1.Task":                    7,
	"lf.a2a.v1.TaskStatusUpdateEvent":   5,
	"lf.a2a.v1.TaskArtifactUpdateEvent": 7,
}

// grpcGeneration reads a 1.1 request's generation fields from req, an
// a2a-go request message.
func grpcGeneration(req any) (taskservice.Generation, error) {
	var g taskservice.Generation
	m, ok := req.(proto.Message)
	if !ok {
		return g, nil
	}
	r := m.ProtoReflect()
	var err error
	switch r.Descriptor().FullName() {
	case "lf.a2a.v1.GetTaskRequest":
		g.Current, err = unknownInt64(r, protoGetTaskCurrentGeneration, "currentGeneration")
	case "lf.a2a.v1.SendMessageRequest":
		fd := r.Descriptor().Fields().ByName("configuration")
		if fd != nil && r.Has(fd) {
			g.IfMatch, err = unknownInt64(r.Get(fd).Message(), protoConfigIfGenerationMatch, "ifGenerationMatch")
		}
	}
	return g, err
}

// unknownInt64 reads the int64 field num of m from its unknown fields (the
// last one, as protobuf reads a repeated scalar field's occurrence); nil
// when absent. A field of another wire type, or a negative value, is
// InvalidParams.
func unknownInt64(m protoreflect.Message, num protowire.Number, name string) (*int64, error) {
	var out *int64
	b := m.GetUnknown()
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, a2a.NewError(a2a.ErrInvalidParams, "malformed unknown field")
		}
		b = b[l:]
		if n != num {
			l = protowire.ConsumeFieldValue(n, typ, b)
			if l < 0 {
				return nil, a2a.NewError(a2a.ErrInvalidParams, "malformed unknown field")
			}
			b = b[l:]
			continue
		}
		if typ != protowire.VarintType {
			return nil, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("%s (field %d) must be an int64", name, num))
		}
		v, l := protowire.ConsumeVarint(b)
		if l < 0 {
			return nil, a2a.NewError(a2a.ErrInvalidParams, "malformed unknown field")
		}
		b = b[l:]
		x := int64(v)
		if x < 0 {
			return nil, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("%s must be a non-negative integer, got %d", name, x))
		}
		out = &x
	}
	return out, nil
}

// grpcWithGeneration moves every generation the service put in the
// metadata of a Task or event inside msg, an a2a-go answer, to the
// message's 1.1 generation field.
func grpcWithGeneration(msg any) {
	if m, ok := msg.(proto.Message); ok {
		withGeneration(m.ProtoReflect())
	}
}

func withGeneration(m protoreflect.Message) {
	if num, ok := protoGenerationField[m.Descriptor().FullName()]; ok {
		moveGeneration(m, num)
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind || fd.IsMap() || fd.Message().FullName().Parent() != "lf.a2a.v1" {
			return true
		}
		if fd.IsList() {
			for i, l := 0, v.List(); i < l.Len(); i++ {
				withGeneration(l.Get(i).Message())
			}
			return true
		}
		withGeneration(v.Message())
		return true
	})
}

// moveGeneration moves m's metadata generation to its field num.
func moveGeneration(m protoreflect.Message, num protowire.Number) {
	fd := m.Descriptor().Fields().ByName("metadata")
	if fd == nil || !m.Has(fd) {
		return
	}
	meta, ok := m.Get(fd).Message().Interface().(*structpb.Struct)
	if !ok {
		return
	}
	v, ok := meta.GetFields()[taskservice.GenerationMetadataKey]
	if !ok {
		return
	}
	delete(meta.Fields, taskservice.GenerationMetadataKey)
	if len(meta.Fields) == 0 {
		m.Clear(fd)
	}
	var b []byte
	b = protowire.AppendTag(b, num, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(int64(v.GetNumberValue())))
	m.SetUnknown(append(m.GetUnknown(), b...))
}
