package blobstore

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func TestCodecHandler(t *testing.T) {
	store, err := NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d := Driver(store)
	small, big := bigPayload(300_000, "s"), bigPayload(1_500_000, "b")
	claims := storeAll(t, d, converter.StorageDriverWorkflowInfo{Namespace: "default", WorkflowID: "wf"}, small, big)
	smallRef, bigRef := referenceTo(t, claims[0], proto.Size(small)), referenceTo(t, claims[1], proto.Size(big))
	inline := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"inline"`)}
	missingRef := referenceTo(t, converter.StorageDriverClaim{ClaimData: map[string]string{ClaimKey: "default/payloads/wf/" + strings.Repeat("a", 64)}}, 10)
	historyRef := referenceTo(t, converter.StorageDriverClaim{ClaimData: map[string]string{ClaimKey: "default/tasks/wf/history/00000001.json"}}, 10)
	otherNSRef := referenceTo(t, converter.StorageDriverClaim{ClaimData: map[string]string{ClaimKey: "other/payloads/wf/" + strings.Repeat("a", 64)}}, 10)
	noSizeRef := proto.Clone(smallRef).(*commonpb.Payload)
	noSizeRef.ExternalPayloads = nil

	srv := httptest.NewServer(CodecHandler(store, CodecOptions{
		AllowedOrigins: []string{"https://ui.example.com"},
		Logger:         slog.New(slog.DiscardHandler),
	}))
	defer srv.Close()

	cases := []struct {
		name       string
		method     string
		path       string
		header     map[string]string
		body       []*commonpb.Payload
		rawBody    string
		wantStatus int
		want       []*commonpb.Payload
		wantHeader map[string]string
	}{
		{name: "decode resolves references", path: "/codec/decode", body: []*commonpb.Payload{smallRef, inline, bigRef},
			wantStatus: 200, want: []*commonpb.Payload{small, inline, big}},
		{name: "decode passes other payloads through", path: "/codec/decode", body: []*commonpb.Payload{inline},
			wantStatus: 200, want: []*commonpb.Payload{inline}},
		{name: "UI decode inlines up to 1 MiB, keeps bigger references", path: "/codec/decode?preserveStorageRefs=true",
			header: map[string]string{"X-Namespace": "default"}, body: []*commonpb.Payload{smallRef, bigRef, noSizeRef},
			wantStatus: 200, want: []*commonpb.Payload{small, bigRef, noSizeRef}},
		{name: "download resolves", path: "/codec/download?preserveStorageRefs=true", body: []*commonpb.Payload{bigRef},
			wantStatus: 200, want: []*commonpb.Payload{big}},
		{name: "download refuses a non-reference", path: "/codec/download", body: []*commonpb.Payload{inline}, wantStatus: 400},
		{name: "encode is the identity", path: "/codec/encode", body: []*commonpb.Payload{inline, smallRef},
			wantStatus: 200, want: []*commonpb.Payload{inline, smallRef}},
		{name: "unknown key", path: "/codec/decode", body: []*commonpb.Payload{inline, missingRef}, wantStatus: 404},
		{name: "not a payload key", path: "/codec/decode", body: []*commonpb.Payload{historyRef}, wantStatus: 400},
		{name: "other namespace", path: "/codec/decode", header: map[string]string{"X-Namespace": "default"},
			body: []*commonpb.Payload{otherNSRef}, wantStatus: 403},
		{name: "malformed body", path: "/codec/decode", rawBody: `{"payloads": 7}`, wantStatus: 400},
		{name: "not JSON", path: "/codec/decode", header: map[string]string{"Content-Type": "text/plain"},
			body: []*commonpb.Payload{inline}, wantStatus: 415},
		{name: "GET", method: "GET", path: "/codec/decode", wantStatus: 405},
		{name: "unknown operation", path: "/codec/explode", body: []*commonpb.Payload{inline}, wantStatus: 404},
		{name: "other origin", path: "/codec/decode", header: map[string]string{"Origin": "https://evil.example.com"},
			body: []*commonpb.Payload{smallRef}, wantStatus: 403},
		{name: "allowed origin", path: "/codec/decode", header: map[string]string{"Origin": "https://ui.example.com"},
			body: []*commonpb.Payload{inline}, wantStatus: 200, want: []*commonpb.Payload{inline},
			wantHeader: map[string]string{"Access-Control-Allow-Origin": "https://ui.example.com", "Access-Control-Allow-Credentials": "true"}},
		{name: "preflight", method: "OPTIONS", path: "/codec/decode",
			header: map[string]string{"Origin": "https://ui.example.com", "Access-Control-Request-Method": "POST"}, wantStatus: 204,
			wantHeader: map[string]string{"Access-Control-Allow-Origin": "https://ui.example.com", "Access-Control-Allow-Methods": "POST, OPTIONS",
				"Access-Control-Allow-Headers": "Content-Type, X-Namespace, Authorization, Authorization-Extras"}},
		{name: "same origin", path: "/codec/decode", header: map[string]string{"Origin": srv.URL, "Sec-Fetch-Site": "same-origin"},
			body: []*commonpb.Payload{smallRef}, wantStatus: 200, want: []*commonpb.Payload{small}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.rawBody)
			if tc.body != nil {
				if body, err = protojson.Marshal(&commonpb.Payloads{Payloads: tc.body}); err != nil {
					t.Fatal(err)
				}
			}
			method := tc.method
			if method == "" {
				method = "POST"
			}
			req, err := http.NewRequest(method, srv.URL+tc.path, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			respBody, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, bytes.TrimSpace(respBody[:min(len(respBody), 300)]), tc.wantStatus)
			}
			gotHeader := map[string]string{}
			for k := range tc.wantHeader {
				gotHeader[k] = resp.Header.Get(k)
			}
			if diff := cmp.Diff(tc.wantHeader, gotHeader, cmpEmptyMap); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			if tc.want == nil {
				return
			}
			var got commonpb.Payloads
			if err := protojson.Unmarshal(respBody, &got); err != nil {
				t.Fatalf("response %.200s: %v", respBody, err)
			}
			if len(got.Payloads) != len(tc.want) {
				t.Fatalf("%d payloads returned, want %d", len(got.Payloads), len(tc.want))
			}
			for i := range tc.want {
				if !proto.Equal(tc.want[i], got.Payloads[i]) {
					t.Errorf("payload %d: got %.120s, want %.120s", i, got.Payloads[i], tc.want[i])
				}
			}
		})
	}
}

// cmpEmptyMap treats a nil and an empty map as equal.
var cmpEmptyMap = cmp.FilterValues(func(a, b map[string]string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())
