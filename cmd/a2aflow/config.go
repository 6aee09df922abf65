package main

import (
	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/workflows"
)

// config holds every setting of the a2aflow processes. Each field is bound
// to a flag whose default comes from an A2AFLOW_* environment variable.
type config struct {
	HTTPAddr     string
	PublicURL    string
	DataDir      string
	TemporalAddr string
	UIAddr       string
	Namespace    string
	TaskQueue    string
	DatabaseDSN  string
	LogLevel     string
}

func (c *config) bindHTTP(fs *pflag.FlagSet) {
	fs.StringVar(&c.HTTPAddr, "http-addr", env("A2AFLOW_HTTP_ADDR", ":8080"), "A2A HTTP API listen address (A2AFLOW_HTTP_ADDR)")
	fs.StringVar(&c.PublicURL, "public-url", env("A2AFLOW_PUBLIC_URL", ""), "base URL published in agent cards; default: each request's own host (A2AFLOW_PUBLIC_URL)")
}

func (c *config) bindData(fs *pflag.FlagSet) {
	fs.StringVar(&c.DataDir, "data-dir", env("A2AFLOW_DATA_DIR", "./data"), "folder for the embedded Temporal database and a2aflow's own database (A2AFLOW_DATA_DIR)")
}

func (c *config) bindTemporal(fs *pflag.FlagSet, embedded bool) {
	usage := "Temporal frontend address to dial (A2AFLOW_TEMPORAL_ADDR)"
	if embedded {
		usage = "listen address of the embedded Temporal frontend (A2AFLOW_TEMPORAL_ADDR)"
	}
	fs.StringVar(&c.TemporalAddr, "temporal-addr", env("A2AFLOW_TEMPORAL_ADDR", "127.0.0.1:7233"), usage)
	fs.StringVar(&c.Namespace, "namespace", env("A2AFLOW_NAMESPACE", "default"), "Temporal namespace (A2AFLOW_NAMESPACE)")
	fs.StringVar(&c.LogLevel, "log-level", env("A2AFLOW_LOG_LEVEL", "info"), "debug, info, warn or error (A2AFLOW_LOG_LEVEL)")
}

func (c *config) bindUI(fs *pflag.FlagSet) {
	fs.StringVar(&c.UIAddr, "ui-addr", env("A2AFLOW_UI_ADDR", ":8233"), "Temporal Web UI listen address; empty disables the UI (A2AFLOW_UI_ADDR)")
}

func (c *config) bindWorker(fs *pflag.FlagSet) {
	fs.StringVar(&c.TaskQueue, "task-queue", env("A2AFLOW_TASK_QUEUE", workflows.DefaultTaskQueue), "Temporal task queue of the task workflows (A2AFLOW_TASK_QUEUE)")
	fs.StringVar(&c.DatabaseDSN, "database", env("A2AFLOW_DATABASE", ""), "SQLite file for a2aflow's own records; default <data-dir>/a2aflow.db (A2AFLOW_DATABASE)")
}
