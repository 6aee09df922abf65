// Package resources serves a2aflow's REST resources beside A2A
// (Resources): the approvals (GET /approvals, POST
// /approvals/{id}/decision) and their inbox page, the waitpoints (GET and
// POST /waitpoints/{id}), the schedules (Temporal Schedules whose action
// starts the task workflow; /schedules), the LLM usage (/usage) and the
// web console (/console: a page whose scripts use the routes above and the
// agents' HTTP+JSON binding, with the user's credentials). Who
// may read or change each is the tasks' rule (workflows/access.go).
package resources
