package api

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
