package a2abinding

import (
	"bytes"
	"encoding/json"
	"strings"

	a2apb03 "github.com/a2aproject/a2a-go/a2apb"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// protoFieldNames renames the fields of an A2A 1.0 JSON-RPC request's
// params that are written with their proto names (history_length,
// context_id, task_id...) to their JSON names (historyLength...), and
// returns the new params, or nil when there is nothing to rename.
//
// A2A 1.0's JSON is ProtoJSON, whose parsers accept a field's proto name as
// well as its lowerCamelCase JSON name (and the official SDKs built on
// protobuf's json_format do); a2a-go v2.4.0 decodes params with
// encoding/json and its camelCase tags only, so that GetTask with
// history_length read the whole history and a push config with task_id was
// refused. Correction of a2a-go, canary jsonrpc-proto-field-names
// (internal/api/upstream_test.go).
//
// Only fields the request's proto message declares are renamed, recursively
// through message fields, lists and maps of messages; the contents of
// google.protobuf.Struct and Value fields (metadata, data parts) are the
// caller's own data and stay as they are. A proto name is not renamed when
// the JSON name is present too. Numbers are kept as written.
func protoFieldNames(method string, params json.RawMessage) json.RawMessage {
	if !bytes.Contains(params, []byte("_")) {
		return nil // no proto name has none: the common case costs no decoding
	}
	md := a2aRequestMessage(method)
	if md == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil // checkV1Params refuses it
	}
	if !renameProtoFields(v, md) {
		return nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return out
}

// a2aRequestMessage returns the request message of the A2A 1.0 method, or
// nil for a method the A2A service does not have.
func a2aRequestMessage(method string) protoreflect.MessageDescriptor {
	svc := a2apb.File_a2av1_proto.Services().Get(0)
	m := svc.Methods().ByName(protoreflect.Name(method))
	if m == nil {
		return nil
	}
	return m.Input()
}

// renameProtoFields renames v's fields of md written with their proto names
// and reports whether it renamed any.
func renameProtoFields(v any, md protoreflect.MessageDescriptor) bool {
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	switch md.FullName() {
	case "google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue", "google.protobuf.Any":
		return false
	}
	changed := false
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	for _, key := range keys {
		fd := md.Fields().ByJSONName(key)
		if fd == nil && key == "content" && md.ParentFile() == a2apb03.File_a2a_proto && md.Name() == "Message" {
			// A2A 0.3.0's a2a.proto names a message's parts "content"
			// (field 5), as a2a-sdk's 0.3 client writes them and a2a-go's
			// 0.3 binding reads them (a2apb/v0/pbjson Message.Content);
			// a2a-go v0.3's a2apb, a later 0.3 proto, names them "parts".
			// The key stays; the parts' own fields are renamed.
			fd = md.Fields().ByName("parts")
		}
		if fd == nil {
			fd = md.Fields().ByTextName(key)
			if fd == nil {
				continue
			}
			if _, both := obj[fd.JSONName()]; !both {
				obj[fd.JSONName()] = obj[key]
				delete(obj, key)
				key = fd.JSONName()
				changed = true
			}
		}
		sub := fd.Message()
		if sub == nil {
			continue
		}
		switch {
		case fd.IsList():
			list, _ := obj[key].([]any)
			for _, e := range list {
				changed = renameProtoFields(e, sub) || changed
			}
		case fd.IsMap():
			if vd := fd.MapValue().Message(); vd != nil {
				m, _ := obj[key].(map[string]any)
				for _, e := range m {
					changed = renameProtoFields(e, vd) || changed
				}
			}
		default:
			changed = renameProtoFields(obj[key], sub) || changed
		}
	}
	return changed
}

// restProtoFieldNames renames the fields of an HTTP+JSON request body
// written with their proto names to their JSON names, as protoFieldNames
// does for JSON-RPC params, and returns the new body, or nil when there is
// nothing to rename. The body's message is the one the path and the A2A
// version (1.0 or 0.3) post: a SendMessageRequest to message:send and
// message:stream, a push config to a task's pushNotificationConfigs.
//
// a2a-sdk's 0.3 HTTP+JSON client (a2a/compat/v0_3/rest_transport.py)
// writes its bodies with MessageToDict(preserving_proto_field_name=True):
// {"request": {"message_id": ..., "context_id": ...}, ...} for a message,
// whose JSON name is "message"; a2a-go's 0.3 binding (a2apb/v0/pbjson)
// reads the JSON names only and refused it (400, "message is required").
// The 0.3 names come from the 0.3 proto (a2a-go v0.3's a2apb, the one
// a2aflow's 0.3 gRPC binding serves), but for a message's parts, which
// 0.3.0's proto and a2a-sdk name "content" (renameProtoFields): a file
// part's {"file_with_bytes", "mime_type"} went unrenamed, and the part
// reached the service without content. Correction of a2a-go, canaries
// rest-proto-field-names and rest-proto-field-names-push-config
// (internal/api/upstream_test.go).
func restProtoFieldNames(version, method, path string, body []byte) []byte {
	if method != "POST" || !bytes.Contains(body, []byte("_")) {
		return nil
	}
	var mds []protoreflect.MessageDescriptor
	switch {
	case strings.HasSuffix(path, "/message:send"), strings.HasSuffix(path, "/message:stream"):
		if version == "0.3" {
			mds = append(mds, a2apb03.File_a2a_proto.Messages().ByName("SendMessageRequest"))
		} else {
			mds = append(mds, a2aRequestMessage("SendMessage"))
		}
	case strings.HasSuffix(path, "/pushNotificationConfigs"):
		// The whole create request ({parent, config_id, config}) or the
		// config alone ({name, push_notification_config}): each renames
		// only its own fields.
		if version == "0.3" {
			mds = append(mds, a2apb03.File_a2a_proto.Messages().ByName("CreateTaskPushNotificationConfigRequest"),
				a2apb03.File_a2a_proto.Messages().ByName("TaskPushNotificationConfig"))
		} else {
			mds = append(mds, a2aRequestMessage("CreateTaskPushNotificationConfig"))
		}
	}
	if len(mds) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil // the binding refuses it
	}
	changed := false
	for _, md := range mds {
		if md != nil {
			changed = renameProtoFields(v, md) || changed
		}
	}
	if !changed {
		return nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return out
}
