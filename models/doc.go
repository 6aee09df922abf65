// Package models keeps what is not a task in a relational database through
// gorm: SQLite by default (a file under the data dir), PostgreSQL by DSN in a
// scaled-out deployment. Tasks are never stored here: a task IS its Temporal
// workflow. What lives here is configuration and the records of side effects
// that activities make, such as the travel agent's bookings.
package models
