// Command svcbench is `svc serve` plus one host resource, bench/echo, used by bench/api/run.sh
// to measure the /api request path on an authenticated operation (JWT bearer) with access
// logging at its default. It writes an access token for a benchmark user to -token-file before
// serving, so the load generator can authenticate.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
)

type echoParams struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

func (p *echoParams) Validate() error {
	var c rpc.Check
	c.Required("name", p.Name != "")
	c.MaxLen("name", p.Name, 64)
	return c.Err()
}

func echo(_ context.Context, c rpc.Call, p echoParams) (echoParams, error) { return p, nil }

func main() {
	cfgPath := flag.String("config", "", "application.toml")
	tokenFile := flag.String("token-file", "", "where to write the benchmark access token")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file (stopped on SIGINT/SIGTERM)")
	memProfile := flag.String("memprofile", "", "write an allocation profile of the whole run to this file on SIGINT/SIGTERM")
	flag.Parse()
	if *memProfile != "" {
		defer writeAllocProfile(*memProfile)
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		defer stop()
	}

	cfg, warnings, err := config.Load(config.LoadOptions{Path: *cfgPath})
	for _, w := range warnings {
		log.Println("warning:", w)
	}
	if err != nil {
		log.Fatal(err)
	}
	user := &rpc.Principal{Type: rpc.PrincipalUser, ID: "bench", Name: "bench", Roles: []string{}}
	token, err := security.MintAccessToken(cfg, user, time.Now())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*tokenFile, []byte(token), 0o600); err != nil {
		log.Fatal(err)
	}
	srv, err := svc.New(cfg, svc.WithModule(func(app.Deps) (app.Module, error) {
		return app.Module{Name: "bench", Resources: []rpc.Resource{{Name: "bench/echo", Ops: []rpc.Op{rpc.Handle("echo", echo)}}}}, nil
	}))
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Run(ctx); err != nil {
		log.Print(err)
	}
}

// writeAllocProfile writes the allocations sampled since the start to path.
func writeAllocProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		log.Print(err)
		return
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		log.Print(err)
	}
	if err := f.Close(); err != nil {
		log.Print(err)
	}
}

// startCPUProfile profiles the process into path until the returned function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			log.Print(err)
		}
	}, nil
}
