package blobstore

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// s3Params are the query parameters an s3:// URL may carry.
var s3Params = map[string]bool{
	"endpoint": true, "region": true, "timeout": true,
	"access_key_id": true, "secret_access_key": true, "session_token": true,
}

// Open returns the Store a URL names:
//
//   - "file:///var/lib/a2aflow/blobs" or a plain path ("./data/blobs",
//     "/var/lib/a2aflow/blobs"): a FileStore in that folder;
//   - "s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1":
//     an S3Store. Query parameters (all optional): endpoint (an
//     S3-compatible server, path-style addressing), region, timeout (per
//     operation, e.g. "30s"), and access_key_id, secret_access_key and
//     session_token, which override the AWS environment variables (prefer
//     those: a URL ends up in process listings and shell history).
//
// Open makes no request to S3.
func Open(rawURL string) (Store, error) {
	if rawURL == "" {
		return nil, fmt.Errorf("blob store URL is empty")
	}
	scheme, _, hasScheme := strings.Cut(rawURL, "://")
	if !hasScheme {
		return NewFileStore(rawURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("blob store URL: %w", err)
	}
	switch strings.ToLower(scheme) {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("blob store URL %q: file URLs name a local folder, file:///abs/path, not host %q", rawURL, u.Host)
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("blob store URL %q: a file URL takes no query or fragment", rawURL)
		}
		if u.Path == "" || u.Path == "/" {
			return nil, fmt.Errorf("blob store URL %q: want file:///absolute/path (or a plain relative path without file://)", rawURL)
		}
		return NewFileStore(filepath.FromSlash(u.Path))
	case "s3":
		return openS3(rawURL, u)
	default:
		return nil, fmt.Errorf("blob store URL %q: unknown scheme %q, want a folder, file:///abs/path or s3://bucket/prefix", rawURL, scheme)
	}
}

func openS3(rawURL string, u *url.URL) (Store, error) {
	// The error messages name the URL without its query: it may hold
	// credentials.
	safe := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	if u.Host == "" {
		return nil, fmt.Errorf("blob store URL %s: no bucket, want s3://bucket/prefix", safe)
	}
	if !validBucket(u.Host) {
		return nil, fmt.Errorf("blob store URL %s: bucket %q: want 3 to 63 of [a-z0-9.-]", safe, u.Host)
	}
	if u.User != nil {
		return nil, fmt.Errorf("blob store URL %s: credentials go in the AWS environment variables, not before the bucket", safe)
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("blob store URL %s: a fragment (#...) is not allowed", safe)
	}
	q := u.Query()
	for name := range q {
		if !s3Params[name] {
			return nil, fmt.Errorf("blob store URL %s: unknown parameter %q (want endpoint, region, timeout, access_key_id, secret_access_key, session_token)", safe, name)
		}
	}
	opts := S3Options{
		Bucket:          u.Host,
		Prefix:          u.Path,
		Endpoint:        q.Get("endpoint"),
		Region:          q.Get("region"),
		AccessKeyID:     q.Get("access_key_id"),
		SecretAccessKey: q.Get("secret_access_key"),
		SessionToken:    q.Get("session_token"),
	}
	if t := q.Get("timeout"); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("blob store URL %s: timeout %q: want a positive duration such as 30s", safe, t)
		}
		opts.Timeout = d
	}
	s, err := NewS3Store(context.Background(), opts)
	if err != nil {
		return nil, fmt.Errorf("blob store URL %s: %w", safe, err)
	}
	return s, nil
}

// validBucket reports whether name is a plausible S3 bucket name; S3 itself
// has the last word.
func validBucket(name string) bool {
	if len(name) < 3 || len(name) > 63 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}
