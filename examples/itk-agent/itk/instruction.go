package itk

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The interop kit's instruction (protos/instruction.proto of
// github.com/a2aproject/a2a-itk, package itk), read and written with
// protowire: the kit's few messages do not warrant generated code and a
// protoc step. Field numbers are the proto's.
//
//	Instruction    { oneof step { CallAgent call_agent = 1; ReturnResponse return_response = 2; SeriesOfSteps steps = 3; } }
//	CallAgent      { string transport = 1; string agent_card_uri = 2; Instruction instruction = 3; bool streaming = 4;
//	                 oneof behavior { SendMessageBehavior send_message = 5; PushNotificationBehavior push_notification = 6;
//	                                  ResubscribeBehavior resubscribe = 7; } }
//	PushNotificationBehavior { string url = 1; }
//	ReturnResponse { string response = 1; bool hold_task = 2; }
//	SeriesOfSteps  { repeated Instruction instructions = 1; ResponseGenerator response_generator = 2; }

// Instruction is one step of a kit's walk: exactly one of its fields is set.
type Instruction struct {
	Call   *CallAgent
	Return *ReturnResponse
	Steps  []*Instruction
}

// CallAgent calls another agent with an instruction of its own.
type CallAgent struct {
	Transport    string // "jsonrpc", "grpc", "http_json"
	AgentCardURI string // the agent's base URL; its card is at /.well-known/agent-card.json
	Instruction  []byte // the callee's Instruction, encoded
	Streaming    bool
	PushURL      string // push_notification's URL, "" without it
	Resubscribe  bool
}

// ReturnResponse answers with a text.
type ReturnResponse struct {
	Response string
	HoldTask bool
}

// fields calls f with each field of b.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return protowire.ParseError(l)
		}
		b = b[l:]
		var v []byte
		var n uint64
		switch typ {
		case protowire.BytesType:
			v, l = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			n, l = protowire.ConsumeVarint(b)
		default:
			l = protowire.ConsumeFieldValue(num, typ, b)
		}
		if l < 0 {
			return protowire.ParseError(l)
		}
		b = b[l:]
		if err := f(num, typ, v, n); err != nil {
			return err
		}
	}
	return nil
}

// ParseInstruction decodes an encoded Instruction.
func ParseInstruction(b []byte) (*Instruction, error) {
	in := &Instruction{}
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		var err error
		switch num {
		case 1:
			in.Call, err = parseCall(v)
		case 2:
			in.Return, err = parseReturn(v)
		case 3:
			in.Steps, err = parseSteps(v)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("instruction: %w", err)
	}
	if in.Call == nil && in.Return == nil && in.Steps == nil {
		return nil, errors.New("instruction: no step")
	}
	return in, nil
}

func parseCall(b []byte) (*CallAgent, error) {
	c := &CallAgent{}
	return c, fields(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch num {
		case 1:
			c.Transport = string(v)
		case 2:
			c.AgentCardURI = string(v)
		case 3:
			c.Instruction = append([]byte(nil), v...)
		case 4:
			c.Streaming = n != 0
		case 6:
			return fields(v, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
				if num == 1 {
					c.PushURL = string(v)
				}
				return nil
			})
		case 7:
			c.Resubscribe = true
		}
		return nil
	})
}

func parseReturn(b []byte) (*ReturnResponse, error) {
	r := &ReturnResponse{}
	return r, fields(b, func(num protowire.Number, _ protowire.Type, v []byte, n uint64) error {
		switch num {
		case 1:
			r.Response = string(v)
		case 2:
			r.HoldTask = n != 0
		}
		return nil
	})
}

func parseSteps(b []byte) ([]*Instruction, error) {
	steps := []*Instruction{}
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		in, err := ParseInstruction(v)
		if err == nil {
			steps = append(steps, in)
		}
		return err
	})
	return steps, err
}

// AppendReturn appends an encoded Instruction that returns response (for
// tests).
func AppendReturn(b []byte, response string) []byte {
	var rr []byte
	rr = protowire.AppendTag(rr, 1, protowire.BytesType)
	rr = protowire.AppendString(rr, response)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendBytes(b, rr)
}
