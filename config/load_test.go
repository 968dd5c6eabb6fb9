package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// envOf returns a lookup function over m.
func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// writeConfig writes application.toml with content into dir (created) and returns dir.
func writeConfig(t *testing.T, dir, content string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// load loads file content (if not empty) with env from a fresh directory.
func load(t *testing.T, file string, env map[string]string) (*Config, []string, error) {
	t.Helper()
	dir := t.TempDir()
	if file != "" {
		writeConfig(t, dir, file)
	}
	return Load(LoadOptions{Dirs: []string{dir}, Env: envOf(env)})
}

func mustLoad(t *testing.T, file string, env map[string]string) *Config {
	t.Helper()
	cfg, warnings, err := load(t, file, env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(warnings) > 0 {
		t.Fatalf("Load warnings = %q, want none", warnings)
	}
	return cfg
}

// errorsIsOnly reports whether err is exactly one joined error wrapping sentinel.
func errorsIsOnly(err, sentinel error) bool {
	if !errors.Is(err, sentinel) {
		return false
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return len(j.Unwrap()) == 1
	}
	return true
}

func TestLoadSearchOrder(t *testing.T) {
	// t.Chdir: the search path is relative to the working directory, so no t.Parallel.
	type layout struct{ configs, envDir, cwd, parentConfigs bool }
	tests := []struct {
		name   string
		layout layout
		want   string // the app name of the winning file
	}{
		{"./configs first", layout{true, true, true, true}, "configs"},
		{"SVC_CONFIG_PATH second", layout{false, true, true, true}, "envdir"},
		{"working directory third", layout{false, false, true, true}, "cwd"},
		{"../configs last", layout{false, false, false, true}, "parent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			work := filepath.Join(root, "work")
			if err := os.MkdirAll(work, 0o755); err != nil {
				t.Fatal(err)
			}
			file := func(name string) string { return "[svc.app]\nport = 1\nname = \"" + name + "\"\n" }
			envDir := filepath.Join(root, "elsewhere")
			if tt.layout.configs {
				writeConfig(t, filepath.Join(work, "configs"), file("configs"))
			}
			if tt.layout.envDir {
				writeConfig(t, envDir, file("envdir"))
			}
			if tt.layout.cwd {
				writeConfig(t, work, file("cwd"))
			}
			if tt.layout.parentConfigs {
				writeConfig(t, filepath.Join(root, "configs"), file("parent"))
			}
			t.Chdir(work)
			cfg, _, err := Load(LoadOptions{Env: envOf(map[string]string{"SVC_CONFIG_PATH": envDir})})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if cfg.App.Name != tt.want {
				t.Errorf("App.Name = %q, want %q (source %s)", cfg.App.Name, tt.want, cfg.Source)
			}
		})
	}
}

func TestSearchPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"no SVC_CONFIG_PATH", nil, []string{"configs/application.toml", "application.toml", "../configs/application.toml"}},
		{"directory", map[string]string{"SVC_CONFIG_PATH": "/etc/svc"},
			[]string{"configs/application.toml", "/etc/svc/application.toml", "application.toml", "../configs/application.toml"}},
		{"file", map[string]string{"SVC_CONFIG_PATH": "/etc/svc/prod.toml"},
			[]string{"configs/application.toml", "/etc/svc/prod.toml", "application.toml", "../configs/application.toml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, SearchPath(envOf(tt.env))); diff != "" {
				t.Errorf("SearchPath mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadSources(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	explicit := filepath.Join(writeConfig(t, t.TempDir(), "[svc.app]\nport = 7\n"), FileName)
	tests := []struct {
		name       string
		opts       LoadOptions
		wantErr    error
		wantSource string
		wantPort   uint16
	}{
		{"explicit path", LoadOptions{Path: explicit, Dirs: []string{empty}}, nil, explicit, 7},
		{"explicit path missing", LoadOptions{Path: filepath.Join(empty, "nope.toml")}, os.ErrNotExist, "", 0},
		{"nothing found", LoadOptions{Dirs: []string{empty}}, ErrConfigNotFound, "", 0},
		{"environment alone", LoadOptions{Dirs: []string{empty}, Env: envOf(map[string]string{"SVC_APP_PORT": "9000"})}, nil, "", 9000},
		{"blank port is no port", LoadOptions{Dirs: []string{empty}, Env: envOf(map[string]string{"SVC_APP_PORT": " "})}, ErrConfigNotFound, "", 0},
		{"embedded fallback", LoadOptions{Dirs: []string{empty}, Embedded: []byte("[svc.app]\nport = 8\n")}, nil, SourceEmbedded, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.opts.Env == nil {
				tt.opts.Env = envOf(nil)
			}
			cfg, _, err := Load(tt.opts)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Load error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if cfg.Source != tt.wantSource || cfg.App.Port != tt.wantPort {
				t.Errorf("Source, Port = %q, %d; want %q, %d", cfg.Source, cfg.App.Port, tt.wantSource, tt.wantPort)
			}
		})
	}
}

func TestLoadEnvOverrides(t *testing.T) {
	t.Parallel()
	const file = `
[svc.app]
port = 8080
trusted_proxies = ["10.0.0.1"]

[svc.data_sources.primary]
type = "postgres"
host = "db"
database = "svc"

[svc.data_sources.Read-Replica]
type = "postgres"
host = "replica"
database = "svc"

[svc.security.api_keys.ops]
key = "from-file"
roles = ["ops"]

[svc.security.trust_login.apps.crm-app]
redirect_urls = ["https://crm.example.com/"]
`
	env := map[string]string{
		"SVC_APP_PORT":                                        "9090",
		"SVC_APP_TRUSTED_PROXIES":                             "10.0.0.0/8, 192.168.1.1,,",
		"SVC_APP_BODY_LIMIT":                                  "10mib",
		"SVC_DATA_SOURCES_PRIMARY_PASSWORD":                   "s3cret",
		"SVC_DATA_SOURCES_PRIMARY_PORT":                       "6543",
		"SVC_DATA_SOURCES_READ_REPLICA_SSL_MODE":              "require",
		"SVC_SECURITY_SECRET":                                 "abcd",
		"SVC_SECURITY_TOKEN_EXPIRES":                          "2d",
		"SVC_SECURITY_IP_WHITELISTS_DEFAULT":                  "127.0.0.1,::1",
		"SVC_SECURITY_API_KEYS_OPS_KEY":                       "from-env",
		"SVC_SECURITY_API_KEYS_NEW_KEY":                       "ignored: not in the file",
		"SVC_SECURITY_TRUST_LOGIN_APPS_CRM_APP_REDIRECT_URLS": "https://a.example.com/,https://b.example.com/x",
		"SVC_SECURITY_LOCKOUT_ENABLED":                        "off",
		"SVC_STORAGE_OBJSTORE_USE_SSL":                        "TRUE",
		"SVC_MCP_REQUIRE_AUTH":                                "false",
		"SVC_KVSTORE_DATABASE":                                "3",
		"SVC_EVENT_TRANSPORTS_OUTBOX_MAX_RETRIES":             "5",
		"SVC_LOG_LEVEL":                                       "DEBUG",
		"SVC_I18N_LANGUAGE":                                   "zh_CN",
		"SVC_PUSH_PATH":                                       "",
	}
	cfg := mustLoad(t, file, env)
	f := false
	got := map[string]any{
		"port":          cfg.App.Port,
		"proxies":       cfg.App.TrustedProxies,
		"body_limit":    cfg.App.BodyLimit,
		"primary":       cfg.DataSources["primary"],
		"replica ssl":   cfg.DataSources["Read-Replica"].SSLMode,
		"secret":        cfg.Security.Secret,
		"token_expires": cfg.Security.TokenExpires,
		"whitelist":     cfg.Security.IPWhitelists,
		"api_keys":      cfg.Security.APIKeys,
		"redirects":     cfg.Security.TrustLogin.Apps["crm-app"].RedirectURLs,
		"lockout":       cfg.Security.Lockout.Enabled,
		"use_ssl":       cfg.Storage.ObjStore.UseSSL,
		"require_auth":  cfg.MCP.RequireAuth,
		"kv database":   cfg.KVStore.Database,
		"max_retries":   cfg.Event.Transports.Outbox.MaxRetries,
		"log level":     cfg.Log.Level,
		"language":      cfg.I18n.Language,
		"push path":     cfg.Push.Path,
	}
	want := map[string]any{
		"port":       uint16(9090),
		"proxies":    []string{"10.0.0.0/8", "192.168.1.1"},
		"body_limit": 10 * MiB,
		"primary": DataSource{Type: Postgres, Host: "db", Port: 6543, Password: "s3cret", Database: "svc",
			Schema: "public", SSLMode: SSLDisable},
		"replica ssl":   SSLRequire,
		"secret":        "abcd",
		"token_expires": 48 * time.Hour,
		"whitelist":     map[string][]string{"default": {"127.0.0.1", "::1"}},
		"api_keys":      map[string]APIKey{"ops": {Key: "from-env", Roles: []string{"ops"}}},
		"redirects":     []string{"https://a.example.com/", "https://b.example.com/x"},
		"lockout":       false,
		"use_ssl":       true,
		"require_auth":  &f,
		"kv database":   uint8(3),
		"max_retries":   5,
		"log level":     LogDebug,
		"language":      "zh-CN",
		"push path":     "/ws",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("overrides mismatch (-want +got):\n%s", diff)
	}
}

// TestLoadEnvCreatesPrimary: the environment alone can configure a runnable service.
func TestLoadEnvCreatesPrimary(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, "", map[string]string{
		"SVC_APP_PORT":                  "8081",
		"SVC_DATA_SOURCES_PRIMARY_TYPE": "sqlite",
		"SVC_DATA_SOURCES_PRIMARY_PATH": ":memory:",
		"SVC_DATA_SOURCES_OTHER_TYPE":   "sqlite",
	})
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	want := map[string]DataSource{"primary": {Type: SQLite, Path: ":memory:", SSLMode: SSLDisable}}
	if diff := cmp.Diff(want, cfg.DataSources); diff != "" {
		t.Errorf("DataSources mismatch (-want +got):\n%s", diff)
	}
	if cfg.Source != "" {
		t.Errorf("Source = %q, want empty", cfg.Source)
	}
}

func TestLoadValueErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		file     string
		env      map[string]string
		wantKeys []string // substrings the error must contain
	}{
		{"uint16 overflow", "[svc.app]\nport = 70000\n", nil, []string{"svc.app.port", "out of range for uint16"}},
		{"negative uint16", "[svc.app]\nport = -1\n", nil, []string{"svc.app.port", "out of range"}},
		{"uint8 overflow", "[svc.kvstore]\ndatabase = 256\n", nil, []string{"svc.kvstore.database", "out of range for uint8"}},
		{"string for int", "[svc.app]\nport = \"8080\"\n", nil, []string{"svc.app.port", "want an integer"}},
		{"bad size", "[svc.app]\nport = 1\nbody_limit = \"12qb\"\n", nil, []string{"svc.app.body_limit", "invalid size"}},
		{"negative size", "[svc.storage]\nmax_upload_size = -5\n", nil, []string{"svc.storage.max_upload_size", "negative size"}},
		{"bad duration", "[svc.storage]\nclaim_ttl = \"5 minutes\"\n", nil, []string{"svc.storage.claim_ttl", "invalid duration"}},
		{"bare integer duration", "[svc.storage]\nclaim_ttl = 300\n", nil, []string{"svc.storage.claim_ttl", "want a duration string"}},
		{"string for bool", "[svc.cors]\nenabled = \"yes\"\n", nil, []string{"svc.cors.enabled", "want a boolean"}},
		{"scalar for list", "[svc.cors]\nallow_origins = \"*\"\n", nil, []string{"svc.cors.allow_origins", "want an array"}},
		{"list element type", "[svc.cors]\nallow_origins = [1]\n", nil, []string{"svc.cors.allow_origins[0]", "want a string"}},
		{"scalar for table", "[svc]\napp = 5\n", nil, []string{"svc.app", "want a table"}},
		{"map entry type", "[svc.data_sources]\nprimary = \"sqlite\"\n", nil, []string{"svc.data_sources.primary", "want a table"}},
		{"routing entry", "[[svc.event.routing]]\npattern = 5\n", nil, []string{"svc.event.routing[0].pattern", "want a string"}},
		{"env integer", "", map[string]string{"SVC_APP_PORT": "abc"}, []string{"svc.app.port (from SVC_APP_PORT)", "want an integer"}},
		{"env bool", "[svc.app]\nport = 1\n", map[string]string{"SVC_CORS_ENABLED": "maybe"}, []string{"svc.cors.enabled (from SVC_CORS_ENABLED)"}},
		{"env duration", "[svc.app]\nport = 1\n", map[string]string{"SVC_MONITOR_SAMPLE_INTERVAL": "soon"}, []string{"svc.monitor.sample_interval (from SVC_MONITOR_SAMPLE_INTERVAL)"}},
		{"env tri-state", "[svc.app]\nport = 1\n", map[string]string{"SVC_MCP_REQUIRE_AUTH": "sometimes"}, []string{"svc.mcp.require_auth (from SVC_MCP_REQUIRE_AUTH)"}},
		{"svc not a table", "svc = 1\n", nil, []string{"svc:", "want a table"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := load(t, tt.file, tt.env)
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("Load error = %v, want ErrInvalidValue", err)
			}
			for _, s := range tt.wantKeys {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Load error = %q, want it to contain %q", err, s)
				}
			}
		})
	}
}

func TestLoadAllErrorsAtOnce(t *testing.T) {
	t.Parallel()
	_, _, err := load(t, "[svc.app]\nport = 70000\nbody_limit = \"x\"\n", nil)
	for _, key := range []string{"svc.app.port", "svc.app.body_limit"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("Load error = %v, want it to name %s", err, key)
		}
	}
}

func TestLoadSyntaxError(t *testing.T) {
	t.Parallel()
	_, _, err := load(t, "[svc.app]\nport = = 1\n", nil)
	if err == nil || !strings.Contains(err.Error(), "application.toml:2:") {
		t.Errorf("Load error = %v, want the file and line", err)
	}
}

func TestLoadUnknownKeys(t *testing.T) {
	t.Parallel()
	const file = `
top = 1
[svc.app]
port = 1
[svc.storage]
max_uplod_size = "1gib"
[svc.data_sources.primary]
type = "sqlite"
path = "x.db"
pasword = "x"
[svc.nope]
a = 1
[[svc.event.routing]]
pattern = "a.*"
transports = ["memory"]
transport = "memory"
`
	cfg, warnings, err := load(t, file, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := []string{
		"unknown key top",
		"unknown key svc.data_sources.primary.pasword",
		"unknown key svc.event.routing[0].transport",
		"unknown key svc.nope",
		"unknown key svc.storage.max_uplod_size",
	}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings mismatch (-want +got):\n%s", diff)
	}
	if cfg.Storage.MaxUploadSize != GiB {
		t.Errorf("MaxUploadSize = %v, want the default 1gib", cfg.Storage.MaxUploadSize)
	}
}

func TestLoadValues(t *testing.T) {
	t.Parallel()
	const file = `
[svc.app]
port = 8080
body_limit = 1048576
[svc.approval]
form_snapshot_retention = "7d"
urge_record_retention = "1d12h"
[svc.storage]
max_upload_size = "512mib"
claim_ttl = "90m"
upload_part_rate_limit = 10000
[svc.cron.store]
run_timeout = 0
[svc.mcp]
require_auth = true
[[svc.event.routing]]
pattern = "approval.*"
transports = ["tx_memory", "memory"]
[[svc.event.routing]]
pattern = "*"
transports = ["memory"]
`
	cfg := mustLoad(t, file, nil)
	tr := true
	got := []any{cfg.App.BodyLimit, cfg.Approval.FormSnapshotRetention, cfg.Approval.UrgeRecordRetention,
		cfg.Storage.MaxUploadSize, cfg.Storage.ClaimTTL, cfg.Storage.UploadPartRateLimit, cfg.Cron.Store.RunTimeout, cfg.MCP.RequireAuth, cfg.Event.Routing}
	want := []any{MiB, 7 * Day, 36 * time.Hour, 512 * MiB, 90 * time.Minute, 10000, time.Duration(0), &tr,
		[]EventRoute{{Pattern: "approval.*", Transports: []string{"tx_memory", "memory"}}, {Pattern: "*", Transports: []string{"memory"}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values mismatch (-want +got):\n%s", diff)
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"30s", 30 * time.Second, false},
		{"5m", 5 * time.Minute, false},
		{"24h", 24 * time.Hour, false},
		{"1h30m", 90 * time.Minute, false},
		{"90d", 90 * Day, false},
		{"1d12h", 36 * time.Hour, false},
		{"-2d", -2 * Day, false},
		{"-1d12h", -36 * time.Hour, false},
		{" 0d ", 0, false},
		{"d", 0, true},
		{"1.5d", 0, true},
		{"+1d", 0, true},
		{"1d-1h", 0, true},
		{"1dx", 0, true},
		{"5", 0, true},
		{"", 0, true},
		{"200000d", 0, true},
		{"106751d24h", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseDuration(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseDuration(%q) = %v, %v; want %v, error %t", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestEnvNamesUnique: no two keys of the schema share an environment variable.
func TestEnvNamesUnique(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, key := range schemaKeys() {
		name := EnvName(key)
		if prev, dup := seen[name]; dup {
			t.Errorf("%s and %s share %s", prev, key, name)
		}
		seen[name] = key
	}
	if len(seen) < 180 {
		t.Errorf("schema has %d keys, want the full schema", len(seen))
	}
}

func TestEnvName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"svc.app.port":                            "SVC_APP_PORT",
		"security.secret":                         "SVC_SECURITY_SECRET",
		"svc.data_sources.primary.password":       "SVC_DATA_SOURCES_PRIMARY_PASSWORD",
		"svc.security.trust_login.apps.crm-app.x": "SVC_SECURITY_TRUST_LOGIN_APPS_CRM_APP_X",
	} {
		if got := EnvName(in); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", in, got, want)
		}
	}
}
