package real

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/bench/internal/handlerbench"
	"github.com/svc-framework/svc/config"
)

// BenchmarkGetUserInfo is run.sh's get_user_info request through the shipped binary's whole root
// handler in process: the shipped configs/application.toml (SQLite, built-in user store,
// default access log to /dev/null), a user created through the store, a token from a real
// password login, then security/auth get_user_info with that Bearer token. Everything but
// net/http's connection handling is measured, so it is the profile and allocation figure behind
// run.sh's throughput (go test -bench GetUserInfo -cpuprofile / -memprofile ./bench/real/).
func BenchmarkGetUserInfo(b *testing.B) {
	srv, token := shippedServer(b)
	handlerbench.Run(b, srv.Handler(), `{"resource":"security/auth","action":"get_user_info","version":"v1","params":{}}`,
		http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + token}})
}

// shippedServer starts svc on a copy of configs/application.toml in a scratch directory with one
// user, logs that user in and returns the server and the access token.
func shippedServer(b *testing.B) (*svc.Running, string) {
	b.Helper()
	dir := b.TempDir()
	shipped, err := os.ReadFile("../../configs/application.toml")
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "application.toml")
	if err := os.WriteFile(path, shipped, 0o600); err != nil {
		b.Fatal(err)
	}
	b.Chdir(dir) // the shipped data paths are relative (./data)
	b.Setenv("SVC_SECURITY_LOGIN_RATE_LIMIT", "1000000000")
	b.Setenv("SVC_API_RATE_LIMIT_MAX", "1000000000")
	cfg, _, err := config.Load(config.LoadOptions{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	srv := handlerbench.Start(b, cfg)
	ctx := context.Background()
	const password = "bench-Password-1"
	if _, err := srv.Security().Store().Create(ctx, "bench", "bench", password, []string{"admin"}); err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	login := `{"resource":"security/auth","action":"login","version":"v1","params":{"type":"password","principal":"bench","credentials":"` + password + `"}}`
	r := httptest.NewRequest(http.MethodPost, "/api", strings.NewReader(login))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var env struct {
		Data struct {
			Tokens struct{ AccessToken string } `json:"tokens"`
		} `json:"data"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.Data.Tokens.AccessToken == "" {
		b.Fatalf("login answered %d %s (%v)", w.Code, w.Body, err)
	}
	return srv, env.Data.Tokens.AccessToken
}

// BenchmarkLogout is run.sh's logout through the same shipped server: each iteration logs out a
// different token, issued beforehand through the token service (run.sh mints them with password
// logins, which only costs time), from 64 goroutines so revocations group-commit as they do
// under load. Reports cpu-ns/op (go test -bench Logout -cpuprofile ./bench/real/).
func BenchmarkLogout(b *testing.B) {
	srv, token := shippedServer(b)
	h := srv.Handler()
	ctx := context.Background()
	principal, err := srv.Security().Tokens().Verify(ctx, token)
	if err != nil {
		b.Fatal(err)
	}
	tokens := make([]string, b.N)
	for i := range tokens {
		pair, err := srv.Security().Tokens().Issue(ctx, principal)
		if err != nil {
			b.Fatal(err)
		}
		tokens[i] = pair.AccessToken
	}
	const body = `{"resource":"security/auth","action":"logout","version":"v1","params":{}}`
	var next atomic.Int64
	var failed atomic.Int64
	b.SetParallelism(32) // 64 goroutines on 2 CPUs
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := handlerbench.ProcessCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1) - 1
			r := httptest.NewRequest(http.MethodPost, "/api", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Authorization", "Bearer "+tokens[i])
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				failed.Add(1)
			}
		}
	})
	b.ReportMetric(float64(handlerbench.ProcessCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d logouts failed", n)
	}
}
