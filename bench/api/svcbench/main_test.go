package main

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/bench/internal/handlerbench"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// BenchmarkHandler is bench/api/run.sh's request through svc's whole root handler in process:
// outer middleware with the default access log, the mux, the engine, the JWT bearer strategy and
// bench/echo — everything but net/http's connection handling. Log lines go to /dev/null.
func BenchmarkHandler(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "application.toml")
	toml := "[svc.app]\nname = \"svc-bench\"\nport = 18089\n[svc.data_sources.primary]\ntype = \"sqlite\"\npath = \"" +
		filepath.Join(dir, "bench.db") + "\"\n[svc.security]\nsecret = \"" + svctest.TestSecret + "\"\n" +
		"[svc.api.rate_limit]\nmax = 1000000000\n"
	if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
		b.Fatal(err)
	}
	cfg, _, err := config.Load(config.LoadOptions{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	user := &rpc.Principal{Type: rpc.PrincipalUser, ID: "bench", Name: "bench", Roles: []string{}}
	token := svctest.MintToken(b, cfg, user, time.Now())
	srv := handlerbench.Start(b, cfg, svc.WithModule(func(app.Deps) (app.Module, error) {
		return app.Module{Name: "bench", Resources: []rpc.Resource{{Name: "bench/echo", Ops: []rpc.Op{rpc.Handle("echo", echo)}}}}, nil
	}))
	handlerbench.Run(b, srv.Handler(), `{"resource":"bench/echo","action":"echo","version":"v1","params":{"id":9007199254740993,"name":"svc"}}`,
		http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + token}})
}
