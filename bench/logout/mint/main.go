// Command mint is the token source of bench/logout/run.sh: it starts svc in process on the
// given configuration (the same SQLite database `svc serve` will use afterwards), logs the user
// in once with its password, then issues N more token pairs for that user through the token
// service — each a new token family recorded in the database, exactly what a password login
// stores — and writes the N access tokens to -out, one a line. Logging in N times through
// argon2id would cost the same rows and tokens at 50 logins a second.
//
//	mint -config application.toml -user bench -password PW -n 100000 -c 8 -out tokens
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
)

func main() {
	path := flag.String("config", "application.toml", "configuration file")
	user := flag.String("user", "bench", "user name")
	password := flag.String("password", "", "the user's password")
	n := flag.Int("n", 10000, "token pairs to issue")
	conc := flag.Int("c", 8, "concurrent issuers")
	out := flag.String("out", "tokens", "file to write the access tokens to")
	flag.Parse()

	cfg, _, err := config.Load(config.LoadOptions{Path: *path})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := svc.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	run, err := srv.Start(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = srv.Stop(ctx) }()

	body := `{"resource":"security/auth","action":"login","version":"v1","params":{"type":"password","principal":` +
		quote(*user) + `,"credentials":` + quote(*password) + `}}`
	r := httptest.NewRequest(http.MethodPost, "/api", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	run.Handler().ServeHTTP(w, r)
	var env struct {
		Data struct {
			Tokens struct{ AccessToken string } `json:"tokens"`
		} `json:"data"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.Data.Tokens.AccessToken == "" {
		log.Fatalf("login answered %d %s (%v)", w.Code, w.Body, err)
	}
	tokens := run.Security().Tokens()
	principal, err := tokens.Verify(ctx, env.Data.Tokens.AccessToken)
	if err != nil {
		log.Fatal(err)
	}

	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var mu sync.Mutex
	var next atomic.Int64
	var wg sync.WaitGroup
	for range *conc {
		wg.Go(func() {
			for next.Add(1) <= int64(*n) {
				pair, err := tokens.Issue(ctx, principal)
				if err != nil {
					log.Fatal(err)
				}
				mu.Lock()
				_, _ = bw.WriteString(pair.AccessToken + "\n")
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := bw.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
