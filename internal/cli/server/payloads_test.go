package server

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestPayloadStore(t *testing.T) {
	t.Setenv("A2AFLOW_DATA_DIR", "/srv/a2aflow")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	cases := []struct {
		name         string
		cfg          config
		wantDescribe string
		wantErr      string
	}{
		{name: "default: the data dir's blobs", cfg: config{DataDir: "/var/lib/a2aflow"}, wantDescribe: "file:///var/lib/a2aflow/blobs"},
		{name: "api, without --data-dir", cfg: config{}, wantDescribe: "file:///srv/a2aflow/blobs"},
		{name: "a folder", cfg: config{DataDir: "/x", PayloadStore: "/mnt/shared/blobs"}, wantDescribe: "file:///mnt/shared/blobs"},
		{name: "S3", cfg: config{PayloadStore: "s3://bucket/a2aflow?endpoint=http://127.0.0.1:9000"}, wantDescribe: "s3://bucket/a2aflow/?endpoint=http://127.0.0.1:9000"},
		{name: "bad URL", cfg: config{PayloadStore: "ftp://host/blobs"}, wantErr: `--payload-store: blob store URL "ftp://host/blobs": unknown scheme "ftp"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store, err := tc.cfg.payloadStore()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("payloadStore() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("payloadStore(): %v", err)
			}
			if got := store.Describe(); got != tc.wantDescribe {
				t.Errorf("store = %s, want %s", got, tc.wantDescribe)
			}
			if again, _ := tc.cfg.payloadStore(); again != store {
				t.Errorf("second payloadStore() opened another store")
			}
		})
	}
}

// TestPayloadStoreFlag checks that every process touching payloads has
// --payload-store.
func TestPayloadStoreFlag(t *testing.T) {
	for _, cmd := range []*cobra.Command{newServeCmd(testApp()), newTemporalCmd(testApp()), newAPICmd(testApp()), newWorkerCmd(testApp())} {
		if cmd.Flags().Lookup("payload-store") == nil {
			t.Errorf("a2aflow %s has no --payload-store", cmd.Name())
		}
	}
}
