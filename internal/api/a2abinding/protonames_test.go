package a2abinding

import (
	"encoding/json"
	"testing"
)

// TestProtoFieldNames checks which fields protoFieldNames renames: proto
// names of the request message's fields, nested messages and lists of them,
// never the caller's own data (metadata, data parts), never a name whose
// JSON form is there too; numbers as written.
func TestProtoFieldNames(t *testing.T) {
	for _, tt := range []struct {
		name, method, params, want string
	}{
		{"GetTask", "GetTask", `{"id":"t","history_length":0}`, `{"historyLength":0,"id":"t"}`},
		{"push config", "CreateTaskPushNotificationConfig", `{"task_id":"t","url":"https://h/x","token":"k"}`,
			`{"taskId":"t","token":"k","url":"https://h/x"}`},
		{"ListTasks", "ListTasks", `{"context_id":"c","page_size":5,"include_artifacts":true}`,
			`{"contextId":"c","includeArtifacts":true,"pageSize":5}`},
		{"nested, data untouched", "SendMessage",
			`{"message":{"message_id":"m","task_id":"t","role":"ROLE_USER","parts":[{"data":{"snake_key":12345678901234567890}},{"text":"x","media_type":"text/plain"}],"metadata":{"my_key":1}},"configuration":{"history_length":2,"return_immediately":true}}`,
			`{"configuration":{"historyLength":2,"returnImmediately":true},"message":{"messageId":"m","metadata":{"my_key":1},"parts":[{"data":{"snake_key":12345678901234567890}},{"mediaType":"text/plain","text":"x"}],"role":"ROLE_USER","taskId":"t"}}`},
		{"both names: left alone", "GetTask", `{"id":"t","historyLength":1,"history_length":9}`, ""},
		{"camelCase only: untouched", "GetTask", `{"id":"t","historyLength":1}`, ""},
		{"unknown snake field: untouched", "GetTask", `{"id":"t","no_such_field":1}`, ""},
		{"unknown method", "NoSuchMethod", `{"history_length":1}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := protoFieldNames(tt.method, json.RawMessage(tt.params))
			if tt.want == "" {
				if got != nil {
					t.Fatalf("renamed to %s, want untouched", got)
				}
				return
			}
			if string(got) != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestRESTProtoFieldNames03Parts checks that the parts of a 0.3 message
// written as a2a-sdk's 0.3 client writes them (0.3.0's "content", proto
// names inside) get their JSON names: a file part's bytes and media type
// reach a2a-go's 0.3 binding.
func TestRESTProtoFieldNames03Parts(t *testing.T) {
	body := `{"request":{"message_id":"m","role":"ROLE_USER","content":[{"file":{"file_with_bytes":"iVBORw0KGgo=","mime_type":"image/png","name":"x.png"}},{"data":{"data":{"snake_key":1}}}]},"configuration":{"blocking":true}}`
	want := `{"configuration":{"blocking":true},"message":{"content":[{"file":{"fileWithBytes":"iVBORw0KGgo=","mimeType":"image/png","name":"x.png"}},{"data":{"data":{"snake_key":1}}}],"messageId":"m","role":"ROLE_USER"}}`
	if got := restProtoFieldNames("0.3", "POST", "/v1/message:send", []byte(body)); string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
