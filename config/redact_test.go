package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pelletier/go-toml/v2"
)

func TestRedacted(t *testing.T) {
	t.Parallel()
	const file = `
[svc.app]
port = 8080
[svc.data_sources.primary]
type = "postgres"
host = "db"
database = "svc"
password = "pg-pass"
[svc.data_sources.empty]
type = "sqlite"
path = "x.db"
[svc.kvstore]
password = "kv-pass"
[svc.api.body_encoding]
key = "AAECAwQFBgcICQoLDA0ODw=="
[svc.security]
secret = "abcd"
[svc.security.api_keys.ops]
key = "api-key"
roles = ["ops"]
[svc.security.basic_accounts.bot]
password = "bot-pass"
[svc.security.trust_login.apps.crm]
redirect_urls = ["https://crm.example.com/"]
secret = "beef"
[svc.storage.objstore]
access_key = "ak"
secret_key = "sk"
[svc.integration]
secret_key = "AAECAwQFBgcICQoLDA0ODw=="
`
	r := mustLoad(t, file, nil).Redacted()
	get := func(path ...string) any {
		var v any = r
		for _, p := range path {
			v = v.(map[string]any)[p]
		}
		return v
	}
	tests := []struct {
		path []string
		want any
	}{
		{[]string{"svc", "data_sources", "primary", "password"}, RedactedValue},
		{[]string{"svc", "data_sources", "primary", "host"}, "db"},
		{[]string{"svc", "data_sources", "empty", "password"}, ""},
		{[]string{"svc", "kvstore", "password"}, RedactedValue},
		{[]string{"svc", "api", "body_encoding", "key"}, RedactedValue},
		{[]string{"svc", "security", "secret"}, RedactedValue},
		{[]string{"svc", "security", "api_keys", "ops", "key"}, RedactedValue},
		{[]string{"svc", "security", "api_keys", "ops", "roles"}, []any{"ops"}},
		{[]string{"svc", "security", "basic_accounts", "bot", "password"}, RedactedValue},
		{[]string{"svc", "security", "trust_login", "apps", "crm", "secret"}, RedactedValue},
		{[]string{"svc", "storage", "objstore", "access_key"}, RedactedValue},
		{[]string{"svc", "storage", "objstore", "secret_key"}, RedactedValue},
		{[]string{"svc", "integration", "secret_key"}, RedactedValue},
		{[]string{"svc", "security", "token_expires"}, "168h"},
		{[]string{"svc", "security", "trust_login", "code_ttl"}, "1m"},
		{[]string{"svc", "app", "body_limit"}, "32mib"},
		{[]string{"svc", "app", "port"}, int64(8080)},
		{[]string{"svc", "security", "token_type"}, "jwt_token"},
	}
	for _, tt := range tests {
		if got := get(tt.path...); !cmp.Equal(got, tt.want) {
			t.Errorf("%v = %#v, want %#v", tt.path, got, tt.want)
		}
	}
	if _, ok := get("svc", "mcp").(map[string]any)["require_auth"]; ok {
		t.Errorf("unset require_auth is present, want it omitted")
	}
}

// TestRedactedRoundTrip: without secrets, the redacted map is a file that loads back to the same
// configuration.
func TestRedactedRoundTrip(t *testing.T) {
	t.Parallel()
	const file = `
[svc.app]
port = 8080
trusted_proxies = ["10.0.0.0/8"]
[svc.data_sources.primary]
type = "sqlite"
path = "x.db"
[svc.approval]
form_snapshot_retention = "7d"
[svc.mcp]
require_auth = false
[svc.security.ip_whitelists]
default = ["127.0.0.1"]
[[svc.event.routing]]
pattern = "a.*"
transports = ["memory"]
`
	want := mustLoad(t, file, nil)
	out, err := toml.Marshal(want.Redacted())
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), out, 0o644); err != nil {
		t.Fatal(err)
	}
	got, warnings, err := Load(LoadOptions{Dirs: []string{dir}, Env: envOf(nil)})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("Load = %v, %q; file:\n%s", err, warnings, out)
	}
	opts := cmp.Options{ignoreUnexported, cmpopts.IgnoreFields(Config{}, "Source"), cmpopts.EquateEmpty()}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}
