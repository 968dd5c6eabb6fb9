// Command crashserver is the svc server of the storage crash tests: the default boot chain with
// a storage backend that can stop dead at a chosen point so the test can kill the process there.
//
//	crashserver -c application.toml
//
// With SVC_CRASH_AT=after_complete, the first CompleteMultipart that succeeds in the backend
// creates the file named by SVC_CRASH_MARKER and then blocks forever: the object is assembled
// but the server has not recorded it, the moment a real crash hurts most. The test waits for the
// marker and sends SIGKILL.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/storage"
	"github.com/svc-framework/svc/storage/backend"
)

func main() {
	path := flag.String("c", "", "configuration file")
	flag.Parse()
	if err := run(*path); err != nil {
		fmt.Fprintln(os.Stderr, "crashserver:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, _, err := config.Load(config.LoadOptions{Path: path})
	if err != nil {
		return err
	}
	be, err := storage.NewBackend(cfg.Storage, nil)
	if err != nil {
		return err
	}
	if os.Getenv("SVC_CRASH_AT") == "after_complete" {
		be = &stopAfterComplete{Backend: be, marker: os.Getenv("SVC_CRASH_MARKER")}
	}
	srv, err := svc.New(cfg, svc.WithStorage(storage.Options{Backend: be}))
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}

// stopAfterComplete blocks forever once a completion has succeeded in the backend.
type stopAfterComplete struct {
	backend.Backend
	marker string
}

// Start implements backend.Starter for the wrapped backend.
func (s *stopAfterComplete) Start(ctx context.Context) error {
	if st, ok := s.Backend.(backend.Starter); ok {
		return st.Start(ctx)
	}
	return nil
}

// CompleteMultipart completes in the backend, leaves the marker and never returns.
func (s *stopAfterComplete) CompleteMultipart(ctx context.Context, key, uploadID string, parts []backend.Part) (backend.Object, error) {
	obj, err := s.Backend.CompleteMultipart(ctx, key, uploadID, parts)
	if err != nil {
		return obj, err
	}
	if err := os.WriteFile(s.marker, []byte(key), 0o600); err != nil {
		return obj, err
	}
	select {} // wait for SIGKILL
}
