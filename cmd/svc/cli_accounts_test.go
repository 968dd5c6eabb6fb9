package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// usersTOML is the configuration of the user tests, less the data source: a password policy
// (min_length, history) so that policy errors can be provoked, and one configured role.
var usersTOML = `
[svc.app]
port = 18080
[svc.security]
secret = "` + svctest.TestSecret + `"
[svc.security.password_policy]
min_length = 10
history_depth = 3
[svc.security.roles]
admin = ["*"]
ops = ["cron.*"]
`

// sessionsTOML is the configuration of the session tests, less the data source and key-value
// store. The app name keys the Redis session store, so each test gets its own.
func sessionsTOML(appName string) string {
	return fmt.Sprintf(`
[svc.app]
port = 18080
name = %q
[svc.security]
secret = %q
token_type = "opaque_token"
`, appName, svctest.TestSecret)
}

// `svc user add` creates the user with the password from stdin (flag or non-terminal stdin),
// display name and roles, and refuses duplicates, policy violations, empty passwords and
// invalid names with exit status 1 and a readable message, creating nothing.
func TestUserAdd(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		env := newCLIEnv(t, svctest.DataSource(t, kind), usersTOML)
		// The rows run in order on one database: "duplicate" needs the first row's user.
		tests := []struct {
			name             string
			stdin            string
			args             []string
			wantCode         int
			wantOut, wantErr string
		}{
			{"password-stdin with roles", "correct-horse-1\n",
				[]string{"add", "Alice", "--password-stdin", "--roles", "admin, ops", "--display-name", "Alice Liddell"},
				0, "user alice created (id ", ""},
			{"non-terminal stdin without newline", "battery-staple-2", []string{"add", "bob"}, 0, "user bob created (id ", ""},
			{"duplicate in another case", "another-pass-3\n", []string{"add", " ALICE", "--password-stdin"}, 1, "", "user already exists"},
			{"too short for the policy", "short\n", []string{"add", "carol", "--password-stdin"}, 1, "",
				"The password must be at least 10 characters"},
			{"empty password", "\n", []string{"add", "carol", "--password-stdin"}, 1, "", "empty password"},
			{"invalid name", "long-enough-pw\n", []string{"add", "bad name"}, 1, "", "invalid user name"},
		}
		for _, tt := range tests {
			res := env.run(tt.stdin, append([]string{"user"}, tt.args...)...)
			if res.code != tt.wantCode || !strings.Contains(res.out, tt.wantOut) || !strings.Contains(res.errOut, tt.wantErr) {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
					tt.name, res.code, res.out, res.errOut, tt.wantCode, tt.wantOut, tt.wantErr)
			}
		}

		if got, want := env.usernames(), []string{"alice", "bob"}; !cmp.Equal(got, want) {
			t.Errorf("users = %v, want %v", got, want)
		}
		alice := env.user("alice")
		if alice.DisplayName != "Alice Liddell" || !cmp.Equal(alice.Roles, []string{"admin", "ops"}) || alice.Disabled {
			t.Errorf("alice = display name %q, roles %v, disabled %t; want \"Alice Liddell\", [admin ops], false",
				alice.DisplayName, alice.Roles, alice.Disabled)
		}
		env.wantPassword(alice, "correct-horse-1", true)
		env.wantPassword(alice, "another-pass-3", false) // the duplicate did not overwrite it
		bob := env.user("bob")
		if bob.DisplayName != "" || len(bob.Roles) != 0 {
			t.Errorf("bob = display name %q, roles %v; want none", bob.DisplayName, bob.Roles)
		}
		env.wantPassword(bob, "battery-staple-2", true)
	})
}

// `svc user list`, `passwd`, `disable`, `enable` and `roles` change the stored user as
// documented (a password change moves tokens_valid_after; the policy and its history apply).
func TestUserManage(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		env := newCLIEnv(t, svctest.DataSource(t, kind), usersTOML)
		env.mustRun("first-password-1\n", "user", "add", "erin", "--roles", "ops", "--display-name", "Erin")
		env.mustRun("frank-password-2\n", "user", "add", "frank", "--display-name", "Frank")

		lines := strings.Split(strings.TrimSpace(env.mustRun("", "user", "list")), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") {
			t.Fatalf("user list printed %q, want a header and two users", lines)
		}
		for i, want := range [][]string{{"erin", "Erin", "ops", "false", "false"}, {"frank", "Frank", "false", "false"}} {
			if got := strings.Fields(lines[i+1]); len(got) != len(want)+1 || !cmp.Equal(got[:len(want)], want) {
				t.Errorf("user list row %d = %q, want fields %v and the password time", i+1, lines[i+1], want)
			}
		}

		before := env.user("erin")
		out := env.mustRun("second-password-2\n", "user", "passwd", "erin", "--password-stdin")
		if !strings.Contains(out, "password of erin changed") {
			t.Errorf("passwd printed %q", out)
		}
		after := env.user("erin")
		env.wantPassword(after, "first-password-1", false)
		env.wantPassword(after, "second-password-2", true)
		if !after.TokensValidAfter.After(before.TokensValidAfter) || !after.PasswordChangedAt.After(before.PasswordChangedAt) {
			t.Errorf("after passwd tokens_valid_after %v, password_changed_at %v; want both later than %v, %v",
				after.TokensValidAfter, after.PasswordChangedAt, before.TokensValidAfter, before.PasswordChangedAt)
		}
		for _, tt := range []struct{ name, password, wantErr string }{
			{"too short", "short\n", "The password must be at least 10 characters"},
			{"in the history", "first-password-1\n", "The password was used recently"},
		} {
			res := env.run(tt.password, "user", "passwd", "erin")
			if res.code != 1 || !strings.Contains(res.errOut, tt.wantErr) {
				t.Errorf("passwd %s: exit %d, stderr %q; want exit 1 and %q", tt.name, res.code, res.errOut, tt.wantErr)
			}
		}
		env.wantPassword(env.user("erin"), "second-password-2", true)

		if out := env.mustRun("", "user", "disable", "ERIN"); !strings.Contains(out, "user erin disabled") {
			t.Errorf("disable printed %q", out)
		}
		if u := env.user("erin"); !u.Disabled || u.TokensValidAfter.Before(after.TokensValidAfter) {
			t.Errorf("after disable: disabled %t, tokens_valid_after %v; want true and not before %v",
				u.Disabled, u.TokensValidAfter, after.TokensValidAfter)
		}
		if out := env.mustRun("", "user", "enable", "erin"); !strings.Contains(out, "user erin enabled") {
			t.Errorf("enable printed %q", out)
		}
		if env.user("erin").Disabled {
			t.Error("erin still disabled after enable")
		}
		if env.user("frank").Disabled {
			t.Error("frank disabled by commands on erin")
		}

		roleSteps := []struct {
			name, wantOut, wantWarn string
			args                    []string
			want                    []string
		}{
			{"replace", "erin: admin auditor", `role "auditor" grants nothing`, []string{"erin", "admin", "auditor"}, []string{"admin", "auditor"}},
			{"show", "erin: admin auditor", `role "auditor" grants nothing`, []string{"erin"}, []string{"admin", "auditor"}},
			{"clear", "erin: \n", "", []string{"erin", "--clear"}, []string{}},
		}
		for _, tt := range roleSteps {
			res := env.run("", append([]string{"user", "roles"}, tt.args...)...)
			if res.code != 0 || !strings.Contains(res.out, tt.wantOut) || !strings.Contains(res.errOut, tt.wantWarn) {
				t.Errorf("roles %s: exit %d, stdout %q, stderr %q; want exit 0, %q, %q",
					tt.name, res.code, res.out, res.errOut, tt.wantOut, tt.wantWarn)
			}
			if got := env.user("erin").Roles; !cmp.Equal(got, tt.want) {
				t.Errorf("roles %s: stored roles %v, want %v", tt.name, got, tt.want)
			}
		}
	})
}

// Every user subcommand naming an unknown user exits 1 with "user not found" and changes
// nothing.
func TestUserUnknownName(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t, svctest.DataSource(t, config.SQLite), usersTOML)
	env.mustRun("ivan-password-1\n", "user", "add", "ivan", "--roles", "ops")
	tests := []struct {
		name  string
		stdin string
		args  []string
	}{
		{"passwd", "long-enough-1\n", []string{"passwd", "ghost"}},
		{"disable", "", []string{"disable", "ghost"}},
		{"enable", "", []string{"enable", "ghost"}},
		{"roles set", "", []string{"roles", "ghost", "admin"}},
		{"roles show", "", []string{"roles", "ghost"}},
		{"roles clear", "", []string{"roles", "ghost", "--clear"}},
		{"totp enroll", "", []string{"totp", "enroll", "ghost"}},
		{"totp verify", "", []string{"totp", "verify", "ghost", "123456"}},
		{"totp disable", "", []string{"totp", "disable", "ghost"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := env.run(tt.stdin, append([]string{"user"}, tt.args...)...)
			if res.code != 1 || !strings.Contains(res.errOut, "user not found") {
				t.Errorf("exit %d, stderr %q; want exit 1 and \"user not found\"", res.code, res.errOut)
			}
		})
	}
	if got, want := env.usernames(), []string{"ivan"}; !cmp.Equal(got, want) {
		t.Errorf("users = %v, want %v", got, want)
	}
	if u := env.user("ivan"); u.Disabled || !cmp.Equal(u.Roles, []string{"ops"}) {
		t.Errorf("ivan = disabled %t, roles %v; want untouched", u.Disabled, u.Roles)
	}
}

// `svc user totp enroll` prints the otpauth URI (and a QR code) and leaves the secret pending;
// `verify` with a real code activates it, a wrong code does not; answering the enroll prompt
// activates a new secret at once; `totp disable` removes it.
func TestUserTOTP(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		env := newCLIEnv(t, svctest.DataSource(t, kind), usersTOML)
		env.mustRun("grace-password-1\n", "user", "add", "grace")

		res := env.run("", "user", "totp", "verify", "grace", "123456")
		if res.code != 1 || !strings.Contains(res.errOut, "no pending TOTP enrollment") {
			t.Errorf("verify before enroll: exit %d, stderr %q; want exit 1 and no pending enrollment", res.code, res.errOut)
		}

		out := env.mustRun("", "user", "totp", "enroll", "Grace")
		secret := totpSecret(t, out)
		for _, want := range []string{"█", "issuer=svc-app", "not activated yet: run `svc user totp verify grace CODE`"} {
			if !strings.Contains(out, want) {
				t.Errorf("enroll output lacks %q:\n%s", want, out)
			}
		}
		if env.user("grace").HasTOTP() {
			t.Fatal("TOTP active before verification")
		}

		res = env.run("", "user", "totp", "verify", "grace", wrongTOTPCode(t, secret))
		if res.code != 1 || !strings.Contains(res.errOut, "Invalid verification code") {
			t.Errorf("verify with a wrong code: exit %d, stderr %q; want exit 1 and Invalid verification code", res.code, res.errOut)
		}
		if env.user("grace").HasTOTP() {
			t.Fatal("a wrong code activated TOTP")
		}

		out = env.mustRun("", "user", "totp", "verify", "grace", totpCode(t, secret, time.Now()))
		if !strings.Contains(out, "TOTP activated for grace") {
			t.Errorf("verify printed %q", out)
		}
		if u := env.user("grace"); !u.HasTOTP() || u.TOTPSecret != secret {
			t.Fatalf("after verify: HasTOTP %t, secret matches %t; want true, true", u.HasTOTP(), u.TOTPSecret == secret)
		}

		// Re-enrolling by answering the prompt, as a person at the terminal would.
		out, second := env.enrollAnswering("grace")
		if !strings.Contains(out, "TOTP activated for grace") {
			t.Errorf("interactive enroll printed %q", out)
		}
		if u := env.user("grace"); second == secret || u.TOTPSecret != second {
			t.Errorf("after interactive enroll the stored secret is not the new one (new differs from old: %t)", second != secret)
		}

		if out := env.mustRun("", "user", "totp", "disable", "grace"); !strings.Contains(out, "TOTP removed for grace") {
			t.Errorf("totp disable printed %q", out)
		}
		if env.user("grace").HasTOTP() {
			t.Error("TOTP still active after totp disable")
		}
		res = env.run("", "user", "totp", "verify", "grace", totpCode(t, second, time.Now()))
		if res.code != 1 || env.user("grace").HasTOTP() {
			t.Errorf("verify after disable: exit %d, stderr %q; want exit 1 and TOTP off", res.code, res.errOut)
		}
	})
}

// `svc session list|revoke` with opaque tokens work on the sessions the server would see: in
// the primary database of each kind, and in Redis when svc.kvstore is enabled.
func TestSessionListAndRevoke(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		env := newCLIEnv(t, svctest.DataSource(t, kind), sessionsTOML("svc-app"))
		checkSessionCommands(t, env, nil)
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		kvTable := tomlTable(t, "svc.kvstore", svctest.RedisConfig(t))
		app := strings.TrimSuffix(svctest.UniquePrefix(t), ":")
		env := newCLIEnv(t, svctest.DataSource(t, config.SQLite), sessionsTOML(app)+kvTable)
		client := svctest.Redis(t)
		t.Cleanup(func() { deleteRedisKeys(t, client, "svc:session:"+app+":*") })
		checkSessionCommands(t, env, client)
	})
}

// `svc session` refuses to run with the default jwt_token type, naming the setting it needs.
func TestSessionNeedsOpaqueTokens(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t, svctest.DataSource(t, config.SQLite), usersTOML)
	for _, args := range [][]string{{"list", "alice"}, {"revoke", "abc"}, {"revoke", "--user", "alice"}} {
		res := env.run("", append([]string{"session"}, args...)...)
		if want := `sessions exist only with svc.security.token_type = "opaque_token"`; res.code != 1 || !strings.Contains(res.errOut, want) {
			t.Errorf("session %v: exit %d, stderr %q; want exit 1 and %q", args, res.code, res.errOut, want)
		}
	}
}

// checkSessionCommands creates sessions through the security package on env's store (kv nil:
// the database), then lists and revokes them with the CLI and checks that exactly the revoked
// tokens stop verifying.
func checkSessionCommands(t *testing.T, env *cliEnv, kv *redis.Client) {
	t.Helper()
	ctx := context.Background()
	henry, err := env.store.Create(ctx, "henry", "Henry", "henry-password-1", []string{"ops"})
	if err != nil {
		t.Fatal(err)
	}
	sessions := security.OpenSessions(env.cfg, env.db, kv, nil)
	tokens := security.NewOpaqueTokens(sessions)
	issue := func(p *rpc.Principal) string {
		t.Helper()
		at, err := tokens.Issue(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return at.AccessToken
	}
	h1, h2, h3 := issue(henry.Principal()), issue(henry.Principal()), issue(henry.Principal())
	// a principal of a host authenticator, known to the CLI only by its id
	ext := issue(&rpc.Principal{Type: rpc.PrincipalUser, ID: "ext-42", Name: "External"})
	wantLive := func(token string, live bool) {
		t.Helper()
		_, err := tokens.Verify(ctx, token)
		if live && err != nil {
			t.Errorf("session %s: Verify = %v, want it live", security.SessionID(token)[:8], err)
		}
		if !live && !errors.Is(err, security.ErrTokenInvalid) {
			t.Errorf("session %s: Verify = %v, want ErrTokenInvalid", security.SessionID(token)[:8], err)
		}
	}

	for _, tt := range []struct {
		user string
		want []string
	}{
		{"henry", ids(h1, h2, h3)},
		{"HENRY", ids(h1, h2, h3)},
		{"ext-42", ids(ext)},
		{"nobody", nil},
	} {
		if got := listedIDs(t, env.mustRun("", "session", "list", tt.user)); !cmp.Equal(got, tt.want) {
			t.Errorf("session list %s = %v, want %v", tt.user, got, tt.want)
		}
	}

	id1 := security.SessionID(h1)
	if out := env.mustRun("", "session", "revoke", id1); !strings.Contains(out, "session "+id1+" revoked") {
		t.Errorf("revoke printed %q", out)
	}
	wantLive(h1, false)
	wantLive(h2, true)
	for _, id := range []string{id1, strings.Repeat("0", 64)} {
		res := env.run("", "session", "revoke", id)
		if res.code != 1 || !strings.Contains(res.errOut, "no live session "+id) {
			t.Errorf("revoke of a dead id: exit %d, stderr %q; want exit 1 and no live session", res.code, res.errOut)
		}
	}

	if out := env.mustRun("", "session", "revoke", "--user", "henry"); !strings.Contains(out, "2 session(s) of henry revoked") {
		t.Errorf("revoke --user printed %q", out)
	}
	wantLive(h2, false)
	wantLive(h3, false)
	wantLive(ext, true)
	if got := listedIDs(t, env.mustRun("", "session", "list", "henry")); len(got) != 0 {
		t.Errorf("session list henry after revoke --user = %v, want none", got)
	}
	if out := env.mustRun("", "session", "revoke", "--user", "ext-42"); !strings.Contains(out, "1 session(s) of ext-42 revoked") {
		t.Errorf("revoke --user ext-42 printed %q", out)
	}
	wantLive(ext, false)

	for _, args := range [][]string{{}, {id1, "--user", "henry"}, {"a", "b"}} {
		res := env.run("", append([]string{"session", "revoke"}, args...)...)
		if res.code != 1 || !strings.Contains(res.errOut, "give either one session ID or --user USER") {
			t.Errorf("session revoke %v: exit %d, stderr %q; want exit 1 and the usage rule", args, res.code, res.errOut)
		}
	}
}

// cliEnv is one configuration file on a data source of its own: several svc commands run
// against it, and the test reads their effect back through the security package.
type cliEnv struct {
	t     *testing.T
	path  string
	cfg   *config.Config
	db    *db.DB
	store *security.Store
}

// cliResult is what one command run printed and the exit status main would use.
type cliResult struct {
	out, errOut string
	code        int
}

// newCLIEnv writes base plus ds as [svc.data_sources.primary] to a file in t.TempDir(), loads it
// as the CLI will and opens the same database (security migrations applied).
func newCLIEnv(t *testing.T, ds config.DataSource, base string) *cliEnv {
	t.Helper()
	path := filepath.Join(t.TempDir(), "application.toml")
	text := base + tomlTable(t, "svc.data_sources.primary", ds)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(config.LoadOptions{Path: path, Env: svctest.NoEnv})
	if err != nil {
		t.Fatalf("load %s: %v\n%s", path, err, text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := openSecurityDB(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return &cliEnv{t: t, path: path, cfg: cfg, db: d,
		store: security.OpenStore(d, cfg.Security, security.HashParams{}, time.Now)}
}

// run runs `svc args… --config path` with stdin as its standard input.
func (e *cliEnv) run(stdin string, args ...string) cliResult {
	e.t.Helper()
	var stdout bytes.Buffer
	errOut, code := e.exec(strings.NewReader(stdin), &stdout, args...)
	return cliResult{out: stdout.String(), errOut: errOut, code: code}
}

// mustRun is run that fails the test unless the command exits 0; it returns stdout.
func (e *cliEnv) mustRun(stdin string, args ...string) string {
	e.t.Helper()
	res := e.run(stdin, args...)
	if res.code != 0 {
		e.t.Fatalf("svc %s: exit %d, stderr %q", strings.Join(args, " "), res.code, res.errOut)
	}
	return res.out
}

// exec runs the root command like main does (runCLI's pattern, with stdin) and returns
// stderr, the error text included, and the exit status.
func (e *cliEnv) exec(stdin io.Reader, stdout io.Writer, args ...string) (string, int) {
	var stderr bytes.Buffer
	root := newRoot(svctest.NoEnv)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(&stderr)
	root.SetArgs(append(args, "--config", e.path))
	err := root.Execute()
	if err == nil {
		return stderr.String(), 0
	}
	stderr.WriteString(err.Error())
	var exit exitError
	if errors.As(err, &exit) {
		return stderr.String(), exit.code
	}
	return stderr.String(), 1
}

// enrollAnswering runs `svc user totp enroll name`, waits for the prompt, and types the
// current code of the secret it printed. It returns stdout and that secret.
func (e *cliEnv) enrollAnswering(name string) (string, string) {
	e.t.Helper()
	stdinR, stdinW := io.Pipe()
	stdout := &promptWatcher{prompt: "Enter the 6-digit code", seen: make(chan string, 1)}
	done := make(chan struct{})
	var secret string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer stdinW.Close()
		select {
		case text := <-stdout.seen:
			// no t.Fatal off the test goroutine: a failure leaves stdin empty, and the
			// command then exits 0 without activating, which the caller reports
			var err error
			if secret, err = parseTOTPSecret(text); err != nil {
				e.t.Error(err)
				return
			}
			code, err := totp.GenerateCodeCustom(secret, time.Now(), totpOpts)
			if err != nil {
				e.t.Error(err)
				return
			}
			_, _ = io.WriteString(stdinW, code+"\n")
		case <-done:
		}
	}()
	errOut, code := e.exec(stdinR, stdout, "user", "totp", "enroll", name)
	close(done)
	wg.Wait()
	if code != 0 {
		e.t.Fatalf("totp enroll %s answering the prompt: exit %d, stderr %q", name, code, errOut)
	}
	return stdout.String(), secret
}

// user returns the stored user name or fails the test.
func (e *cliEnv) user(name string) *security.User {
	e.t.Helper()
	u, err := e.store.LookupUser(context.Background(), name)
	if err != nil {
		e.t.Fatalf("LookupUser(%q): %v", name, err)
	}
	return u
}

// usernames returns the stored user names in order.
func (e *cliEnv) usernames() []string {
	e.t.Helper()
	users, err := e.store.List(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, u := range users {
		names = append(names, u.Username)
	}
	return names
}

// wantPassword checks whether password matches u's stored hash.
func (e *cliEnv) wantPassword(u *security.User, password string, match bool) {
	e.t.Helper()
	if got := security.NewHasher(security.HashParams{}).Verify(u.PasswordHash, password); got != match {
		e.t.Errorf("user %s: password %q matches = %t, want %t", u.Username, password, got, match)
	}
}

// promptWatcher collects stdout and sends everything written so far once prompt appears.
type promptWatcher struct {
	prompt string
	seen   chan string
	mu     sync.Mutex
	buf    bytes.Buffer
	sent   bool
}

func (w *promptWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, _ := w.buf.Write(p)
	if !w.sent && strings.Contains(w.buf.String(), w.prompt) {
		w.sent = true
		w.seen <- w.buf.String()
	}
	return n, nil
}

func (w *promptWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// tomlTable renders v (a config struct with toml tags) as the TOML table header.
func tomlTable(t *testing.T, header string, v any) string {
	t.Helper()
	b, err := toml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return "\n[" + header + "]\n" + string(b)
}

// totpOpts are the TOTP parameters of the security package (wire-core §5.3).
var totpOpts = totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

var otpauthURI = regexp.MustCompile(`otpauth://totp/\S+`)

// totpSecret returns the secret of the otpauth URI in text or fails the test.
func totpSecret(t *testing.T, text string) string {
	t.Helper()
	secret, err := parseTOTPSecret(text)
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// parseTOTPSecret returns the secret of the otpauth URI in text.
func parseTOTPSecret(text string) (string, error) {
	u, err := url.Parse(otpauthURI.FindString(text))
	if err != nil || u.Query().Get("secret") == "" {
		return "", fmt.Errorf("no otpauth URI with a secret in %q (%v)", text, err)
	}
	return u.Query().Get("secret"), nil
}

// totpCode returns the code of secret at now.
func totpCode(t *testing.T, secret string, now time.Time) string {
	t.Helper()
	code, err := totp.GenerateCodeCustom(secret, now, totpOpts)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// wrongTOTPCode returns a well-formed code that is valid in no step near now.
func wrongTOTPCode(t *testing.T, secret string) string {
	t.Helper()
	var near []string
	for d := -3; d <= 3; d++ {
		near = append(near, totpCode(t, secret, time.Now().Add(time.Duration(d)*30*time.Second)))
	}
	for _, c := range []string{"000000", "123456", "999999"} {
		if !slices.Contains(near, c) {
			return c
		}
	}
	t.Fatal("every candidate wrong code is valid")
	return ""
}

// ids returns the session ids of tokens, sorted.
func ids(tokens ...string) []string {
	var out []string
	for _, tok := range tokens {
		out = append(out, security.SessionID(tok))
	}
	slices.Sort(out)
	return out
}

// listedIDs returns the session ids of `svc session list` output, sorted.
func listedIDs(t *testing.T, out string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("session list printed %q, want a header first", out)
	}
	var got []string
	for _, l := range lines[1:] {
		got = append(got, strings.Fields(l)[0])
	}
	slices.Sort(got)
	return got
}

// deleteRedisKeys removes the keys matching pattern (the CLI's session keys live outside
// svctest.UniquePrefix, so svctest.Redis does not clean them).
func deleteRedisKeys(t *testing.T, client *redis.Client, pattern string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iter := client.Scan(ctx, 0, pattern, 500).Iterator()
	for iter.Next(ctx) {
		if err := client.Unlink(ctx, iter.Val()).Err(); err != nil {
			t.Errorf("unlink %s: %v", iter.Val(), err)
		}
	}
	if err := iter.Err(); err != nil {
		t.Errorf("scan %s: %v", pattern, err)
	}
}
