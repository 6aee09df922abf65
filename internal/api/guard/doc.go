// Package guard is what every way into the API passes before it reaches an
// agent or a resource: Guard's Gin middleware for HTTP requests (the access
// log, the request's span, the host check, the body limit, authentication
// between two rate limits, the CSRF guard of decisions), AdmitCall and
// TakeStreamSlot for gRPC calls, OpenStream for the requests that stream.
// Authentication (Authenticator) says who the caller is (Principal,
// CallerOf) and its permissions which agents it may use (PermitAgent);
// ApproverHeader and ApproverGroups name who reads and decides approvals.
// The request log
// (RequestLog) carries what the API learns of a request to its log lines,
// its span and its metrics.
package guard
