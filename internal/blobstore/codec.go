package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
)

// Defaults of CodecOptions.
const (
	defaultInlineLimit     = 1 << 20
	defaultMaxRequestBytes = 8 << 20
)

// Payload metadata of an external storage reference, as the SDK writes it.
var (
	referenceEncoding    = "json/protobuf"
	referenceMessageType = string((&sdkpb.ExternalStorageReference{}).ProtoReflect().Descriptor().FullName())
)

// CodecOptions configures CodecHandler. The zero value works.
type CodecOptions struct {
	// AllowedOrigins are the browser origins, besides the handler's own,
	// that may call it (CORS), e.g. "https://temporal-ui.example.com".
	// Default: none, for a codec served on the UI's own origin.
	AllowedOrigins []string

	// InlineLimit is the stored size up to which /decode resolves a
	// reference even when the caller asks to keep references
	// (?preserveStorageRefs=true, as the Temporal Web UI does), so the UI
	// shows such payloads in place; larger ones stay references, shown by
	// the UI with their size and a download button (/download). Default
	// 1 MiB; negative keeps every reference the caller asks to keep.
	InlineLimit int64

	// MaxRequestBytes bounds a request body. Default 8 MiB.
	MaxRequestBytes int64

	// Logger receives failed retrievals. Default slog.Default().
	Logger *slog.Logger
}

// CodecHandler returns the "codec server" of the Temporal Web UI and CLI for
// payloads in store: POST .../decode turns the external storage references
// of DriverName into the stored payloads and passes everything else
// through; POST .../download does the same for references only; POST
// .../encode returns the payloads as they are. Bodies are
// {"payloads": [...]} in protobuf JSON, as the Temporal codec protocol has
// it. Mount it under any path: it matches the last path segment.
//
// A claim resolves only to a payload key (<namespace>/payloads/...), and
// only under the request's namespace (X-Namespace) when one is sent, so
// the handler cannot be used to read other blobs. Status codes: 400 for a
// malformed request, 404 for a missing blob, 415 without
// Content-Type: application/json (which makes every cross-origin browser
// call preflighted), 403 for a browser origin not allowed, 502 when the
// store fails.
func CodecHandler(store Store, opts CodecOptions) http.Handler {
	if opts.InlineLimit == 0 {
		opts.InlineLimit = defaultInlineLimit
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = defaultMaxRequestBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &codecHandler{driver: Driver(store), opts: opts}
}

type codecHandler struct {
	driver *PayloadDriver
	opts   CodecOptions
}

// codecError is an error with the HTTP status it answers with.
type codecError struct {
	status int
	err    error
}

func (e *codecError) Error() string { return e.err.Error() }
func (e *codecError) Unwrap() error { return e.err }

func (h *codecHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.cors(w, r) {
		http.Error(w, "origin not allowed", http.StatusForbidden)
		return
	}
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	op := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	if op != "decode" && op != "encode" && op != "download" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		http.Error(w, "want Content-Type: application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxRequestBytes))
	if err != nil {
		http.Error(w, "read request: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	var in commonpb.Payloads
	if err := protojson.Unmarshal(body, &in); err != nil {
		http.Error(w, "want {\"payloads\": [...]}: "+err.Error(), http.StatusBadRequest)
		return
	}
	out := in.Payloads
	switch op {
	case "decode":
		keepAbove := int64(-1) // resolve every reference
		if strings.EqualFold(r.URL.Query().Get("preserveStorageRefs"), "true") {
			keepAbove = h.opts.InlineLimit
		}
		out, err = h.resolve(r.Context(), r.Header.Get("X-Namespace"), in.Payloads, keepAbove, false)
	case "download":
		out, err = h.resolve(r.Context(), r.Header.Get("X-Namespace"), in.Payloads, -1, true)
	}
	if err != nil {
		status := http.StatusBadGateway
		if ce, ok := errors.AsType[*codecError](err); ok {
			status = ce.status
		}
		if status >= 500 || status == http.StatusNotFound {
			h.opts.Logger.Warn("codec: payload not resolved", "store", h.driver.store.Describe(), "error", err)
		}
		http.Error(w, err.Error(), status)
		return
	}
	resp, err := protojson.Marshal(&commonpb.Payloads{Payloads: out})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(resp)
}

// resolve replaces the references among payloads by what they refer to,
// except those stored with more than keepAbove bytes (keepAbove < 0: none
// kept). With onlyRefs, a payload that is not a reference is an error.
func (h *codecHandler) resolve(ctx context.Context, namespace string, payloads []*commonpb.Payload, keepAbove int64, onlyRefs bool) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	var claims []converter.StorageDriverClaim
	var at []int
	for i, p := range payloads {
		out[i] = p
		ref, ok, err := storageReference(p)
		switch {
		case err != nil:
			return nil, &codecError{http.StatusBadRequest, fmt.Errorf("payload %d: %w", i, err)}
		case !ok && onlyRefs:
			return nil, &codecError{http.StatusBadRequest, fmt.Errorf("payload %d is not an external storage reference", i)}
		case !ok:
			continue
		case ref.GetDriverName() != DriverName:
			// Another driver's reference: not ours to resolve.
			if onlyRefs {
				return nil, &codecError{http.StatusBadRequest, fmt.Errorf("payload %d: driver %q, not %q", i, ref.GetDriverName(), DriverName)}
			}
			continue
		case keepAbove >= 0 && storedSize(p) > keepAbove:
			continue
		}
		key := ref.GetClaimData()[ClaimKey]
		if _, err := payloadKeySum(key); err != nil {
			return nil, &codecError{http.StatusBadRequest, fmt.Errorf("payload %d: %w", i, err)}
		}
		if ns, _, _ := strings.Cut(key, "/"); namespace != "" && ns != keySegment(namespace) && ns != sharedSegment {
			return nil, &codecError{http.StatusForbidden, fmt.Errorf("payload %d: key %q is not in namespace %q", i, key, namespace)}
		}
		claims = append(claims, converter.StorageDriverClaim{ClaimData: map[string]string{ClaimKey: key}})
		at = append(at, i)
	}
	if len(claims) == 0 {
		return out, nil
	}
	got, err := h.driver.Retrieve(converter.StorageDriverRetrieveContext{Context: ctx}, claims)
	if err != nil {
		status := http.StatusBadGateway
		switch {
		case errors.Is(err, ErrNotFound):
			status = http.StatusNotFound
		case errors.Is(err, ErrCorrupt):
			status = http.StatusInternalServerError
		}
		return nil, &codecError{status, err}
	}
	for j, i := range at {
		out[i] = got[j]
	}
	return out, nil
}

// storageReference returns the external storage reference p holds, if it is
// one.
func storageReference(p *commonpb.Payload) (*sdkpb.ExternalStorageReference, bool, error) {
	md := p.GetMetadata()
	if string(md["encoding"]) != referenceEncoding || string(md["messageType"]) != referenceMessageType {
		return nil, false, nil
	}
	ref := &sdkpb.ExternalStorageReference{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(p.GetData(), ref); err != nil {
		return nil, false, fmt.Errorf("external storage reference: %w", err)
	}
	return ref, true, nil
}

// storedSize returns the size the SDK recorded for a reference's payload,
// or an unknown (huge) size when it recorded none.
func storedSize(p *commonpb.Payload) int64 {
	var n int64
	for _, e := range p.GetExternalPayloads() {
		n += e.GetSizeBytes()
	}
	if n == 0 {
		return 1 << 62
	}
	return n
}

// cors sets the CORS headers for an allowed browser origin and reports
// whether the request may go on: no Origin (not a browser, or a same-origin
// GET), the handler's own origin, or one of AllowedOrigins.
func (h *codecHandler) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	w.Header().Add("Vary", "Origin")
	if u, err := url.Parse(origin); err == nil && u.Host == r.Host && r.Header.Get("Sec-Fetch-Site") != "cross-site" {
		return true
	}
	if !slices.Contains(h.opts.AllowedOrigins, origin) {
		return false
	}
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", origin)
	hd.Set("Access-Control-Allow-Credentials", "true")
	hd.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	hd.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization, Authorization-Extras")
	hd.Set("Access-Control-Max-Age", "600")
	return true
}

// Resolve returns payloads with the references of DriverName among them
// replaced by the payloads they refer to in store, for a reader of a
// history that decodes its payloads as the SDK would (the API's task
// timeline); namespace, when set, keeps the references to that namespace's
// keys (and the shared ones). A payload that is no reference is returned
// as it is.
func Resolve(ctx context.Context, store Store, namespace string, payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	h := &codecHandler{driver: Driver(store)}
	return h.resolve(ctx, namespace, payloads, -1, false)
}

// IsReference reports whether p is an external storage reference (of any
// driver) rather than a payload itself.
func IsReference(p *commonpb.Payload) bool {
	_, ok, err := storageReference(p)
	return ok || err != nil
}
