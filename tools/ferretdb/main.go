// Command ferretdb runs FerretDB v1 embedded, for tests and local development.
//
// `go install` of FerretDB's own command does not work on our machines (see
// shared/notes/ferretdb.md): its module proxy listing is refused and the module zip ships
// no version file. The embedding API has neither problem.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	dataDir := flag.String("data-dir", "", "directory for the SQLite files (created if missing)")
	flag.Parse()

	if *dataDir == "" {
		log.Fatal("ferretdb: -data-dir is required")
	}
	dir, err := filepath.Abs(*dataDir)
	if err != nil {
		log.Fatalf("ferretdb: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatalf("ferretdb: cannot create data dir: %v", err)
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Handler:   "sqlite",
		SQLiteURL: "file:" + dir + "/",
	})
	if err != nil {
		log.Fatalf("ferretdb: %v", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	fmt.Println(f.MongoDBURI())
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		log.Fatalf("ferretdb: %v", err)
	}
}
