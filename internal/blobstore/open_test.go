package blobstore

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	cwd, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		url          string
		wantDescribe string
		wantErr      string
	}{
		{url: "/var/lib/a2aflow/blobs", wantDescribe: "file:///var/lib/a2aflow/blobs"},
		{url: "data/blobs", wantDescribe: "file://" + filepath.ToSlash(filepath.Join(cwd, "data", "blobs"))},
		{url: "file:///srv/blobs", wantDescribe: "file:///srv/blobs"},
		{url: "file://localhost/srv/blobs", wantDescribe: "file:///srv/blobs"},
		{url: "s3://bucket", wantDescribe: "s3://bucket/"},
		{url: "s3://my-bucket/a2aflow/prod/?region=eu-west-1", wantDescribe: "s3://my-bucket/a2aflow/prod/"},
		{url: "s3://bucket/p?endpoint=http://127.0.0.1:9000&region=us-east-1", wantDescribe: "s3://bucket/p/?endpoint=http://127.0.0.1:9000"},
		{url: "s3://bucket/p?endpoint=http://127.0.0.1:9000&access_key_id=AK&secret_access_key=SECRET", wantDescribe: "s3://bucket/p/?endpoint=http://127.0.0.1:9000"},

		{url: "", wantErr: "empty"},
		{url: "file://host/srv/blobs", wantErr: `not host "host"`},
		{url: "file:///", wantErr: "want file:///absolute/path"},
		{url: "file:///srv?x=1", wantErr: "no query"},
		{url: "gs://bucket/p", wantErr: `unknown scheme "gs"`},
		{url: "s3:///prefix", wantErr: "no bucket"},
		{url: "s3://Bad_Bucket/p", wantErr: "bucket"},
		{url: "s3://bucket/p?endpont=http://x", wantErr: `unknown parameter "endpont"`},
		{url: "s3://bucket/p?endpoint=127.0.0.1:9000", wantErr: "want http://host:port"},
		{url: "s3://bucket/p?timeout=soon", wantErr: `timeout "soon"`},
		{url: "s3://bucket/p?access_key_id=AK", wantErr: "secret access key"},
		{url: "s3://bucket/bad key", wantErr: "prefix"},
		{url: "s3://AK:SECRET@bucket/p", wantErr: "environment variables"},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			s, err := Open(tc.url)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Open(%q) error = %v, want one containing %q", tc.url, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "SECRET") {
					t.Errorf("error %q shows the secret", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", tc.url, err)
			}
			if got := s.Describe(); got != tc.wantDescribe {
				t.Errorf("Describe() = %q, want %q", got, tc.wantDescribe)
			}
		})
	}
}
