package real

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	h, token := shippedServer(b)
	handlerbench.Run(b, h, `{"resource":"security/auth","action":"get_user_info","version":"v1","params":{}}`,
		http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + token}})
}

// shippedServer starts svc on a copy of configs/application.toml in a scratch directory with one
// user, logs that user in and returns the root handler and the access token.
func shippedServer(b *testing.B) (http.Handler, string) {
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
	return h, env.Data.Tokens.AccessToken
}
