package blobstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// countingLimiter counts the permits taken.
type countingLimiter[T any] struct{ permits atomic.Int32 }

func (l *countingLimiter[T]) Permit(ctx context.Context, _ T, fn func() error) error {
	l.permits.Add(1)
	return fn()
}

// bigPayload returns a JSON payload of about n bytes with metadata.
func bigPayload(n int, fill string) *commonpb.Payload {
	return &commonpb.Payload{
		Metadata: map[string][]byte{"encoding": []byte("json/plain"), "note": []byte("kept")},
		Data:     []byte(`"` + strings.Repeat(fill, n/len(fill)) + `"`),
	}
}

// referenceTo returns the payload the SDK writes into history for claim of
// a payload of size bytes.
func referenceTo(t *testing.T, claim converter.StorageDriverClaim, size int) *commonpb.Payload {
	t.Helper()
	data, err := protojson.Marshal(&sdkpb.ExternalStorageReference{DriverName: DriverName, ClaimData: claim.ClaimData})
	if err != nil {
		t.Fatal(err)
	}
	return &commonpb.Payload{
		Metadata:         map[string][]byte{"encoding": []byte(referenceEncoding), "messageType": []byte(referenceMessageType)},
		Data:             data,
		ExternalPayloads: []*commonpb.Payload_ExternalPayloadDetails{{SizeBytes: int64(size)}},
	}
}

// storeAll stores payloads for target through d and returns their claims.
func storeAll(t *testing.T, d *PayloadDriver, target converter.StorageDriverTargetInfo, payloads ...*commonpb.Payload) []converter.StorageDriverClaim {
	t.Helper()
	claims, err := d.Store(converter.StorageDriverStoreContext{Context: context.Background(), Target: target}, payloads)
	if err != nil {
		t.Fatalf("Store: %v", err)
	}
	return claims
}

func TestDriverStoreRetrieve(t *testing.T) {
	dir := t.TempDir()
	store, err := NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := Driver(store)
	if d.Name() != "a2aflow-blobstore" {
		t.Fatalf("Name() = %q: the driver name is in every history and must never change", d.Name())
	}
	a, b := bigPayload(300_000, "a"), bigPayload(400_000, "b")

	cases := []struct {
		name       string
		target     converter.StorageDriverTargetInfo
		wantPrefix string
	}{
		{"workflow", converter.StorageDriverWorkflowInfo{Namespace: "default", WorkflowID: "0f4c5a1e-task", RunID: "r"}, "default/payloads/0f4c5a1e-task/"},
		{"workflow ID with odd bytes", converter.StorageDriverWorkflowInfo{Namespace: "default", WorkflowID: "a/../b c"}, "default/payloads/sha256-"},
		{"standalone activity", converter.StorageDriverActivityInfo{Namespace: "prod", ActivityID: "x"}, "prod/payloads/_shared/"},
		{"no target", nil, "_shared/payloads/_shared/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			limiter := &countingLimiter[*commonpb.Payload]{}
			claims, err := d.Store(converter.StorageDriverStoreContext{Context: context.Background(), Target: tc.target, Limiter: limiter}, []*commonpb.Payload{a, b, a})
			if err != nil {
				t.Fatalf("Store: %v", err)
			}
			if got := limiter.permits.Load(); got != 2 {
				t.Errorf("Store took %d permits, want one per distinct payload (2)", got)
			}
			for i, c := range claims {
				key := c.ClaimData[ClaimKey]
				if !strings.HasPrefix(key, tc.wantPrefix) || len(c.ClaimData) != 1 {
					t.Errorf("claim %d = %v, want only a key starting with %q", i, c.ClaimData, tc.wantPrefix)
				}
			}
			// Content addressing: the same payload, the same key.
			if claims[0].ClaimData[ClaimKey] != claims[2].ClaimData[ClaimKey] || claims[0].ClaimData[ClaimKey] == claims[1].ClaimData[ClaimKey] {
				t.Errorf("claims %v: want equal keys for equal payloads only", claims)
			}

			rlimiter := &countingLimiter[converter.StorageDriverClaim]{}
			got, err := d.Retrieve(converter.StorageDriverRetrieveContext{Context: context.Background(), Limiter: rlimiter}, claims)
			if err != nil {
				t.Fatalf("Retrieve: %v", err)
			}
			// proto.Equal, not cmp.Diff: cmp walks the 700 KB of data
			// byte by byte through reflection, for seconds.
			want := []*commonpb.Payload{a, b, a}
			if len(got) != len(want) {
				t.Fatalf("Retrieve returned %d payloads, want %d", len(got), len(want))
			}
			for i := range want {
				if !proto.Equal(want[i], got[i]) {
					t.Errorf("payload %d: got %d bytes with metadata %q, want the %d stored with %q",
						i, len(got[i].GetData()), got[i].GetMetadata(), len(want[i].GetData()), want[i].GetMetadata())
				}
			}
			if got := rlimiter.permits.Load(); got != 3 {
				t.Errorf("Retrieve took %d permits, want 3", got)
			}
		})
	}

	// Storing the same payload again costs nothing: one file per payload
	// and target.
	var files int
	_ = filepath.WalkDir(dir, func(_ string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			files++
		}
		return err
	})
	if files != 2*len(cases) {
		t.Errorf("%d blobs stored, want %d (2 distinct payloads x %d targets)", files, 2*len(cases), len(cases))
	}
}

func TestDriverRetrieveErrors(t *testing.T) {
	store, err := NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d := Driver(store)
	claims := storeAll(t, d, converter.StorageDriverWorkflowInfo{Namespace: "default", WorkflowID: "wf"}, bigPayload(1000, "x"))
	key := claims[0].ClaimData[ClaimKey]
	// A blob whose bytes do not hash to its key.
	corruptKey := key[:strings.LastIndex(key, "/")+1] + strings.Repeat("0", 64)
	if err := store.Put(context.Background(), corruptKey, []byte("not the payload")); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name    string
		claim   map[string]string
		wantErr error
	}{
		{"missing blob", map[string]string{ClaimKey: key[:len(key)-1] + "f"}, ErrNotFound},
		{"corrupt blob", map[string]string{ClaimKey: corruptKey}, ErrCorrupt},
		{"no key", map[string]string{"path": key}, ErrBadClaim},
		{"not a payload key", map[string]string{ClaimKey: "default/tasks/wf/history/00000001.json"}, ErrBadClaim},
		{"traversal", map[string]string{ClaimKey: "default/payloads/../" + strings.Repeat("0", 64)}, ErrBadClaim},
		{"not a SHA-256", map[string]string{ClaimKey: "default/payloads/wf/abc"}, ErrBadClaim},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.Retrieve(converter.StorageDriverRetrieveContext{Context: context.Background()},
				[]converter.StorageDriverClaim{claims[0], {ClaimData: tc.claim}})
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Retrieve error = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestExternalStorage(t *testing.T) {
	store, err := NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	es := ExternalStorage(store)
	if es.PayloadSizeThreshold != 256*1024 || len(es.Drivers) != 1 || es.Drivers[0].Name() != DriverName {
		t.Errorf("ExternalStorage = %+v, want one %s driver at 256 KiB", es, DriverName)
	}
}

// countingStore counts the Puts reaching a Store.
type countingStore struct {
	Store
	puts atomic.Int32
}

func (s *countingStore) Put(ctx context.Context, key string, data []byte) error {
	s.puts.Add(1)
	return s.Store.Put(ctx, key, data)
}

func TestDriverSkipsRecentPuts(t *testing.T) {
	fs, err := NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := &countingStore{Store: fs}
	d := Driver(store)
	target := converter.StorageDriverWorkflowInfo{Namespace: "default", WorkflowID: "wf"}
	result := bigPayload(300_000, "q")
	for range 5 { // the same big query result, read five times
		storeAll(t, d, target, result)
	}
	storeAll(t, d, target, bigPayload(300_000, "r"))
	if got := store.puts.Load(); got != 2 {
		t.Errorf("%d Puts for 6 stores of 2 distinct payloads, want 2", got)
	}
	// Another process (another driver) puts again; the store keeps one blob.
	storeAll(t, Driver(store), target, result)
	if got := store.puts.Load(); got != 3 {
		t.Errorf("%d Puts after a second driver stored, want 3", got)
	}
}
