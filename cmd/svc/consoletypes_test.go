package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/internal/consoletypes"
	"github.com/svc-framework/svc/storage"
	"github.com/svc-framework/svc/svctest"
)

var updateConsoleTypes = flag.Bool("update", false, "rewrite console/web/src/api/ops.gen.ts (TestConsoleOperationTypes)")

// consoleTypesFile is the console's generated operation map, relative to this package.
const consoleTypesFile = "../../console/web/src/api/ops.gen.ts"

// TestConsoleOperationTypes generates the console's operation types from the engine the binary
// builds — configs/application.toml with the binary's host options, so every module is on — and
// fails when the committed console/web/src/api/ops.gen.ts differs; -update rewrites it.
func TestConsoleOperationTypes(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"SVC_DATA_SOURCES_PRIMARY_PATH": filepath.Join(dir, "svc.db"),
		"SVC_STORAGE_FILESYSTEM_ROOT":   filepath.Join(dir, "storage"),
		"SVC_SECURITY_SECRET":           svctest.TestSecret,
	}
	cfg, _, err := config.Load(config.LoadOptions{Path: "../../configs/application.toml",
		Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := svc.New(cfg, hostOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := srv.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.WithoutCancel(ctx)) })
	ops := r.Engine().Operations()
	if len(ops) < 100 {
		t.Fatalf("the engine has %d operations; the binary registers well over 100", len(ops))
	}
	got, err := consoletypes.Generate(ops, consoletypes.Options{
		Command: "`go test ./cmd/svc -run TestConsoleOperationTypes -update` (scripts/console.sh types)",
		// Both encode the zero time as null and any other as "2006-01-02 15:04:05".
		Types: map[reflect.Type]string{
			reflect.TypeFor[crud.Time]():        "string | null",
			reflect.TypeFor[storage.DateTime](): "string | null",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if *updateConsoleTypes {
		if err := os.WriteFile(consoleTypesFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(consoleTypesFile)
	if err != nil {
		t.Fatalf("%v: run scripts/console.sh types", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the operations the engine registers: run scripts/console.sh types and commit it", consoleTypesFile)
	}
}
