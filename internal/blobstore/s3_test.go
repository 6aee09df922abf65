package blobstore

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/a2aflow/a2aflow/internal/blobstore/s3test"
)

func startS3Fake(t *testing.T) string { return s3test.Start(t) }

// s3TestEnv points the AWS configuration at fixed test credentials and
// away from the machine's own AWS files and instance metadata.
func s3TestEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AWS_ACCESS_KEY_ID", "test-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// createBucket creates bucket on the S3 server at endpoint.
func createBucket(t *testing.T, endpoint, bucket string) {
	t.Helper()
	s, err := NewS3Store(context.Background(), S3Options{Bucket: bucket, Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
}

func TestS3Store(t *testing.T) {
	s3TestEnv(t)
	endpoint := startS3Fake(t)
	createBucket(t, endpoint, "blobs")

	s, err := Open("s3://blobs/a2aflow/test?endpoint=" + endpoint + "&region=eu-west-1&timeout=20s")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if got, want := s.Describe(), "s3://blobs/a2aflow/test/?endpoint="+endpoint; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
	testStore(t, s)

	// The prefix is part of every object key.
	raw, err := NewS3Store(context.Background(), S3Options{Bucket: "blobs", Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Get(context.Background(), "a2aflow/test/default/payloads/wf-1/abc"); err != nil {
		t.Errorf("object under the prefix: %v", err)
	}

	// Credentials from the URL replace the environment's.
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	s, err = Open("s3://blobs/a2aflow/test?endpoint=" + endpoint + "&access_key_id=k&secret_access_key=s")
	if err != nil {
		t.Fatalf("Open with credentials in the URL: %v", err)
	}
	if got, err := s.Get(context.Background(), "default/payloads/wf-1/abc"); err != nil || string(got) != "hello" {
		t.Errorf("Get with credentials from the URL = %q, %v", got, err)
	}
	if strings.Contains(s.Describe(), "access_key") {
		t.Errorf("Describe() = %q shows credentials", s.Describe())
	}
}

func TestS3StoreMissingBucket(t *testing.T) {
	s3TestEnv(t)
	endpoint := startS3Fake(t)
	s, err := NewS3Store(context.Background(), S3Options{Bucket: "nobody", Endpoint: endpoint, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(context.Background(), "k")
	if err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Get from a missing bucket: %v, want an error that is not ErrNotFound", err)
	}
	if err := s.Put(context.Background(), "k", []byte("x")); err == nil {
		t.Error("Put into a missing bucket succeeded")
	}
}
