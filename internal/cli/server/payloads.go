package server

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// defaultPayloadDir is the payload store's folder under the data dir when
// --payload-store is not set.
const defaultPayloadDir = "blobs"

// bindPayloads binds --payload-store. bindTemporal calls it, so serve,
// temporal (for the Web UI's codec), api and worker all have it.
func (c *config) bindPayloads(fs *pflag.FlagSet) {
	cmdutil.Bind(fs).String(&c.PayloadStore, "payload-store", "A2AFLOW_PAYLOAD_STORE", "",
		"where payloads of 256 KiB or more are kept outside Temporal history: a folder, file:///abs/path, or "+
			"s3://bucket/prefix?endpoint=http://host:9000&region=us-east-1 (credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY); "+
			"separate api, worker and temporal processes must all use the same one (a shared folder or S3); "+
			"default <data-dir>/blobs, for api (which has no --data-dir) $"+cmdutil.EnvDataDir+"/blobs or ./data/blobs")
}

// payloadStore opens --payload-store the first time it is called and
// returns the same Store afterwards.
func (c *config) payloadStore() (blobstore.Store, error) {
	if c.payloads != nil {
		return c.payloads, nil
	}
	var store blobstore.Store
	var err error
	if c.PayloadStore == "" {
		dataDir := c.DataDir
		if dataDir == "" {
			dataDir = cmdutil.DataDir()
		}
		store, err = blobstore.NewFileStore(filepath.Join(dataDir, defaultPayloadDir))
	} else {
		store, err = blobstore.Open(c.PayloadStore)
	}
	if err != nil {
		return nil, fmt.Errorf("--payload-store: %w", err)
	}
	c.payloads = store
	return store, nil
}
