package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/llm"
)

// DefaultMaxFileBytes bounds a fetched file when Files.MaxBytes is 0: 4 MiB,
// the API's default request body limit, so a file given by URI is no larger
// than one the caller could have sent inline. Above 256 KiB the payload
// store keeps it out of history.
const DefaultMaxFileBytes = 4 << 20

// ErrTypeFetchRefused is the non-retryable error type of a file URI that
// cannot be fetched: refused by the outbound policy, not http(s), too large,
// or answered with a 4xx status.
const ErrTypeFetchRefused = "FetchRefused"

// FileUse is the outbound use of FetchFile with max bytes per file.
func FileUse(max int64) outbound.Use {
	if max <= 0 {
		max = DefaultMaxFileBytes
	}
	return outbound.Use{Name: "file", MaxBody: max, HeaderTimeout: 30 * time.Second, Timeout: 2 * time.Minute}
}

// Files fetches file parts given by URI for the model to read. Its FetchFile
// method is the activity wire.ActivityFetchFile.
type Files struct {
	// Client makes the requests; it must be the guarded outbound client's
	// (outbound.Client.HTTPClient(FileUse(n))), so a URI a user sends cannot
	// reach an address the worker's policy forbids. Required.
	Client *http.Client
}

// FetchFile GETs in.URI and returns its content and media type (the one
// the part declared, else the response's Content-Type). A URI the policy
// refuses, a non-http(s) URI, a body over the limit and a 4xx status fail
// without retry; a 5xx or a connection failure is retried.
func (f *Files) FetchFile(ctx context.Context, in llm.FetchFileInput) (llm.FetchedFile, error) {
	refuse := func(format string, args ...any) (llm.FetchedFile, error) {
		return llm.FetchedFile{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), ErrTypeFetchRefused, nil)
	}
	if f.Client == nil {
		return refuse("this worker has no client to fetch files with")
	}
	u, err := outbound.ParseURL(in.URI)
	if err != nil {
		return refuse("file %s: %v", outbound.Redact(in.URI), err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return refuse("file %s: %v", outbound.Redact(in.URI), err)
	}
	resp, err := f.Client.Do(req)
	if err != nil {
		if outbound.Refused(err) || errors.Is(err, outbound.ErrBodyTooLarge) {
			return refuse("file %s: %v", outbound.Redact(in.URI), err)
		}
		return llm.FetchedFile{}, fmt.Errorf("file %s: %w", outbound.Redact(in.URI), err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return llm.FetchedFile{}, fmt.Errorf("file %s: the server answered %s", outbound.Redact(in.URI), resp.Status)
	case resp.StatusCode != http.StatusOK:
		return refuse("file %s: the server answered %s", outbound.Redact(in.URI), resp.Status)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		if errors.Is(err, outbound.ErrBodyTooLarge) {
			return refuse("file %s: %v", outbound.Redact(in.URI), err)
		}
		return llm.FetchedFile{}, fmt.Errorf("file %s: %w", outbound.Redact(in.URI), err)
	}
	mt := in.MediaType
	if mt == "" {
		mt = resp.Header.Get("Content-Type")
	}
	return llm.FetchedFile{MediaType: mt, Data: data}, nil
}
