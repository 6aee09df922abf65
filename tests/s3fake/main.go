// Command s3fake serves an in-memory S3-compatible API (gofakes3) on a
// loopback port, for the tests of blobstore's S3 store. It prints
// "listening on http://HOST:PORT" once it accepts connections and runs
// until killed or until its standard input closes, so it never outlives the
// test that started it.
//
// It is a module of its own so that gofakes3 and its dependencies stay out
// of a2aflow's go.mod.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	faker := gofakes3.New(s3mem.New())
	fmt.Printf("listening on http://%s\n", ln.Addr())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	log.Fatal(http.Serve(ln, faker.Server()))
}
