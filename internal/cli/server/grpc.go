package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/grpc"

	"github.com/a2aflow/a2aflow/internal/api/a2abinding"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// grpcConfig is the gRPC binding's flags of serve and api (api/grpc.go).
type grpcConfig struct {
	// Addr is --grpc-addr, the listen address; empty: no gRPC binding.
	Addr string
	// PublicAddr is --grpc-public-addr, what cards list (a2abinding.GRPCConfig.Addr).
	PublicAddr string
	// Reflection is --grpc-reflection.
	Reflection bool
}

func (g *grpcConfig) bind(fs *pflag.FlagSet) {
	b := cmdutil.Bind(fs)
	b.String(&g.Addr, "grpc-addr", "A2AFLOW_GRPC_ADDR", "",
		"serve the A2A gRPC binding (1.0 and 0.3) on this address, e.g. :9090; every agent's card then lists it; default: off")
	b.String(&g.PublicAddr, "grpc-public-addr", "A2AFLOW_GRPC_PUBLIC_ADDR", "",
		"host:port cards list for the gRPC binding; default: the host a client reached the HTTP API at, with --grpc-addr's port")
	b.Bool(&g.Reflection, "grpc-reflection", "A2AFLOW_GRPC_REFLECTION", false,
		"register gRPC server reflection (grpcurl list) on the gRPC binding; default: off")
}

// listen opens the gRPC binding's listener, nil when it is off.
func (g *grpcConfig) listen() (net.Listener, error) {
	if g.Addr == "" {
		return nil, nil
	}
	return listen(g.Addr, "the A2A gRPC binding")
}

// apiConfig is the API's gRPC settings for a binding listening on ln (nil:
// off); httpURL is the HTTP API's base URL.
func (g *grpcConfig) apiConfig(ln net.Listener, httpURL string, unaryTimeout time.Duration) a2abinding.GRPCConfig {
	if ln == nil {
		return a2abinding.GRPCConfig{}
	}
	addr := g.PublicAddr
	if addr == "" {
		// The port actually bound (":0" picks one), on the host given.
		host, _, _ := net.SplitHostPort(g.Addr)
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		addr = net.JoinHostPort(host, port)
	}
	return a2abinding.GRPCConfig{Addr: addr, Reflection: g.Reflection, APIURL: httpURL, UnaryTimeout: unaryTimeout}
}

// serveGRPC serves srv on ln until stop is called: stop ends it
// gracefully (the streams end once the API's draining channel is closed)
// until deadline, then cuts what is left.
func serveGRPC(srv *grpc.Server, ln net.Listener, logger *slog.Logger) (errc <-chan error, stop func(deadline time.Time)) {
	served := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, grpc.ErrServerStopped) {
			err = nil
		}
		served <- err
	}()
	return served, func(deadline time.Time) {
		done := make(chan struct{})
		go func() { srv.GracefulStop(); close(done) }()
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		select {
		case <-done:
		case <-ctx.Done():
			logger.Warn("gRPC calls still in flight at the shutdown deadline were cut")
			srv.Stop()
			<-done
		}
	}
}
