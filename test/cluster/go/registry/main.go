// Test tooling only: go-containerregistry's registry (pkg/registry, a real OCI distribution API:
// manifests, blobs, chunked uploads, tags) on 127.0.0.1, blobs on disk. Its own cmd/registry listens
// on every interface at a fixed port; the harness needs loopback and a free port, printed as
// "listening on 127.0.0.1:<port>" once it accepts connections.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	addr := flag.String("address", "127.0.0.1:0", "host:port to listen on")
	dir := flag.String("blobs", "", "directory for blobs (required; the registry keeps manifests in memory)")
	flag.Parse()
	if *dir == "" {
		log.Fatal("--blobs is required")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", listener.Addr().String())
	handler := registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(*dir)))
	log.Fatal(http.Serve(listener, handler))
}
