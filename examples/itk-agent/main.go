// Command itk-agent is a2aflow as an agent of the A2A interop kit
// (github.com/a2aproject/a2a-itk): package itk's agent, the only one, so the
// default one, on all three bindings. The kit starts it as its "current"
// agent with
//
//	go run main.go --httpPort P --grpcPort Q
//
// which is `serve` on 127.0.0.1:P (HTTP: the card, JSON-RPC, HTTP+JSON) and
// 127.0.0.1:Q (gRPC), its data in a temporary folder; any other arguments
// are a2aflow's own. See README.md.
package main

import (
	"fmt"
	"net"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow"
	"github.com/a2aflow/a2aflow/examples/itk-agent/itk"
	"github.com/a2aflow/a2aflow/workflows"
)

func main() {
	args, httpPort, err := kitArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "itk-agent:", err)
		os.Exit(2)
	}
	os.Args = append(os.Args[:1], args...)
	app, err := a2aflow.New([]*workflows.Agent{itk.Agent()}, a2aflow.WithRoutes(func(r gin.IRouter) {
		// The kit sends its first message to {card URL}/jsonrpc/; a2aflow's
		// default agent takes JSON-RPC at the root.
		root := &url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(httpPort)), Path: "/"}
		proxy := httputil.NewSingleHostReverseProxy(root)
		forward := func(c *gin.Context) {
			c.Request.URL.Path = "/"
			proxy.ServeHTTP(c.Writer, c.Request)
		}
		r.POST("/jsonrpc", forward)
		r.POST("/jsonrpc/", forward) // as the kit's runner sends it
	}))
	if err != nil {
		fmt.Fprintln(os.Stderr, "itk-agent:", err)
		os.Exit(2)
	}
	app.Main()
}

// kitArgs turns the kit's --httpPort P --grpcPort Q into serve's arguments;
// other arguments pass as they are.
func kitArgs(in []string) (out []string, httpPort int, err error) {
	var grpcPort int
	var rest []string
	for i := 0; i < len(in); i++ {
		switch in[i] {
		case "--httpPort", "-httpPort", "--grpcPort", "-grpcPort":
			if i+1 == len(in) {
				return nil, 0, fmt.Errorf("%s needs a port", in[i])
			}
			n, err := strconv.Atoi(in[i+1])
			if err != nil {
				return nil, 0, fmt.Errorf("%s %q: %w", in[i], in[i+1], err)
			}
			if in[i] == "--httpPort" || in[i] == "-httpPort" {
				httpPort = n
			} else {
				grpcPort = n
			}
			i++
		default:
			rest = append(rest, in[i])
		}
	}
	if httpPort == 0 {
		return in, 0, nil
	}
	dir, err := os.MkdirTemp("", "itk-agent-")
	if err != nil {
		return nil, 0, err
	}
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "127.0.0.1:0"
		}
		defer l.Close()
		return l.Addr().String()
	}
	out = []string{"serve", "--http-addr", fmt.Sprintf("127.0.0.1:%d", httpPort),
		"--temporal-addr", free(), "--ui-addr", free(), "--data-dir", dir, "--push-allow-hosts", "loopback"}
	if grpcPort != 0 {
		out = append(out, "--grpc-addr", fmt.Sprintf("127.0.0.1:%d", grpcPort))
	}
	return append(out, rest...), httpPort, nil
}
