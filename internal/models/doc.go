// Package models keeps what is not a task in a relational database through
// gorm. Tasks are never stored here: a task IS its Temporal workflow. What
// lives here is configuration, such as the agent directory, and the records
// of side effects that activities make, such as the travel agent's bookings.
//
// The database is SQLite by default: a file under the data dir, in WAL mode
// with synchronous=NORMAL, so a killed process loses nothing committed and an
// OS crash can lose only the last commits, which an activity retry then redoes
// (every write here is idempotent). It is PostgreSQL when Open is given a DSN
// (postgres://…, postgresql://… or key=value with host= or dbname=), for a
// scaled-out deployment where several servers and workers share it. Both
// behave the same through the Store: unique names, byte-order sorting,
// microsecond times, the same errors (ErrNotFound, ErrAlreadyExists).
//
// The agent directory has tenants (see RemoteAgent and Scope): the entries
// the operator added are shared with every task, and those a task added
// belong to the task's owner and are seen by that owner's tasks only. Open
// migrates a directory made before tenants once (migrateAgentScopes).
package models
