package itk

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestParseInstruction reads a walk as the kit encodes it: steps that
// return texts and call an agent, with the callee's instruction kept
// encoded.
func TestParseInstruction(t *testing.T) {
	inner := AppendReturn(nil, "[b -> a (grpc)]")
	var call []byte
	call = protowire.AppendTag(call, 1, protowire.BytesType)
	call = protowire.AppendString(call, "grpc")
	call = protowire.AppendTag(call, 2, protowire.BytesType)
	call = protowire.AppendString(call, "http://127.0.0.1:1234")
	call = protowire.AppendTag(call, 3, protowire.BytesType)
	call = protowire.AppendBytes(call, inner)
	call = protowire.AppendTag(call, 4, protowire.VarintType)
	call = protowire.AppendVarint(call, 1)
	var callInst []byte
	callInst = protowire.AppendTag(callInst, 1, protowire.BytesType)
	callInst = protowire.AppendBytes(callInst, call)

	var steps []byte
	for _, in := range [][]byte{AppendReturn(nil, "first"), callInst} {
		steps = protowire.AppendTag(steps, 1, protowire.BytesType)
		steps = protowire.AppendBytes(steps, in)
	}
	var walk []byte
	walk = protowire.AppendTag(walk, 3, protowire.BytesType)
	walk = protowire.AppendBytes(walk, steps)

	in, err := ParseInstruction(walk)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Steps) != 2 || in.Steps[0].Return == nil || in.Steps[0].Return.Response != "first" || in.Steps[1].Call == nil {
		t.Fatalf("steps %+v, want a return and a call", in.Steps)
	}
	c := in.Steps[1].Call
	if c.Transport != "grpc" || c.AgentCardURI != "http://127.0.0.1:1234" || !c.Streaming || string(c.Instruction) != string(inner) {
		t.Errorf("call %+v, want grpc, the card URL, streaming, the inner instruction", c)
	}
	if _, err := ParseInstruction([]byte{0xff}); err == nil {
		t.Error("a malformed instruction was read")
	}
	if _, err := ParseInstruction(nil); err == nil {
		t.Error("an empty instruction was read")
	}
}
