// Package apierror is how the API's errors read, in one place for every
// route: the table of codes (Code: the JSON-RPC code, HTTP status and gRPC
// code of each of a2a's sentinels and of a2aflow's own refusals), the
// answers that carry an error in the shape of each binding (Write, Abort,
// GRPC), and the mapping of what Temporal and the task workflow's
// validators answer to A2A errors: FromTemporal for the A2A methods,
// FromWrite, FromVisibility and FromSchedules for the calls that need
// more, FromResourceUpdate and ResourceError for the REST resources.
package apierror
