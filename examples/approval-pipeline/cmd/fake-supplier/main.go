// Command fake-supplier serves a supplier's ordering API for the
// approval-pipeline example: POST /orders (deduplicated by the
// Idempotency-Key header) and GET /orders. See package fakesupplier.
//
//	go run ./cmd/fake-supplier                    # http://localhost:9090
//	go run ./cmd/fake-supplier -lose-answers 2    # the first 2 orders' answers get lost: watch the retries
package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/a2aflow/a2aflow/examples/approval-pipeline/internal/fakesupplier"
)

func main() {
	addr := flag.String("addr", "localhost:9090", "address to listen on")
	lose := flag.Int("lose-answers", 0, "take the first N orders but answer 503, as if the answer got lost")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "fake-supplier: unexpected argument %q (flags: -addr, -lose-answers)\n", flag.Arg(0))
		os.Exit(2)
	}
	if *lose < 0 {
		fmt.Fprintln(os.Stderr, "fake-supplier: -lose-answers must be 0 or more")
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fake-supplier: cannot listen on %s: %v\n", *addr, err)
		os.Exit(1)
	}
	fmt.Printf("fake supplier taking orders at http://%s/orders\n", ln.Addr())
	srv := &http.Server{
		Handler:           &fakesupplier.Server{LoseAnswers: *lose, Logger: logger},
		ReadHeaderTimeout: 10 * time.Second,
	}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "fake-supplier:", err)
		os.Exit(1)
	}
}
