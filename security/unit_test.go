package security_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
	"golang.org/x/crypto/bcrypt"
)

func lockoutCfg(strategy config.LockoutStrategy) config.Lockout {
	return config.Lockout{Enabled: true, MaxFailures: 3, Window: 15 * time.Minute, LockDuration: 15 * time.Minute,
		Strategy: strategy, BackoffBase: time.Second, BackoffMax: 10 * time.Second, Key: config.LockoutKeyUserIP}
}

// TestLockoutStores checks the lock and backoff rules, the window and reset on the memory
// store and on the real Redis.
func TestLockoutStores(t *testing.T) {
	stores := map[string]func(t *testing.T, c config.Lockout) security.LockoutStore{
		"memory": func(t *testing.T, c config.Lockout) security.LockoutStore { return security.NewMemoryLockout(c) },
		"redis": func(t *testing.T, c config.Lockout) security.LockoutStore {
			client, app := svctest.Redis(t), svctest.UniquePrefix(t)
			// The store namespaces its keys under svc:lockout:<app>:, outside the harness's
			// cleanup prefix: remove them here so repeated runs start clean.
			t.Cleanup(func() {
				keys, _ := client.Keys(context.Background(), "svc:lockout:"+app+"*").Result()
				if len(keys) > 0 {
					client.Del(context.Background(), keys...)
				}
			})
			return security.NewRedisLockout(client, app, c)
		},
	}
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			t.Run("backoff doubles to max", func(t *testing.T) {
				s := mk(t, lockoutCfg(config.LockoutBackoff))
				var got []time.Duration
				for range 7 {
					d, err := s.Fail(ctx, "k", now)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, d)
				}
				want := []time.Duration{0, 0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("blocks = %v, want %v", got, want)
					}
				}
				if d, _ := s.Blocked(ctx, "k", now.Add(9*time.Second)); d != time.Second {
					t.Errorf("blocked = %v, want 1s", d)
				}
			})
			t.Run("lock, window and reset", func(t *testing.T) {
				s := mk(t, lockoutCfg(config.LockoutLock))
				s.Fail(ctx, "a", now)
				s.Fail(ctx, "a", now.Add(time.Minute))
				// the window passed without failures: the counter starts over
				if d, _ := s.Fail(ctx, "a", now.Add(17*time.Minute)); d != 0 {
					t.Errorf("block after window = %v, want 0", d)
				}
				s.Fail(ctx, "a", now.Add(18*time.Minute))
				if d, _ := s.Fail(ctx, "a", now.Add(19*time.Minute)); d != 15*time.Minute {
					t.Errorf("block = %v, want 15m", d)
				}
				if d, _ := s.Blocked(ctx, "a", now.Add(20*time.Minute)); d != 14*time.Minute {
					t.Errorf("blocked = %v, want 14m", d)
				}
				if d, _ := s.Blocked(ctx, "other", now); d != 0 {
					t.Errorf("other key blocked %v", d)
				}
				if err := s.Reset(ctx, "a"); err != nil {
					t.Fatal(err)
				}
				if d, _ := s.Blocked(ctx, "a", now.Add(20*time.Minute)); d != 0 {
					t.Errorf("blocked after reset = %v", d)
				}
			})
		})
	}
}

// TestPolicy: every rule, opt-in, in order, with its message key and arguments.
func TestPolicy(t *testing.T) {
	all := config.PasswordPolicy{MinLength: 8, MaxLength: 20, RequireUpper: true, RequireLower: true, RequireDigit: true,
		RequireSymbol: true, DisallowUsername: true, Blocklist: []string{"Password1!"}}
	tests := []struct {
		name string
		cfg  config.PasswordPolicy
		pw   string
		want *rpc.Error
		arg  [2]string
	}{
		{"zero policy accepts anything", config.PasswordPolicy{}, "x", nil, [2]string{}},
		{"too short", all, "Aa1!", security.ErrPasswordTooShort, [2]string{"min", "8"}},
		{"too long", all, "Aa1!Aa1!Aa1!Aa1!Aa1!Aa1!", security.ErrPasswordTooLong, [2]string{"max", "20"}},
		{"missing upper", all, "aaaa1111!!", security.ErrPasswordMissingUppercase, [2]string{}},
		{"missing lower", all, "AAAA1111!!", security.ErrPasswordMissingLowercase, [2]string{}},
		{"missing digit", all, "AAAAaaaa!!", security.ErrPasswordMissingDigit, [2]string{}},
		{"missing symbol", all, "AAAAaaaa11", security.ErrPasswordMissingSymbol, [2]string{}},
		{"few classes", config.PasswordPolicy{MinCharClasses: 3}, "aaaa1111", security.ErrPasswordTooFewCharClasses, [2]string{"count", "3"}},
		{"enough classes", config.PasswordPolicy{MinCharClasses: 3}, "aaaa1111!", nil, [2]string{}},
		{"contains user name", all, "xxAlice1!x", security.ErrPasswordContainsIdentity, [2]string{}},
		{"blocked, case-insensitive", all, "password1!", security.ErrPasswordMissingUppercase, [2]string{}},
		{"blocked", all, "PASSWORD1!a", nil, [2]string{}},
		{"blocklist exact", config.PasswordPolicy{Blocklist: []string{"letmein"}}, "LetMeIn", security.ErrPasswordBlocked, [2]string{}},
		{"fine", all, "Tr0ub4dor&3", nil, [2]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := security.NewPolicy(tt.cfg, nil, nil, nil, nil).Check(context.Background(), security.PasswordCheck{Username: "alice", Password: tt.pw})
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
			e, _ := rpc.AsError(err)
			if e.Code != rpc.CodePasswordPolicyViolation || e.HTTPStatus() != 400 {
				t.Errorf("code/status = %d/%d, want 1050/400", e.Code, e.HTTPStatus())
			}
			if tt.arg[0] != "" && e.Args[tt.arg[0]] != tt.arg[1] {
				t.Errorf("args = %v, want %s=%s", e.Args, tt.arg[0], tt.arg[1])
			}
		})
	}
}

// TestStoreHistoryAndMaxAge on every database: history_depth refuses recent passwords,
// max_age reports expiry, user names are unique after normalization, disable and roles stick.
func TestStoreHistoryAndMaxAge(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		ctx := context.Background()
		clock, sec := migratedSecurity(t, d)
		sec.PasswordPolicy = config.PasswordPolicy{HistoryDepth: 2, MaxAge: 24 * time.Hour, MinLength: 4}
		s := security.OpenStore(d, sec, security.HashParams{Memory: 64, Time: 1, Threads: 1}, clock.Now)
		u, err := s.Create(ctx, " Erin ", "Erin E.", "pw-one", []string{"ops"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(ctx, "ERIN", "", "pw-one", nil); !errors.Is(err, security.ErrUserExists) {
			t.Errorf("duplicate create = %v, want ErrUserExists", err)
		}
		if _, err := s.Create(ctx, "with space", "", "pw-one", nil); !errors.Is(err, security.ErrInvalidUsername) {
			t.Errorf("create with space = %v, want ErrInvalidUsername", err)
		}
		if _, err := s.Create(ctx, "x", "", "abc", nil); !errors.Is(err, security.ErrPasswordTooShort) {
			t.Errorf("short password = %v, want ErrPasswordTooShort", err)
		}
		pol := security.NewPolicy(sec.PasswordPolicy, s, s, nil, clock.Now)
		if exp, _ := pol.Expired(ctx, u.ID); exp {
			t.Error("fresh password expired")
		}
		clock.Advance(25 * time.Hour)
		if exp, _ := pol.Expired(ctx, u.ID); !exp {
			t.Error("old password not expired")
		}
		if err := s.SetPassword(ctx, "erin", "pw-one"); !errors.Is(err, security.ErrPasswordReused) {
			t.Errorf("reuse = %v, want ErrPasswordReused", err)
		}
		for _, pw := range []string{"pw-two", "pw-three"} {
			clock.Advance(time.Second)
			if err := s.SetPassword(ctx, "erin", pw); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SetPassword(ctx, "erin", "pw-two"); !errors.Is(err, security.ErrPasswordReused) {
			t.Errorf("reuse within depth = %v, want ErrPasswordReused", err)
		}
		if err := s.SetPassword(ctx, "erin", "pw-one"); err != nil {
			t.Errorf("reuse beyond depth = %v, want nil", err)
		}
		if err := s.SetRoles(ctx, "erin", []string{"admin"}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetDisabled(ctx, "erin", true); err != nil {
			t.Fatal(err)
		}
		got, err := s.LookupUser(ctx, "ERIN")
		if err != nil || !got.Disabled || len(got.Roles) != 1 || got.Roles[0] != "admin" || got.DisplayName != "Erin E." {
			t.Errorf("user = %+v, %v", got, err)
		}
		if _, err := s.LoadPrincipal(ctx, u.ID); !errors.Is(err, security.ErrUserNotFound) {
			t.Errorf("LoadPrincipal of disabled = %v", err)
		}
		if n, _ := s.Count(ctx); n != 1 {
			t.Errorf("count = %d", n)
		}
		if _, err := s.LookupUser(ctx, "nobody"); !errors.Is(err, security.ErrUserNotFound) {
			t.Errorf("unknown = %v", err)
		}
	})
}

// TestPasswordLoginUpgradesHash on every database: a login whose stored hash was made under older
// parameters stores a hash under the current ones, and leaves the token cut-off, the password
// age and the history alone. A wrong password upgrades nothing.
func TestPasswordLoginUpgradesHash(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		ctx := context.Background()
		clock, sec := migratedSecurity(t, d)
		oldParams := security.HashParams{Memory: 64, Time: 1, Threads: 1}
		newParams := security.HashParams{Memory: 128, Time: 2, Threads: 1}
		if _, err := security.OpenStore(d, sec, oldParams, clock.Now).Create(ctx, "frank", "", "pw-frank-1", nil); err != nil {
			t.Fatal(err)
		}
		store := security.OpenStore(d, sec, newParams, clock.Now)
		before, err := store.LookupUser(ctx, "frank")
		if err != nil {
			t.Fatal(err)
		}
		hasher := security.NewHasher(newParams)
		if !hasher.NeedsRehash(before.PasswordHash) {
			t.Fatal("the old hash does not need a rehash; the test proves nothing")
		}
		auth := &security.PasswordAuthenticator{Users: store, Hasher: hasher}
		login := func(password string) error {
			raw, _ := json.Marshal(password)
			_, err := auth.Authenticate(ctx, security.LoginRequest{Type: "password", Identifier: "frank", Credentials: raw})
			return err
		}

		clock.Advance(time.Hour)
		if err := login("wrong"); !errors.Is(err, security.ErrCredentialsInvalid) {
			t.Fatalf("wrong password = %v", err)
		}
		if u, _ := store.LookupUser(ctx, "frank"); u.PasswordHash != before.PasswordHash {
			t.Fatal("a failed login changed the hash")
		}
		if err := login("pw-frank-1"); err != nil {
			t.Fatalf("login = %v", err)
		}
		after, err := store.LookupUser(ctx, "frank")
		if err != nil {
			t.Fatal(err)
		}
		if after.PasswordHash == before.PasswordHash || hasher.NeedsRehash(after.PasswordHash) {
			t.Errorf("hash not upgraded: %q", after.PasswordHash)
		}
		if !after.TokensValidAfter.Equal(before.TokensValidAfter) || !after.PasswordChangedAt.Equal(before.PasswordChangedAt) {
			t.Errorf("upgrade moved the token cut-off or the password age: %v/%v → %v/%v",
				before.TokensValidAfter, before.PasswordChangedAt, after.TokensValidAfter, after.PasswordChangedAt)
		}
		if hist, err := store.PasswordHashes(ctx, after.ID, 10); err != nil || len(hist) != 1 {
			t.Errorf("history = %d entries, %v; want the one from Create", len(hist), err)
		}
		if err := login("pw-frank-1"); err != nil {
			t.Errorf("login with the upgraded hash = %v", err)
		}
		// A password changed between verify and upgrade wins: the upgrade is conditional.
		if err := store.UpgradePasswordHash(ctx, after.ID, before.PasswordHash, "$argon2id$stale"); err != nil {
			t.Fatal(err)
		}
		if u, _ := store.LookupUser(ctx, "frank"); u.PasswordHash != after.PasswordHash {
			t.Error("an upgrade from a stale hash overwrote the current one")
		}
	})
}

// migratedSecurity applies the security migrations to d and returns a fake clock at 2026-01-01
// and the default security configuration, for tests of the built-in store.
func migratedSecurity(t *testing.T, d *db.DB) (*svctest.Clock, config.Security) {
	t.Helper()
	if err := db.Migrate(context.Background(), d, *security.Migrations()); err != nil {
		t.Fatal(err)
	}
	return svctest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), config.Default().Security
}

func TestPermissionMatch(t *testing.T) {
	for _, tt := range []struct {
		pattern, token string
		want           bool
	}{
		{"*", "anything.at.all", true}, {"cron.*", "cron.schedule.query", true}, {"cron.*", "cron", false},
		{"cron.*", "cronx.y", false}, {"sys.monitor", "sys.monitor", true}, {"sys.monitor", "sys.monitor.x", false},
	} {
		if got := security.MatchPermission(tt.pattern, tt.token); got != tt.want {
			t.Errorf("security.MatchPermission(%q, %q) = %t, want %t", tt.pattern, tt.token, got, tt.want)
		}
	}
	pc := security.NewRolePermissions(map[string][]string{"ops": {"cron.*", "sys.monitor"}, "admin": {"*"}})
	if got := pc.Tokens([]string{"ops", "ghost", "ops"}); len(got) != 2 || got[0] != "cron.*" {
		t.Errorf("Tokens = %v", got)
	}
	ok, _ := pc.HasPermission(context.Background(), &rpc.Principal{Roles: []string{"ops"}}, "cron.run.query")
	no, _ := pc.HasPermission(context.Background(), &rpc.Principal{Roles: []string{"ops"}}, "approval.admin")
	if !ok || no {
		t.Errorf("HasPermission = %t, %t; want true, false", ok, no)
	}
}

func TestHasher(t *testing.T) {
	h := security.NewHasher(security.HashParams{Memory: 64, Time: 1, Threads: 1})
	enc, err := h.Hash("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	if !h.Verify(enc, "s3cret") || h.Verify(enc, "s3cret ") || h.Verify("garbage", "s3cret") {
		t.Error("argon2id verify wrong")
	}
	if h.NeedsRehash(enc) || !security.NewHasher(security.HashParams{}).NeedsRehash(enc) {
		t.Error("NeedsRehash wrong")
	}
	bc, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), 10)
	if !h.Verify(string(bc), "s3cret") || h.Verify(string(bc), "nope") {
		t.Error("bcrypt verify wrong")
	}
	b := security.NewHasher(security.HashParams{Algorithm: security.AlgorithmBcrypt, BcryptCost: 4})
	if b.Params().BcryptCost != 10 {
		t.Errorf("bcrypt cost = %d, want raised to 10", b.Params().BcryptCost)
	}
}

func TestBearerToken(t *testing.T) {
	for _, tt := range []struct{ header, query, want string }{
		{"Bearer abc", "", "abc"}, {"bearer abc", "", "abc"}, {"BEARER  abc ", "", "abc"},
		{"Basic abc", "", ""}, {"", "q", "q"}, {"Bearer ", "q", "q"},
	} {
		r := httptest.NewRequest("POST", "/api?__accessToken="+tt.query, nil)
		if tt.header != "" {
			r.Header.Set("Authorization", tt.header)
		}
		if got := security.BearerToken(r); got != tt.want {
			t.Errorf("BearerToken(%q, %q) = %q, want %q", tt.header, tt.query, got, tt.want)
		}
	}
}
