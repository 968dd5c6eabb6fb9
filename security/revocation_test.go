package security_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// Environment of the logout crash child: the test binary re-executed by TestMain.
const (
	envLogoutDS     = "SVC_SECURITY_LOGOUT_CHILD_DS"     // JSON config.DataSource
	envLogoutSecret = "SVC_SECURITY_LOGOUT_CHILD_SECRET" // the parent's signing secret
	envLogoutOut    = "SVC_SECURITY_LOGOUT_CHILD_OUT"    // file the child writes once logout returned
)

// TestMain runs the logout crash child instead of the tests when TestLogoutSurvivesCrash
// re-executes this binary.
func TestMain(m *testing.M) {
	if raw := os.Getenv(envLogoutDS); raw != "" {
		err := logoutChild(raw, os.Getenv(envLogoutSecret), os.Getenv(envLogoutOut))
		fmt.Fprintln(os.Stderr, "logout child:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// logoutChild is a server on the given data source that logs alice in twice, logs the first
// token out, writes "revoked kept" (the two access tokens) to out once that logout returned,
// and then blocks until it is killed.
func logoutChild(rawDS, secret, out string) error {
	var ds config.DataSource
	if err := json.Unmarshal([]byte(rawDS), &ds); err != nil {
		return err
	}
	cfg := config.Default()
	cfg.App.Port = 1
	cfg.DataSources = map[string]config.DataSource{config.PrimaryDataSource: ds}
	cfg.Security.Secret = secret
	cfg.Security.LoginRateLimit = 1000
	cfg.Storage.Provider = config.StorageMemory
	srv, err := svc.New(cfg, svc.WithClock(func() time.Time { return start }),
		svc.WithSecurity(security.Options{Hash: cheapHash}), svc.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return err
	}
	ctx := context.Background()
	run, err := srv.Start(ctx)
	if err != nil {
		return err
	}
	if _, err := run.Security().Store().Create(ctx, "alice", "Alice", alicePassword, nil); err != nil {
		return err
	}
	call := func(action, token string, params string) (string, error) {
		r := httptest.NewRequest(http.MethodPost, "/api", strings.NewReader(
			`{"resource":"security/auth","action":"`+action+`","version":"v1","params":`+params+`}`))
		r.Header.Set("Content-Type", "application/json")
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		run.Handler().ServeHTTP(w, r)
		var env struct {
			Code int `json:"code"`
			Data struct {
				Tokens struct{ AccessToken string } `json:"tokens"`
			} `json:"data"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || w.Code != http.StatusOK || env.Code != 0 {
			return "", fmt.Errorf("%s answered %d %s", action, w.Code, w.Body)
		}
		return env.Data.Tokens.AccessToken, nil
	}
	login := `{"type":"password","principal":"alice","credentials":"` + alicePassword + `"}`
	revoked, err := call("login", "", login)
	if err != nil {
		return err
	}
	kept, err := call("login", "", login)
	if err != nil {
		return err
	}
	if _, err := call("logout", revoked, "{}"); err != nil {
		return err
	}
	if err := os.WriteFile(out+".tmp", []byte(revoked+" "+kept), 0o600); err != nil {
		return err
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		return err
	}
	select {}
}

// TestLogoutSurvivesCrash (issue #34): a logout that returned is durable although logouts are
// group-committed. A child server on a SQLite file logs a token out and is killed with SIGKILL
// right after the logout answered; a server started afterwards on the same file refuses that
// token at once (its revocation set is loaded at start, no change is replayed) and still accepts
// the child's other token.
func TestLogoutSurvivesCrash(t *testing.T) {
	ds := svctest.DataSource(t, config.SQLite)
	raw, err := json.Marshal(ds)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "tokens")
	cmd := exec.Command(exe, "-test.run", "^$")
	cmd.Env = testservice.ChildEnv(envLogoutDS+"="+string(raw), envLogoutSecret+"="+svctest.TestSecret, envLogoutOut+"="+out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() { // the wait below failed: end the child and show what it said
		if !stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Logf("child stderr:\n%s", stderr.String())
		}
	})
	var tokens []byte
	svctest.Eventually(t, 60*time.Second, func() bool { tokens, err = os.ReadFile(out); return err == nil },
		"the child writes its tokens")
	stopped = true
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	revoked, kept, ok := strings.Cut(string(tokens), " ")
	if !ok {
		t.Fatalf("child wrote %q", tokens)
	}
	e := newEnv(t, withCfg(func(cfg *config.Config) { cfg.DataSources[config.PrimaryDataSource] = ds }))
	want(t, e.call(t, "get_user_info", nil, svctest.WithToken(kept)), 200, 0)
	want(t, e.call(t, "get_user_info", nil, svctest.WithToken(revoked)), 401, rpc.CodeTokenInvalid)
}

// TestRevocationsLoadedAtStart: a node started after a logout refuses the token at once on
// every database (the revocation set is loaded from the family table, not from the change
// feed), and a revoked family is forgotten once its access tokens have expired.
func TestRevocationsLoadedAtStart(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		ds := svctest.DataSource(t, kind)
		shared := withCfg(func(cfg *config.Config) { cfg.DataSources[config.PrimaryDataSource] = ds })
		a := newEnv(t, shared)
		a.addUser(t, "alice", alicePassword)
		gone := a.login(t, "alice", alicePassword)
		live := a.login(t, "alice", alicePassword)
		want(t, a.call(t, "logout", nil, svctest.WithToken(gone.AccessToken)), 200, 0)
		want(t, a.call(t, "get_user_info", nil, svctest.WithToken(gone.AccessToken)), 401, rpc.CodeTokenInvalid)

		b := newEnv(t, shared)
		want(t, b.call(t, "get_user_info", nil, svctest.WithToken(gone.AccessToken)), 401, rpc.CodeTokenInvalid)
		want(t, b.call(t, "get_user_info", nil, svctest.WithToken(live.AccessToken)), 200, 0)
		// the revoked refresh token is refused by the database row, on either node
		b.clock.Advance(15*time.Minute + time.Second)
		want(t, b.call(t, "refresh", map[string]any{"refreshToken": gone.RefreshToken}), 401, rpc.CodeTokenInvalid)
	})
}

// TestConcurrentRefreshIsOneRotation: refreshes are group-committed like logouts; of many
// concurrent exchanges of one refresh token exactly one wins, the others are reuses that revoke
// the family (also the winner's new pair), on every database.
func TestConcurrentRefreshIsOneRotation(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEnv(t, onDB(kind))
		e.addUser(t, "alice", alicePassword)
		pair := e.login(t, "alice", alicePassword)
		other := e.login(t, "alice", alicePassword)
		e.clock.Advance(15*time.Minute + time.Second)
		const n = 8
		var wg sync.WaitGroup
		results := make([]error, n)
		pairs := make([]security.AuthTokens, n)
		for i := range n {
			wg.Go(func() {
				pairs[i], _, results[i] = e.sec.Tokens().Refresh(context.Background(), pair.RefreshToken)
			})
		}
		wg.Wait()
		won := -1
		for i, err := range results {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("refreshes %d and %d both won", won, i)
			case err == nil:
				won = i
			case !errors.Is(err, security.ErrTokenInvalid):
				t.Fatalf("refresh %d: %v, want the winner or ErrTokenInvalid", i, err)
			}
		}
		if won < 0 {
			t.Fatal("no refresh won")
		}
		want(t, e.call(t, "get_user_info", nil, svctest.WithToken(pairs[won].AccessToken)), 401, rpc.CodeTokenInvalid)
		// another family is untouched and rotates normally (a lone write commits at once)
		r := e.call(t, "refresh", map[string]any{"refreshToken": other.RefreshToken})
		want(t, r, 200, 0)
	})
}
