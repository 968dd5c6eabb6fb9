package security_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// backend is where sessions, nonces and trust codes live: the primary database of a kind, or
// Redis (with SQLite as the primary database).
type backend struct {
	kind  config.DBKind
	redis bool
}

func (b backend) String() string {
	if b.redis {
		return "redis"
	}
	return string(b.kind)
}

// eachBackend runs fn for SQLite, PostgreSQL, MariaDB and Redis (real services as svctest
// decides: skipped, or failed under SVC_TEST_REQUIRE_SERVICES=1, when unset).
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Helper()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) { fn(t, backend{kind: kind}) })
	t.Run("redis", func(t *testing.T) { fn(t, backend{kind: config.SQLite, redis: true}) })
}

// options returns the env options of the backend: for Redis the kv store with an app name of
// the test's own, whose keys are deleted when the test ends.
func (b backend) options(t *testing.T) []envOption {
	t.Helper()
	opts := []envOption{onDB(b.kind)}
	if b.redis {
		opts = append(opts, withRedis(t))
	}
	return opts
}

// withRedis enables the kv store on the real Redis under an app name unique to the test.
func withRedis(t *testing.T) envOption {
	t.Helper()
	kvc := svctest.RedisConfig(t)
	name := redisApp(t)
	return withCfg(func(c *config.Config) {
		c.KVStore = kvc
		c.App.Name = name
	})
}

// redisApp returns an app name unique to t and deletes the module's Redis keys under it at the
// end of the test.
func redisApp(t *testing.T) string {
	t.Helper()
	name := strings.TrimSuffix(svctest.UniquePrefix(t), ":")
	client := svctest.Redis(t)
	t.Cleanup(func() {
		ctx := context.Background()
		for _, area := range []string{"session", "trust", "lockout"} {
			iter := client.Scan(ctx, 0, "svc:"+area+":"+name+":*", 500).Iterator()
			for iter.Next(ctx) {
				client.Del(ctx, iter.Val())
			}
		}
	})
	return name
}

// opaque switches the server to opaque sessions; set changes the session defaults (idle 30m,
// max lifetime 168h, sliding, unlimited, evict_oldest).
func opaque(set func(*config.Session)) envOption {
	return withCfg(func(c *config.Config) {
		c.Security.TokenType = config.TokenTypeOpaque
		if set != nil {
			set(&c.Security.Session)
		}
	})
}

// revocations records what the revocation hook receives.
type revocations struct {
	mu  sync.Mutex
	got []security.SessionRevocation
}

func (r *revocations) hook(_ context.Context, x security.SessionRevocation) {
	r.mu.Lock()
	r.got = append(r.got, x)
	r.mu.Unlock()
}

// since returns the revocations recorded after the first n.
func (r *revocations) since(n int) []security.SessionRevocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]security.SessionRevocation(nil), r.got[n:]...)
}

func (r *revocations) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// userSeq makes user names unique within a test binary.
var userSeq atomic.Int64

// freshUser creates a built-in user with a unique name and returns the name.
func (e *env) freshUser(t *testing.T, roles ...string) string {
	t.Helper()
	name := fmt.Sprintf("u%03d", userSeq.Add(1))
	e.addUser(t, name, alicePassword, roles...)
	return name
}

// access logs name in with a password and returns the access token.
func (e *env) access(t *testing.T, name string) string {
	t.Helper()
	return e.login(t, name, alicePassword).AccessToken
}

// use calls get_user_info with token: an authenticated request.
func (e *env) use(t *testing.T, token string) svctest.Response {
	t.Helper()
	return e.call(t, "get_user_info", nil, svctest.WithToken(token))
}

// userID returns the id of a built-in user.
func (e *env) userID(t *testing.T, name string) string {
	t.Helper()
	u, err := e.sec.Store().LookupUser(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// live returns the number of live sessions of a built-in user.
func (e *env) live(t *testing.T, name string) int {
	t.Helper()
	ss, err := e.sec.Sessions().List(context.Background(), e.userID(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return len(ss)
}

// result is the outcome of a request made off the test goroutine (t.Fatal is not allowed
// there).
type result struct {
	status, code int
	token        string
	err          error
}

// rawLogin posts a password login to srv without a *testing.T, for concurrent callers.
func rawLogin(ctx context.Context, srv *svctest.Server, user, password string) result {
	body, _ := json.Marshal(map[string]any{"resource": security.ResourceAuth, "action": "login", "version": "v1",
		"params": map[string]any{"type": "password", "principal": user, "credentials": password}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api", bytes.NewReader(body))
	if err != nil {
		return result{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.HTTP.Client().Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return result{err: err}
	}
	var env struct {
		Code int `json:"code"`
		Data struct {
			Tokens *security.AuthTokens `json:"tokens"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return result{err: fmt.Errorf("decode %s: %w", b, err)}
	}
	r := result{status: resp.StatusCode, code: env.Code}
	if env.Data.Tokens != nil {
		r.token = env.Data.Tokens.AccessToken
	}
	return r
}

// concurrentLogins runs n password logins of user at once, spread over servers round-robin,
// and returns their results.
func concurrentLogins(t *testing.T, servers []*svctest.Server, user string, n int) []result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := make([]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			out[i] = rawLogin(ctx, servers[i%len(servers)], user, alicePassword)
		})
	}
	close(start)
	wg.Wait()
	for _, r := range out {
		if r.err != nil {
			t.Fatalf("login: %v", r.err)
		}
	}
	return out
}

// mustJSON encodes v.
func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustRequest is a JSON POST to path (relative to the server) for srv.Do.
func mustRequest(t *testing.T, path, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

// flatten lists a map as key=value strings.
func flatten(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// toString renders a scanned column value.
func toString(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}
