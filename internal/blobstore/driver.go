package blobstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// DriverName is the name of the external storage driver, written into
// Temporal history next to every claim (ExternalStorageReference.driverName).
// It must never change: the SDK finds the driver of a stored payload by this
// name, so a new name would leave every running task, and every replay of
// an old one, with references no driver can resolve. It is the same for
// every kind of Store: moving blobs from a folder to S3 is a copy of the
// keys, not a new driver.
const DriverName = "a2aflow-blobstore"

// driverType is the driver's Type(), the kind of implementation.
const driverType = "a2aflow-blobstore"

// PayloadSizeThreshold is the serialized size at and above which a payload
// goes to the Store instead of into history: the SDK's default of 256 KiB,
// well under Temporal's 2 MB limit per payload.
const PayloadSizeThreshold = 256 << 10

// ClaimKey is the one entry of a claim's ClaimData: the Store key of the
// payload.
const ClaimKey = "key"

// payloadsSegment is the second segment of every payload key; keys without
// it are not payloads (task history pages, for example) and are never
// resolved from a claim.
const payloadsSegment = "payloads"

// sharedSegment stands for an unknown namespace or workflow in a key.
const sharedSegment = "_shared"

// maxIDSegment bounds a workflow ID used as a key segment as it is; longer
// (or unusual) IDs are replaced by their SHA-256.
const maxIDSegment = 200

// ErrBadClaim is returned (wrapped) for a claim this driver did not write:
// no key, or a key outside the payload layout.
var ErrBadClaim = errors.New("not a claim of " + DriverName)

// ErrCorrupt is returned (wrapped) when a stored blob does not match the
// SHA-256 in its key, or is not a Temporal payload.
var ErrCorrupt = errors.New("stored payload is corrupt")

// PayloadDriver is the Temporal SDK storage driver (converter.StorageDriver)
// that keeps large payloads in a Store. A blob is the payload itself,
// proto-marshalled deterministically (metadata included), under the
// content-addressed key
//
//	<namespace>/payloads/<workflow ID>/<sha256 of the blob, hex>
//
// so storing the same payload twice costs no space. The claim written into
// history is {"key": "<that key>"}.
//
// A payload this driver stored in the last minute is not put again: query
// results are stored on every query, and a poller would otherwise upload
// the same blob again and again.
type PayloadDriver struct {
	store  Store
	recent recentKeys
}

var _ converter.StorageDriver = (*PayloadDriver)(nil)

// Driver returns the storage driver over store.
func Driver(store Store) *PayloadDriver {
	return &PayloadDriver{store: store, recent: recentKeys{at: map[string]time.Time{}}}
}

// ExternalStorage returns the SDK option (client.Options.ExternalStorage,
// worker.WorkflowReplayerOptions.ExternalStorage) that stores payloads of
// PayloadSizeThreshold bytes or more in store. Every client and worker of a
// namespace must use the same store: each reads what the others wrote.
func ExternalStorage(store Store) converter.ExternalStorage {
	return converter.ExternalStorage{
		Drivers:              []converter.StorageDriver{Driver(store)},
		PayloadSizeThreshold: PayloadSizeThreshold,
	}
}

// Name returns DriverName.
func (d *PayloadDriver) Name() string { return DriverName }

// Type returns the driver's implementation kind.
func (d *PayloadDriver) Type() string { return driverType }

// Store puts each payload into the store, in parallel within the SDK's
// limiter, and returns its claim. Equal payloads are put once.
func (d *PayloadDriver) Store(ctx converter.StorageDriverStoreContext, payloads []*commonpb.Payload) ([]converter.StorageDriverClaim, error) {
	prefix := keyPrefix(ctx.Target)
	claims := make([]converter.StorageDriverClaim, len(payloads))
	type blob struct {
		key     string
		data    []byte
		payload *commonpb.Payload
	}
	var puts []blob
	seen := map[string]bool{}
	for i, p := range payloads {
		data, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("marshal payload: %w", err)
		}
		sum := sha256.Sum256(data)
		key := prefix + hex.EncodeToString(sum[:])
		claims[i] = converter.StorageDriverClaim{ClaimData: map[string]string{ClaimKey: key}}
		if !seen[key] && !d.recent.has(key) {
			puts = append(puts, blob{key, data, p})
		}
		seen[key] = true
	}
	limiter := ctx.GetLimiter()
	err := forEach(len(puts), func(i int) error {
		b := puts[i]
		if err := limiter.Permit(ctx.Context, b.payload, func() error { return d.store.Put(ctx.Context, b.key, b.data) }); err != nil {
			return err
		}
		d.recent.add(b.key)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return claims, nil
}

// Retrieve gets each claimed payload from the store, in parallel within the
// SDK's limiter, and checks it against the SHA-256 in its key.
func (d *PayloadDriver) Retrieve(ctx converter.StorageDriverRetrieveContext, claims []converter.StorageDriverClaim) ([]*commonpb.Payload, error) {
	limiter := ctx.GetLimiter()
	payloads := make([]*commonpb.Payload, len(claims))
	err := forEach(len(claims), func(i int) error {
		var p *commonpb.Payload
		err := limiter.Permit(ctx.Context, claims[i], func() error {
			var err error
			p, err = d.retrieve(ctx.Context, claims[i])
			return err
		})
		payloads[i] = p
		return err
	})
	if err != nil {
		return nil, err
	}
	return payloads, nil
}

// retrieve gets and checks one claimed payload.
func (d *PayloadDriver) retrieve(ctx context.Context, claim converter.StorageDriverClaim) (*commonpb.Payload, error) {
	key := claim.ClaimData[ClaimKey]
	sum, err := payloadKeySum(key)
	if err != nil {
		return nil, err
	}
	blob, err := d.store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if got := sha256.Sum256(blob); hex.EncodeToString(got[:]) != sum {
		return nil, fmt.Errorf("%w: %s in %s has SHA-256 %x", ErrCorrupt, key, d.store.Describe(), got)
	}
	p := &commonpb.Payload{}
	if err := proto.Unmarshal(blob, p); err != nil {
		return nil, fmt.Errorf("%w: %s in %s: %v", ErrCorrupt, key, d.store.Describe(), err)
	}
	return p, nil
}

// keyPrefix returns "<namespace>/payloads/<workflow ID>/" for a workflow
// target, else "<namespace or _shared>/payloads/_shared/".
func keyPrefix(target converter.StorageDriverTargetInfo) string {
	namespace, owner := sharedSegment, sharedSegment
	switch t := target.(type) {
	case converter.StorageDriverWorkflowInfo:
		namespace, owner = keySegment(t.Namespace), keySegment(t.WorkflowID)
	case converter.StorageDriverActivityInfo:
		namespace = keySegment(t.Namespace)
	}
	return namespace + "/" + payloadsSegment + "/" + owner + "/"
}

// keySegment returns id itself when it is a short valid key segment, else
// "sha256-" and its SHA-256: workflow IDs may hold any character.
func keySegment(id string) string {
	if id == "" {
		return sharedSegment
	}
	if len(id) <= maxIDSegment && !strings.Contains(id, "/") && ValidateKey(id) == nil {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256-" + hex.EncodeToString(sum[:])
}

// payloadKeySum checks that key has the payload layout and returns its
// SHA-256 segment.
func payloadKeySum(key string) (string, error) {
	segs := strings.Split(key, "/")
	if len(segs) != 4 || segs[1] != payloadsSegment || ValidateKey(key) != nil {
		return "", fmt.Errorf("%w: key %q", ErrBadClaim, key)
	}
	sum := segs[3]
	if _, err := hex.DecodeString(sum); err != nil || len(sum) != 2*sha256.Size || strings.ToLower(sum) != sum {
		return "", fmt.Errorf("%w: key %q does not end in a SHA-256", ErrBadClaim, key)
	}
	return sum, nil
}

// Bounds of recentKeys: blobs are immutable, and a minute is far shorter
// than any deletion of a task's blobs, so a key seen stored is still there.
const (
	recentTTL  = time.Minute
	recentKeep = 4096
)

// recentKeys remembers the keys stored in the last recentTTL.
type recentKeys struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (r *recentKeys) has(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.at[key]
	return ok && time.Since(t) < recentTTL
}

func (r *recentKeys) add(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.at) >= recentKeep {
		clear(r.at)
	}
	r.at[key] = time.Now()
}

// forEach runs fn(0..n-1) concurrently (the SDK's limiter bounds the work
// inside) and returns their errors, joined.
func forEach(n int, fn func(i int) error) error {
	switch n {
	case 0:
		return nil
	case 1:
		return fn(0)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
