package workflows

// Names the external tests of this package read the task workflow's
// continue-as-new state by (export_test.go is compiled into tests only).
type (
	ContinuedTask = continuedTask
	RunInput      = runInput
	ParkedWait    = parkedWait
	SendResult    = sendResult
)
