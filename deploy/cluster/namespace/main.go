// Command namespace registers a Temporal namespace once the cluster's
// frontend answers, as `temporal operator namespace create` would: the
// server has no setting that creates one. An existing namespace is left as
// it is. scripts/cluster.sh runs it after the server nodes start.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"
)

func main() {
	addr := flag.String("address", "127.0.0.1:7233", "frontend host:port")
	name := flag.String("namespace", "default", "namespace to register")
	retention := flag.Duration("retention", 72*time.Hour, "how long closed workflows are kept")
	wait := flag.Duration("wait", 2*time.Minute, "how long to wait for the frontend")
	flag.Parse()
	if err := run(*addr, *name, *retention, *wait); err != nil {
		fmt.Fprintln(os.Stderr, "namespace:", err)
		os.Exit(1)
	}
}

func run(addr, name string, retention, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var last error
	for {
		last = register(ctx, addr, name, retention)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("register %q at %s: %w", name, addr, last)
		case <-time.After(time.Second):
		}
	}
}

func register(ctx context.Context, addr, name string, retention time.Duration) error {
	nc, err := client.NewNamespaceClient(client.Options{HostPort: addr, Logger: quiet{}})
	if err != nil {
		return err
	}
	defer nc.Close()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = nc.Register(rctx, &workflowservice.RegisterNamespaceRequest{
		Namespace:                        name,
		WorkflowExecutionRetentionPeriod: durationpb.New(retention),
	})
	var exists *serviceerror.NamespaceAlreadyExists
	if errors.As(err, &exists) {
		fmt.Printf("namespace %s exists\n", name)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Printf("namespace %s registered (retention %s)\n", name, retention)
	return nil
}

// quiet drops the SDK's log lines; errors are returned instead.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
