// Package blobstore keeps large, immutable blobs outside Temporal history:
// the payloads of task workflows over [PayloadSizeThreshold] (the claim
// check pattern) and, for the workflows package, pages of task history that
// no longer fit in a workflow's state.
//
// # Why
//
// Temporal refuses a payload over 2 MB and terminates a workflow whose
// history passes 50 MB. File parts, artifacts and long LLM transcripts
// reach those limits, so a2aflow hands every payload of 256 KiB or more to
// the Temporal SDK's external storage ([converter.ExternalStorage], set by
// [ExternalStorage] on client.Options and, for replays, on
// worker.WorkflowReplayerOptions): the SDK stores the payload through
// [PayloadDriver] and writes only a reference into history (a payload with
// encoding "json/protobuf" and messageType
// "temporal.api.sdk.v1.ExternalStorageReference"). That covers workflow
// inputs and results, update arguments and results, query results,
// activity inputs and results, signals and continue-as-new inputs.
// Workers, API processes and the Web UI's codec (see [CodecHandler]) must
// all use the same [Store]: each reads what the others wrote.
//
// # Stores
//
// [Open] turns a URL into a [Store]: a folder ([FileStore], the default of
// `a2aflow serve`: <data-dir>/blobs) or an S3 bucket ([S3Store]: AWS or any
// S3-compatible server such as MinIO, in path-style addressing).
//
// Keys are slash-separated segments of [A-Za-z0-9._-]; no segment may be
// empty, "." or "..", or start with a dot ([ValidateKey]), so a key can
// never leave the store's folder or prefix. Put never replaces different
// bytes ([ErrConflict]); putting the same bytes again succeeds.
//
// # Payload keys
//
// A payload is stored as its deterministic protobuf encoding (metadata
// included) under
//
//	<namespace>/payloads/<workflow ID>/<SHA-256 of the blob, hex>
//
// Content addressing makes storing the same payload twice (the same big
// query result read twice, a retried activity) free, lets Retrieve check
// the blob against its key ([ErrCorrupt]), and keeps one task's blobs in
// one folder, to be deleted with it. A workflow ID that is not a valid
// short key segment is replaced by "sha256-" and its hash; payloads stored
// outside a workflow (standalone activities, clients without a target) go
// under "<namespace or _shared>/payloads/_shared/". The claim written into
// history is {"key": "<key>"}, and a claim resolves only to a key of this
// layout.
//
// # The driver name
//
// [DriverName], "a2aflow-blobstore", is written into history next to every
// claim, and the SDK finds the driver of a stored payload by it. It must
// never change: under a new name every existing reference, in running tasks
// and in the recorded histories that replay tests and Temporal replay, would
// have no driver and fail the workflow task. It does not depend on the kind
// of store, so moving from a folder to S3 is copying the keys.
//
// # Durability of the file store
//
// [FileStore.Put] writes a temporary file next to the blob, fsyncs it,
// renames it into place and fsyncs the folder before it returns; the SDK
// writes the reference into history only after that. So a blob is never
// seen half-written, and a reference in history never points to a blob a
// crash or power loss can still take away. The folder is as durable as its
// disk: back it up with the Temporal database (both live under the data
// dir), and for separate api and worker processes use a folder they share
// or S3. Nothing is deleted yet: blobs outlive the retention of their
// workflows until a cleanup removes <namespace>/payloads/<workflow ID>/.
package blobstore
