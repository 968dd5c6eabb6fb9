package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/svctest"
)

// base is a valid configuration every case starts from (the secret is random per test process:
// svc refuses any secret published in its repository).
var base = `
[svc.app]
port = 18080
[svc.data_sources.primary]
type = "sqlite"
path = "./data/test.db"
[svc.security]
secret = "` + svctest.TestSecret + `"
`

// runCLI runs the svc command line with args against a config file holding toml, and returns
// stdout, stderr and the exit status main would use.
func runCLI(t *testing.T, toml string, args ...string) (string, string, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "application.toml")
	if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	root := newRoot(svctest.NoEnv)
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetArgs(append(args, "--config", path))
	err := root.Execute()
	code := 0
	if err != nil {
		code = 1
		var exit exitError
		if errors.As(err, &exit) {
			code = exit.code
		}
		stderr.WriteString(err.Error())
	}
	return stdout.String(), stderr.String(), code
}

func TestConfigCheckPrintsEffectiveValuesRedacted(t *testing.T) {
	out, _, code := runCLI(t, base+"\n[svc.data_sources.primary]\n", "config", "check")
	if code == 0 {
		t.Fatalf("a duplicate table should fail to parse; got exit 0, out=%s", out)
	}
	out, errOut, code := runCLI(t, base+"\n[svc.storage]\nmax_uplod_size = \"1mib\"\n", "config", "check")
	if code != 0 {
		t.Fatalf("config check exit = %d, want 0; stderr: %s", code, errOut)
	}
	for _, want := range []string{"port = 18080", "body_limit = '32mib'", "token_expires = '168h'", "secret = '<redacted>'"} {
		if !strings.Contains(out, want) {
			t.Errorf("config check output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, svctest.TestSecret[:20]) {
		t.Error("config check printed the secret")
	}
	if !strings.Contains(errOut, "svc.storage.max_uplod_size") {
		t.Errorf("stderr = %q, want a warning naming the unknown key", errOut)
	}
}

// Every startup error of spec §7 makes `svc config check` exit non-zero naming the key and
// the error.
func TestConfigCheckRejectsEveryStartupError(t *testing.T) {
	tests := []struct {
		name, toml, wantKey, wantErr string
	}{
		{"body encoding", "[svc.api.body_encoding]\nenabled = true\nencoding = \"rot13\"\nkey = \"AAAAAAAAAAAAAAAAAAAAAA==\"",
			"svc.api.body_encoding.encoding", "invalid api body encoding"},
		{"body encoding key missing", "[svc.api.body_encoding]\nenabled = true", "svc.api.body_encoding.key", "missing api body encoding key"},
		{"body encoding key size", "[svc.api.body_encoding]\nenabled = true\nkey = \"AAAA\"", "svc.api.body_encoding.key", "invalid api body encoding key"},
		{"db kind", "[svc.data_sources.reports]\ntype = \"oracle\"", "svc.data_sources.reports.type", "unsupported data source type"},
		{"token type", "[svc.security]\ntoken_type = \"paseto\"", "svc.security.token_type", "invalid token type"},
		{"on_exceed", "[svc.security.session]\non_exceed = \"panic\"", "svc.security.session.on_exceed", "invalid session on_exceed"},
		{"lockout strategy", "[svc.security.lockout]\nstrategy = \"ban\"", "svc.security.lockout.strategy", "invalid lockout strategy"},
		{"lockout key", "[svc.security.lockout]\nkey = \"device\"", "svc.security.lockout.key", "invalid lockout key"},
		{"access token lifetime", "[svc.security]\naccess_token_expires = \"2h\"\ntoken_expires = \"1h\"", "svc.security.access_token_expires", "invalid access token lifetime"},
		{"menu", "[[svc.security.menus]]\ntype = \"menu\"\npath = \"home\"\nname = \"Home\"", "svc.security.menus[0].path", "invalid menu entry"},
		{"approval form bytes", "[svc.approval]\nform_data_max_bytes = -1", "svc.approval.form_data_max_bytes", "invalid approval form_data_max_bytes"},
		{"approval consistency", "[svc.approval.business_binding]\nconsistency = \"maybe\"", "svc.approval.business_binding.consistency", "invalid approval business binding consistency"},
		{"approval worker", "[svc.approval.business_binding]\nbatch_size = -5", "svc.approval.business_binding.batch_size", "invalid approval business binding worker config"},
		{"cron duration", "[svc.cron.store]\npoll_interval = \"-5s\"", "svc.cron.store.poll_interval", "invalid cron store duration"},
		{"cron count", "[svc.cron.store]\nbatch_size = -1", "svc.cron.store.batch_size", "invalid cron store count"},
		{"cron abandoned", "[svc.cron.store]\nheartbeat_interval = \"1m\"\nabandoned_after = \"90s\"", "svc.cron.store.abandoned_after", "at least twice heartbeat_interval"},
		{"cron http allowed host", "[svc.cron.store]\nhttp_allowed_hosts = [\"http://api.example.com\"]", "svc.cron.store.http_allowed_hosts[0]", "invalid cron http allowed host"},
		{"integration log mode", "[svc.integration.log]\nmode = \"verbose\"", "svc.integration.log.mode", "invalid integration log mode"},
		{"integration algorithm", "[svc.integration]\nsecret_algorithm = \"des\"", "svc.integration.secret_algorithm", "invalid integration secret algorithm"},
		{"integration retention", "[svc.integration.log]\nretention = \"-1h\"", "svc.integration.log.retention", "invalid integration log retention"},
		{"inbox retention", "[svc.event.middleware]\ninbox = true\n[svc.event.transports.outbox]\nenabled = true\n[svc.event.inbox]\nretention = \"10m\"",
			"svc.event.inbox.retention", "inbox retention not above the outbox retry horizon"},
		{"trust apps", "[svc.security.trust_login]\nenabled = true", "svc.security.trust_login.apps", "trust login apps required"},
		{"trust path", "[svc.security.trust_login]\nenabled = true\npath = \"sso\"\n[svc.security.trust_login.apps.crm]\nredirect_urls = [\"https://crm.example.com/\"]",
			"svc.security.trust_login.path", "invalid trust login path"},
		{"trust redirect", "[svc.security.trust_login]\nenabled = true\n[svc.security.trust_login.apps.crm]\nredirect_urls = [\"javascript:alert(1)\"]",
			"svc.security.trust_login.apps.crm.redirect_urls", "invalid trust login redirect url"},
		{"trust redirects empty", "[svc.security.trust_login]\nenabled = true\n[svc.security.trust_login.apps.crm]\nredirect_urls = []",
			"svc.security.trust_login.apps.crm.redirect_urls", "trust login redirect urls empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The case's tables are appended after base; TOML forbids defining a table twice, so
			// cases that touch [svc.security] replace base's secret line instead.
			toml := base + "\n" + tt.toml
			if strings.HasPrefix(tt.toml, "[svc.security]\n") {
				toml = strings.Replace(base, "[svc.security]\n", tt.toml+"\n", 1)
			}
			_, errOut, code := runCLI(t, toml, "config", "check")
			if code == 0 {
				t.Fatalf("config check exit 0, want non-zero")
			}
			if !strings.Contains(errOut, tt.wantKey) || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr = %q, want it to name %q and %q", errOut, tt.wantKey, tt.wantErr)
			}
		})
	}
}

func TestConfigCheckMissingPort(t *testing.T) {
	_, errOut, code := runCLI(t, strings.Replace(base, "port = 18080", "", 1), "config", "check")
	if code == 0 || !strings.Contains(errOut, "svc.app.port") {
		t.Errorf("exit %d, stderr %q; want a failure naming svc.app.port", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	out, _, code := runCLI(t, base, "version")
	if code != 0 || !strings.HasPrefix(out, "svc ") || !strings.Contains(out, "git commit:") {
		t.Errorf("version printed %q (exit %d)", out, code)
	}
}

// TestVersionFromBuildInfo builds the binary as a user would (go build in this checkout, with VCS
// stamping forced on since this machine's GOFLAGS may turn it off) and checks that `svc version`
// reports the checkout's commit and a module version instead of "unknown" (issue: a go-built
// binary reported unknown for every field).
func TestVersionFromBuildInfo(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, ".git")); err == nil && !fi.IsDir() {
		// Go stamps VCS data only when .git is a directory, not in a linked work tree: build a
		// clone of this work tree's HEAD instead.
		clone := filepath.Join(t.TempDir(), "src")
		if out, err := exec.Command("git", "clone", "-q", root, clone).CombinedOutput(); err != nil {
			t.Fatalf("git clone: %v\n%s", err, out)
		}
		root = clone
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v (the test suite runs in a git checkout)", err)
	}
	bin := filepath.Join(t.TempDir(), "svc")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/svc")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("svc version: %v", err)
	}
	commit := strings.TrimSpace(string(head))
	if !strings.Contains(string(out), "git commit:  "+commit) {
		t.Errorf("svc version printed\n%s\nwant git commit %s", out, commit)
	}
	if strings.HasPrefix(string(out), "svc "+app.DevelopmentBuild) || strings.Contains(string(out), "build time:  "+app.DevelopmentBuild) {
		t.Errorf("svc version printed\n%s\nwant a module version and the commit time", out)
	}
}
