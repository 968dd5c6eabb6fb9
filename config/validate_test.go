package config

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// validConfig is the smallest configuration that passes Validate.
func validConfig() *Config {
	c := Default()
	c.App.Port = 8080
	c.DataSources = map[string]DataSource{PrimaryDataSource: {Type: SQLite, Path: "svc.db", SSLMode: SSLDisable}}
	return c
}

const (
	aes16 = "AAECAwQFBgcICQoLDA0ODw==" // 16 bytes
	aes24 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYX"
	aes32 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	key20 = "AAECAwQFBgcICQoLDA0ODxAREhM=" // 20 bytes
)

func TestValidateValid(t *testing.T) {
	t.Parallel()
	if err := validConfig().Validate(); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
}

// TestShippedConfig: configs/application.toml loads without warnings and validates.
func TestShippedConfig(t *testing.T) {
	t.Parallel()
	cfg, warnings, err := Load(LoadOptions{Dirs: []string{"../configs"}, Env: envOf(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings = %q, want none", warnings)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
	if cfg.App.Port != 8080 || cfg.Storage.Provider != StorageFilesystem || cfg.Security.Secret != "" ||
		!cfg.Storage.AutoMigrate || !cfg.Cron.Store.AutoMigrate || !cfg.Integration.AutoMigrate || !cfg.Approval.AutoMigrate ||
		cfg.Storage.UploadPartRateLimit != 10000 {
		t.Errorf("shipped config = %+v, want port 8080, filesystem storage, every auto_migrate on, no secret, upload_part_rate_limit 10000", cfg)
	}
	home := []Menu{{Type: "menu", Path: "/", Name: "Home", Icon: "house"}}
	if diff := cmp.Diff(home, cfg.Security.Menus); diff != "" {
		t.Errorf("shipped menus mismatch (-want +got):\n%s", diff)
	}
	// docs/events.md: storage and approval events through the outbox to memory, the rest on
	// memory, all written in the file (event.WithTransactionalRoutes adds nothing to such rules:
	// TestWithTransactionalRoutes).
	routes := []EventRoute{
		{Pattern: "svc.storage.*", Transports: []string{TransportOutbox, TransportMemory}},
		{Pattern: "approval.*", Transports: []string{TransportOutbox, TransportMemory}},
	}
	ev := cfg.Event
	if diff := cmp.Diff(routes, ev.Routing); diff != "" {
		t.Errorf("shipped event routing mismatch (-want +got):\n%s", diff)
	}
	if !ev.Transports.Outbox.Enabled || ev.Transports.Outbox.Sink != TransportMemory || ev.DefaultTransport != TransportMemory ||
		ev.Transports.TxMemory.Enabled {
		t.Errorf("shipped event transports = %+v, default %q; want the outbox to memory, default memory, no tx_memory",
			ev.Transports, ev.DefaultTransport)
	}
}

// TestShippedMenuExample: the commented admin group in configs/application.toml, uncommented, is
// a valid menu tree (a user who copies it gets what the comment says).
func TestShippedMenuExample(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../configs/application.toml")
	if err != nil {
		t.Fatal(err)
	}
	var example []string
	in := false
	for _, line := range strings.Split(string(raw), "\n") {
		if line == "# [[svc.security.menus]]" {
			in = true
		}
		if in && !strings.HasPrefix(line, "#") {
			break
		}
		if in {
			example = append(example, strings.TrimPrefix(strings.TrimPrefix(line, "#"), " "))
		}
	}
	if len(example) == 0 {
		t.Fatal("no commented menu example in configs/application.toml")
	}
	dir := t.TempDir()
	file := "[svc.app]\nport = 8080\n[svc.data_sources.primary]\ntype = \"sqlite\"\npath = \"x.db\"\n" + strings.Join(example, "\n")
	if err := os.WriteFile(filepath.Join(dir, "application.toml"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, warnings, err := Load(LoadOptions{Dirs: []string{dir}, Env: envOf(nil)})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("Load = %v, warnings %q", err, warnings)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate() = %v", err)
	}
	want := []Menu{{Type: "directory", Path: "/system", Name: "System", Icon: "settings", Permissions: []string{"sys.monitor.query"},
		Children: []Menu{
			{Type: "menu", Path: "/system/monitor", Name: "Monitor", Icon: "activity", Permissions: []string{"sys.monitor.query"}},
			{Type: "report", Path: "/report/$key", Name: "Uploads report", Icon: "chart-column", Roles: []string{"admin"},
				Meta: map[string]any{"params": map[string]any{"key": "uploads"}}},
		}}}
	if diff := cmp.Diff(want, cfg.Security.Menus); diff != "" {
		t.Errorf("example menus mismatch (-want +got):\n%s", diff)
	}
}

// oldSampleSecret is the public sample secret configs/application.toml used to ship: anyone
// could mint admin tokens for a server running with it (issue #11 item 1).
const oldSampleSecret = "737663207075626c69632073616d706c65207365637265742c206368616e6765206d65"

// TestValidateSentinels has one case per startup error: errors.Is must hold and the message must
// name the key.
func TestValidateSentinels(t *testing.T) {
	t.Parallel()
	trust := func(c *Config) *TrustLogin {
		c.Security.TrustLogin.Enabled = true
		c.Security.TrustLogin.Apps = map[string]TrustLoginApp{"crm": {RedirectURLs: []string{"https://crm.example.com/"}}}
		return &c.Security.TrustLogin
	}
	tests := []struct {
		name    string
		mutate  func(c *Config)
		want    error
		wantKey string
	}{
		{"body encoding", func(c *Config) {
			c.API.BodyEncoding = APIBodyEncoding{Enabled: true, Encoding: "des+base64", Key: aes16}
		}, ErrInvalidAPIBodyEncoding, "svc.api.body_encoding.encoding"},
		{"body encoding key missing", func(c *Config) {
			c.API.BodyEncoding = APIBodyEncoding{Enabled: true, Encoding: BodyEncodingAESGCM}
		}, ErrMissingAPIBodyEncodingKey, "svc.api.body_encoding.key"},
		{"body encoding key not base64", func(c *Config) {
			c.API.BodyEncoding = APIBodyEncoding{Enabled: true, Encoding: BodyEncodingAESGCM, Key: "not*base64"}
		}, ErrInvalidAPIBodyEncodingKey, "svc.api.body_encoding.key"},
		{"body encoding key size", func(c *Config) {
			c.API.BodyEncoding = APIBodyEncoding{Enabled: true, Encoding: BodyEncodingSM4GCM, Key: aes32}
		}, ErrInvalidAPIBodyEncodingKey, "svc.api.body_encoding.key"},
		{"oracle", func(c *Config) {
			c.DataSources["legacy"] = DataSource{Type: Oracle, Host: "h", Database: "d"}
		}, ErrUnsupportedDBKind, "svc.data_sources.legacy.type"},
		{"sqlserver", func(c *Config) {
			c.DataSources["primary"] = DataSource{Type: SQLServer}
		}, ErrUnsupportedDBKind, "svc.data_sources.primary.type"},
		{"token type", func(c *Config) { c.Security.TokenType = "jwt" }, ErrInvalidTokenType, "svc.security.token_type"},
		{"session on_exceed", func(c *Config) { c.Security.Session.OnExceed = "kick" }, ErrInvalidSessionOnExceed, "svc.security.session.on_exceed"},
		{"lockout strategy", func(c *Config) { c.Security.Lockout.Strategy = "ban" }, ErrInvalidLockoutStrategy, "svc.security.lockout.strategy"},
		{"revocation fail mode", func(c *Config) { c.Security.Revocation.FailMode = "ajar" }, ErrInvalidRevocationFailMode, "svc.security.revocation.fail_mode"},
		{"lockout key", func(c *Config) { c.Security.Lockout.Key = "device" }, ErrInvalidLockoutKey, "svc.security.lockout.key"},
		{"access token lifetime", func(c *Config) {
			c.Security.AccessTokenExpires = 200 * time.Hour
		}, ErrInvalidAccessTokenExpires, "svc.security.access_token_expires"},
		{"menu type", func(c *Config) {
			c.Security.Menus = []Menu{{Type: "page", Path: "/", Name: "Home"}}
		}, ErrInvalidMenu, "svc.security.menus[0].type"},
		{"menu name", func(c *Config) {
			c.Security.Menus = []Menu{{Type: "menu", Path: "/"}}
		}, ErrInvalidMenu, "svc.security.menus[0].name"},
		{"menu child path", func(c *Config) {
			c.Security.Menus = []Menu{{Type: "directory", Path: "/a", Name: "A", Children: []Menu{{Type: "menu", Path: "b", Name: "B"}}}}
		}, ErrInvalidMenu, "svc.security.menus[0].children[0].path"},
		{"menu meta params", func(c *Config) {
			c.Security.Menus = []Menu{{Type: "menu", Path: "/r", Name: "R", Meta: map[string]any{"params": map[string]any{"key": int64(1)}}}}
		}, ErrInvalidMenu, "svc.security.menus[0].meta.params"},
		{"form_data_max_bytes", func(c *Config) { c.Approval.FormDataMaxBytes = -1 }, ErrInvalidApprovalFormDataMaxBytes, "svc.approval.form_data_max_bytes"},
		{"binding consistency", func(c *Config) {
			c.Approval.BusinessBinding.Consistency = "strong"
		}, ErrInvalidApprovalBindingConsistency, "svc.approval.business_binding.consistency"},
		{"binding scan_interval", func(c *Config) {
			c.Approval.BusinessBinding.ScanInterval = -time.Second
		}, ErrInvalidApprovalBusinessBindingWorkerConfig, "svc.approval.business_binding.scan_interval"},
		{"binding batch_size", func(c *Config) {
			c.Approval.BusinessBinding.BatchSize = -1
		}, ErrInvalidApprovalBusinessBindingWorkerConfig, "svc.approval.business_binding.batch_size"},
		{"cron duration", func(c *Config) { c.Cron.Store.RunRetention = -time.Hour }, ErrInvalidCronStoreDuration, "svc.cron.store.run_retention"},
		{"cron count", func(c *Config) { c.Cron.Store.MaxConcurrent = -1 }, ErrInvalidCronStoreCount, "svc.cron.store.max_concurrent"},
		{"cron abandoned", func(c *Config) {
			c.Cron.Store.HeartbeatInterval = 40 * time.Second
		}, ErrCronStoreAbandonedTooSoon, "svc.cron.store.abandoned_after"},
		{"integration log mode", func(c *Config) { c.Integration.Log.Mode = "verbose" }, ErrInvalidIntegrationLogMode, "svc.integration.log.mode"},
		{"script memory limit below the floor", func(c *Config) {
			c.Integration.Script.MemoryLimit = 64 * MiB
		}, ErrScriptMemoryLimitTooSmall, "svc.integration.script.memory_limit"},
		{"integration secret algorithm", func(c *Config) {
			c.Integration.SecretAlgorithm = "des"
		}, ErrInvalidIntegrationSecretAlgorithm, "svc.integration.secret_algorithm"},
		{"integration log retention", func(c *Config) {
			c.Integration.Log.Retention = -time.Hour
		}, ErrInvalidIntegrationLogRetention, "svc.integration.log.retention"},
		{"inbox retention", func(c *Config) {
			c.Event.Middleware.Inbox = true
			c.Event.Transports.Outbox.Enabled = true
			c.Event.Inbox.Retention = 30 * time.Minute
		}, ErrInboxRetentionTooShort, "svc.event.inbox.retention"},
		{"trust login apps", func(c *Config) {
			trust(c).Apps = nil
		}, ErrTrustLoginAppsRequired, "svc.security.trust_login.apps"},
		{"trust login path", func(c *Config) { trust(c).Path = "/api/sso" }, ErrTrustLoginPathInvalid, "svc.security.trust_login.path"},
		{"trust login redirect", func(c *Config) {
			trust(c).Apps["crm"] = TrustLoginApp{RedirectURLs: []string{"/relative"}}
		}, ErrTrustLoginRedirectInvalid, "svc.security.trust_login.apps.crm.redirect_urls[0]"},
		{"trust login redirects empty", func(c *Config) {
			trust(c).Apps["crm"] = TrustLoginApp{}
		}, ErrTrustLoginRedirectsEmpty, "svc.security.trust_login.apps.crm.redirect_urls"},
		{"port", func(c *Config) { c.App.Port = 0 }, ErrMissingPort, "svc.app.port"},
		{"host with a port", func(c *Config) { c.App.Host = "127.0.0.1:8080" }, ErrInvalidValue, "svc.app.host"},
		{"host with a scheme", func(c *Config) { c.App.Host = "http://localhost" }, ErrInvalidValue, "svc.app.host"},
		{"host in brackets", func(c *Config) { c.App.Host = "[::1]" }, ErrInvalidValue, "svc.app.host"},
		{"host wildcard", func(c *Config) { c.App.Host = "*.example.com" }, ErrInvalidValue, "svc.app.host"},
		{"primary", func(c *Config) { c.DataSources = nil }, ErrMissingPrimaryDataSource, "svc.data_sources.primary"},
		{"data source type", func(c *Config) {
			c.DataSources["primary"] = DataSource{Type: "mongodb"}
		}, ErrInvalidDataSource, "svc.data_sources.primary.type"},
		{"data source no type", func(c *Config) { c.DataSources["primary"] = DataSource{} }, ErrInvalidDataSource, "svc.data_sources.primary.type"},
		{"sqlite path", func(c *Config) { c.DataSources["primary"] = DataSource{Type: SQLite} }, ErrInvalidDataSource, "svc.data_sources.primary.path"},
		{"postgres host", func(c *Config) {
			c.DataSources["primary"] = DataSource{Type: Postgres, Database: "svc"}
		}, ErrInvalidDataSource, "svc.data_sources.primary.host"},
		{"mysql database", func(c *Config) {
			c.DataSources["primary"] = DataSource{Type: MySQL, Host: "db"}
		}, ErrInvalidDataSource, "svc.data_sources.primary.database"},
		{"ssl mode", func(c *Config) {
			c.DataSources["primary"] = DataSource{Type: SQLite, Path: "x", SSLMode: "prefer"}
		}, ErrInvalidDataSource, "svc.data_sources.primary.ssl_mode"},
		{"kv network", func(c *Config) { c.KVStore.Network = "udp" }, ErrInvalidKVStore, "svc.kvstore.network"},
		{"storage provider", func(c *Config) { c.Storage.Provider = "s3" }, ErrInvalidStorageProvider, "svc.storage.provider"},
		{"objstore endpoint", func(c *Config) { c.Storage.Provider = StorageObjStore }, ErrInvalidObjStore, "svc.storage.objstore.endpoint"},
		{"secret not hex", func(c *Config) { c.Security.Secret = "not-hex" }, ErrInvalidSecret, "svc.security.secret"},
		{"secret too short", func(c *Config) { c.Security.Secret = strings.Repeat("ab", 31) }, ErrSecretTooShort, "svc.security.secret"},
		{"old sample secret", func(c *Config) { c.Security.Secret = oldSampleSecret }, ErrPublicSecret, "svc.security.secret"},
		{"old sample secret upper case", func(c *Config) { c.Security.Secret = strings.ToUpper(oldSampleSecret) }, ErrPublicSecret, "svc.security.secret"},
		{"old test secret", func(c *Config) {
			c.Security.Secret = "7376637465737473656372657400000000000000000000000000000000000001"
		}, ErrPublicSecret, "svc.security.secret"},
		{"trust app secret not hex", func(c *Config) {
			trust(c).Apps["crm"] = TrustLoginApp{RedirectURLs: []string{"https://crm.example.com/"}, Secret: "xyz"}
		}, ErrInvalidSecret, "svc.security.trust_login.apps.crm.secret"},
		{"body memory budget below body limit", func(c *Config) {
			c.App.BodyLimit, c.App.BodyMemoryBudget = 64*MiB, 32*MiB
		}, ErrInvalidBodyMemoryBudget, "svc.app.body_memory_budget"},
		{"trusted proxy", func(c *Config) { c.App.TrustedProxies = []string{"10.0.0.0/33"} }, ErrInvalidTrustedProxy, "svc.app.trusted_proxies[0]"},
		{"cron http allowed host", func(c *Config) {
			c.Cron.Store.HTTPAllowedHosts = []string{"api.example.com", "*.example.org", "10.0.0.0/8", "https://x.example.com"}
		}, ErrInvalidCronHTTPHost, "svc.cron.store.http_allowed_hosts[3]"},
		{"ip whitelist", func(c *Config) {
			c.Security.IPWhitelists = map[string][]string{"office": {"1.2.3.4", "example.com"}}
		}, ErrInvalidIPWhitelist, "svc.security.ip_whitelists.office[1]"},
		{"api key empty", func(c *Config) {
			c.Security.APIKeys = map[string]APIKey{"ops": {}}
		}, ErrInvalidAPIKey, "svc.security.api_keys.ops.key"},
		{"api key shared", func(c *Config) {
			c.Security.APIKeys = map[string]APIKey{"a": {Key: "k"}, "b": {Key: "k"}}
		}, ErrInvalidAPIKey, "svc.security.api_keys.b.key"},
		{"basic account password", func(c *Config) {
			c.Security.BasicAccounts = map[string]BasicAccount{"bot": {}}
		}, ErrInvalidBasicAccount, "svc.security.basic_accounts.bot.password"},
		{"basic account colon", func(c *Config) {
			c.Security.BasicAccounts = map[string]BasicAccount{"a:b": {Password: "p"}}
		}, ErrInvalidBasicAccount, "svc.security.basic_accounts"},
		{"password policy negative", func(c *Config) {
			c.Security.PasswordPolicy.HistoryDepth = -1
		}, ErrInvalidPasswordPolicy, "svc.security.password_policy.history_depth"},
		{"password policy min above max", func(c *Config) {
			c.Security.PasswordPolicy.MinLength, c.Security.PasswordPolicy.MaxLength = 12, 8
		}, ErrInvalidPasswordPolicy, "svc.security.password_policy.min_length"},
		{"password policy classes", func(c *Config) {
			c.Security.PasswordPolicy.MinCharClasses = 5
		}, ErrInvalidPasswordPolicy, "svc.security.password_policy.min_char_classes"},
		{"integration secret key", func(c *Config) {
			c.Integration.SecretKey = key20
		}, ErrInvalidIntegrationSecretKey, "svc.integration.secret_key"},
		{"full policy", func(c *Config) {
			c.Event.Transports.TxMemory.FullPolicy = "wait"
		}, ErrInvalidEventTransport, "svc.event.transports.tx_memory.full_policy"},
		{"default transport unknown", func(c *Config) {
			c.Event.DefaultTransport = "kafka"
		}, ErrInvalidEventTransport, "svc.event.default_transport"},
		{"default transport disabled", func(c *Config) {
			c.Event.DefaultTransport = TransportTxMemory
		}, ErrInvalidEventTransport, "svc.event.default_transport"},
		{"outbox sink itself", func(c *Config) {
			c.Event.Transports.Outbox = OutboxTransport{Enabled: true, Sink: TransportOutbox}
		}, ErrInvalidEventTransport, "svc.event.transports.outbox.sink"},
		{"kvstore stream without kvstore", func(c *Config) {
			c.Event.Transports.KVStoreStream.Enabled = true
		}, ErrInvalidEventTransport, "svc.event.transports.kvstore_stream.enabled"},
		{"route pattern", func(c *Config) {
			c.Event.Routing = []EventRoute{{Pattern: "a.[", Transports: []string{"memory"}}}
		}, ErrInvalidEventRoute, "svc.event.routing[0].pattern"},
		{"route no transports", func(c *Config) {
			c.Event.Routing = []EventRoute{{Pattern: "a.*"}}
		}, ErrInvalidEventRoute, "svc.event.routing[0].transports"},
		{"route unknown transport", func(c *Config) {
			c.Event.Routing = []EventRoute{{Pattern: "*", Transports: []string{"memory"}}, {Pattern: "a.*", Transports: []string{"redis_stream"}}}
		}, ErrInvalidEventRoute, "svc.event.routing[1].transports"},
		{"push path", func(c *Config) { c.Push.Path = "ws" }, ErrInvalidPushPath, "svc.push.path"},
		{"push bridge without event", func(c *Config) { c.Push.Bridge = []PushBridge{{Broadcast: true}} }, ErrInvalidPushBridge, "svc.push.bridge[0]"},
		{"push bridge bad event", func(c *Config) { c.Push.Bridge = []PushBridge{{Event: "a b", Broadcast: true}} }, ErrInvalidPushBridge, "svc.push.bridge[0]"},
		{"push bridge without target", func(c *Config) {
			c.Push.Bridge = []PushBridge{{Event: "a.b", Users: []string{"u"}}, {Event: "c.d"}}
		}, ErrInvalidPushBridge, "svc.push.bridge[1]"},
		{"console path relative", func(c *Config) { c.Console.Path = "console" }, ErrInvalidConsolePath, "svc.console.path"},
		{"console path root", func(c *Config) { c.Console.Path = "/" }, ErrInvalidConsolePath, "svc.console.path"},
		{"console path under /api", func(c *Config) { c.Console.Path = "/api/ui" }, ErrInvalidConsolePath, "svc.console.path"},
		{"console path unclean", func(c *Config) { c.Console.Path = "/a/../console" }, ErrInvalidConsolePath, "svc.console.path"},
		{"console path pattern", func(c *Config) { c.Console.Path = "/{x}" }, ErrInvalidConsolePath, "svc.console.path"},
		{"log level", func(c *Config) { c.Log.Level = "trace" }, ErrInvalidLogLevel, "svc.log.level"},
		{"language", func(c *Config) { c.I18n.Language = "fr" }, ErrInvalidLanguage, "svc.i18n.language"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			tt.mutate(c)
			err := c.Validate()
			if !errors.Is(err, tt.want) {
				t.Fatalf("Validate() = %v, want %v", err, tt.want)
			}
			if !errorsIsOnly(err, tt.want) {
				t.Errorf("Validate() = %v, want only %v", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.wantKey) {
				t.Errorf("Validate() = %q, want it to start with the key %q", err, tt.wantKey)
			}
		})
	}
}

// TestValidateRawNegatives: negative values replaced by defaults at load are still reported.
func TestValidateRawNegatives(t *testing.T) {
	t.Parallel()
	const base = "[svc.app]\nport = 1\n[svc.data_sources.primary]\ntype = \"sqlite\"\npath = \"x.db\"\n"
	tests := []struct {
		name    string
		file    string
		want    error
		wantKey string
	}{
		{"cron duration", "[svc.cron.store]\npoll_interval = \"-5s\"\n", ErrInvalidCronStoreDuration, "svc.cron.store.poll_interval -5s"},
		{"cron count", "[svc.cron.store]\nbatch_size = -2\n", ErrInvalidCronStoreCount, "svc.cron.store.batch_size -2"},
		{"form_data_max_bytes", "[svc.approval]\nform_data_max_bytes = -1\n", ErrInvalidApprovalFormDataMaxBytes, "svc.approval.form_data_max_bytes -1"},
		{"binding worker", "[svc.approval.business_binding]\nscan_interval = \"-1s\"\n", ErrInvalidApprovalBusinessBindingWorkerConfig, "svc.approval.business_binding.scan_interval"},
		{"log retention", "[svc.integration.log]\nretention = \"-1d\"\n", ErrInvalidIntegrationLogRetention, "svc.integration.log.retention -24h0m0s"},
		{"api key names collide", "[svc.security.api_keys.Ops]\nkey = \"a\"\n[svc.security.api_keys.ops]\nkey = \"b\"\n", ErrInvalidAPIKey, "svc.security.api_keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := mustLoad(t, base+tt.file, nil)
			err := cfg.Validate()
			if !errorsIsOnly(err, tt.want) {
				t.Fatalf("Validate() = %v, want only %v", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.wantKey) {
				t.Errorf("Validate() = %q, want prefix %q", err, tt.wantKey)
			}
		})
	}
	// After load the fields hold the effective values.
	cfg := mustLoad(t, base+"[svc.cron.store]\npoll_interval = \"-5s\"\n", nil)
	if cfg.Cron.Store.PollInterval != 5*time.Second {
		t.Errorf("PollInterval = %v, want the default 5s", cfg.Cron.Store.PollInterval)
	}
}

func TestValidateAllAtOnce(t *testing.T) {
	t.Parallel()
	c := validConfig()
	c.App.Port = 0
	c.Security.TokenType = "x"
	c.Cron.Store.BatchSize = -1
	err := c.Validate()
	for _, want := range []error{ErrMissingPort, ErrInvalidTokenType, ErrInvalidCronStoreCount} {
		if !errors.Is(err, want) {
			t.Errorf("Validate() = %v, want it to include %v", err, want)
		}
	}
}

func TestValidateBodyEncodingKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		be   APIBodyEncoding
		want error
	}{
		{"disabled ignores everything", APIBodyEncoding{Encoding: "junk", Key: "junk"}, nil},
		{"aes 16", APIBodyEncoding{Enabled: true, Key: aes16}, nil},
		{"aes 24", APIBodyEncoding{Enabled: true, Encoding: BodyEncodingAESGCM, Key: aes24}, nil},
		{"aes 32", APIBodyEncoding{Enabled: true, Encoding: BodyEncodingAESGCM, Key: aes32}, nil},
		{"aes 20", APIBodyEncoding{Enabled: true, Encoding: BodyEncodingAESGCM, Key: key20}, ErrInvalidAPIBodyEncodingKey},
		{"sm4 16", APIBodyEncoding{Enabled: true, Encoding: BodyEncodingSM4GCM, Key: aes16}, nil},
		{"sm4 24", APIBodyEncoding{Enabled: true, Encoding: BodyEncodingSM4GCM, Key: aes24}, ErrInvalidAPIBodyEncodingKey},
		{"url-safe base64 refused", APIBodyEncoding{Enabled: true, Key: "AAECAwQFBgcICQoLDA0OD-_"}, ErrInvalidAPIBodyEncodingKey},
		{"unpadded refused", APIBodyEncoding{Enabled: true, Key: "AAECAwQFBgcICQoLDA0ODw"}, ErrInvalidAPIBodyEncodingKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			c.API.BodyEncoding = tt.be
			if err := c.Validate(); !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Errorf("Validate() = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestValidateTrustLogin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		path string
		url  string
		want error
	}{
		{"valid", "/sso/trust", "https://crm.example.com/callback?x=1", nil},
		{"http with port", "/sso", "http://localhost:3000/", nil},
		{"upper-case scheme", "/sso", "HTTPS://crm.example.com/", nil},
		{"path /api", "/api", "https://a.example.com/", ErrTrustLoginPathInvalid},
		{"path under /api", "/api/trust", "https://a.example.com/", ErrTrustLoginPathInvalid},
		{"path /apix is fine", "/apix", "https://a.example.com/", nil},
		{"path relative", "sso/trust", "https://a.example.com/", ErrTrustLoginPathInvalid},
		{"path root", "/", "https://a.example.com/", ErrTrustLoginPathInvalid},
		{"path unclean", "/sso/../api", "https://a.example.com/", ErrTrustLoginPathInvalid},
		{"path query", "/sso?x", "https://a.example.com/", ErrTrustLoginPathInvalid},
		{"redirect relative", "/sso", "/callback", ErrTrustLoginRedirectInvalid},
		{"redirect no host", "/sso", "https:///x", ErrTrustLoginRedirectInvalid},
		{"redirect scheme", "/sso", "ftp://a.example.com/", ErrTrustLoginRedirectInvalid},
		{"redirect javascript", "/sso", "javascript:alert(1)", ErrTrustLoginRedirectInvalid},
		{"redirect userinfo", "/sso", "https://user:pw@a.example.com/", ErrTrustLoginRedirectInvalid},
		{"redirect fragment", "/sso", "https://a.example.com/#x", ErrTrustLoginRedirectInvalid},
		{"redirect empty fragment", "/sso", "https://a.example.com/#", ErrTrustLoginRedirectInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			c.Security.TrustLogin.Enabled = true
			c.Security.TrustLogin.Path = tt.path
			c.Security.TrustLogin.Apps = map[string]TrustLoginApp{"crm": {RedirectURLs: []string{tt.url}}}
			if err := c.Validate(); !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Errorf("Validate() = %v, want %v", err, tt.want)
			}
		})
	}
	c := validConfig()
	c.Security.TrustLogin.Path = "/api"
	if err := c.Validate(); err != nil {
		t.Errorf("disabled trust login: Validate() = %v, want nil", err)
	}
}

func TestOutboxRetryHorizon(t *testing.T) {
	t.Parallel()
	const maxDuration = time.Duration(math.MaxInt64)
	tests := []struct {
		retries int
		want    time.Duration
	}{
		{0, 2046 * time.Second}, // ≤ 0 is 10
		{-3, 2046 * time.Second},
		{1, 2 * time.Second},
		{2, 6 * time.Second},
		{10, 2046 * time.Second},
		{32, (1<<33 - 2) * time.Second}, // the largest that fits
		{33, maxDuration},               // (2^34 − 2) s overflows: saturated
		{64, maxDuration},
		{math.MaxInt, maxDuration},
	}
	for _, tt := range tests {
		if got := OutboxRetryHorizon(tt.retries); got != tt.want {
			t.Errorf("OutboxRetryHorizon(%d) = %v, want %v", tt.retries, got, tt.want)
		}
	}
}

func TestValidateInboxRetention(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		inbox     bool
		outbox    bool
		retries   int
		retention time.Duration
		want      error
	}{
		{"equal to horizon is too short", true, true, 10, 2046 * time.Second, ErrInboxRetentionTooShort},
		{"one second above", true, true, 10, 2047 * time.Second, nil},
		{"non-positive retries mean 10", true, true, 0, 2046 * time.Second, ErrInboxRetentionTooShort},
		{"default retention passes", true, true, 10, 0, nil},
		{"saturated horizon fails closed", true, true, 40, maxDurationForTest, ErrInboxRetentionTooShort},
		{"inbox off", false, true, 40, time.Second, nil},
		{"outbox off", true, false, 40, time.Second, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			c.Event.Middleware.Inbox = tt.inbox
			c.Event.Transports.Outbox.Enabled = tt.outbox
			c.Event.Transports.Outbox.MaxRetries = tt.retries
			c.Event.Inbox.Retention = tt.retention
			if err := c.Validate(); !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Errorf("Validate() = %v, want %v", err, tt.want)
			}
		})
	}
}

const maxDurationForTest = time.Duration(math.MaxInt64)

func TestMCPRequireAuth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		want bool
		nil_ bool
	}{
		{"unset requires auth", "", true, true},
		{"true requires auth", "require_auth = true\n", true, false},
		{"explicit false allows anonymous", "require_auth = false\n", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := mustLoad(t, "[svc.app]\nport = 1\n[svc.mcp]\nenabled = true\n"+tt.file, nil)
			if got := cfg.MCP.AuthRequired(); got != tt.want {
				t.Errorf("AuthRequired() = %t, want %t", got, tt.want)
			}
			if (cfg.MCP.RequireAuth == nil) != tt.nil_ {
				t.Errorf("RequireAuth nil = %t, want %t", cfg.MCP.RequireAuth == nil, tt.nil_)
			}
		})
	}
}

// TestPublicSecretsRefused: every signing secret that ever appeared in the repository is refused
// in any letter case, the message never repeats it, and a fresh 32-byte secret passes.
func TestPublicSecretsRefused(t *testing.T) {
	t.Parallel()
	for _, s := range publicSecrets {
		for _, v := range []string{s, strings.ToUpper(s)} {
			c := validConfig()
			c.Security.Secret = v
			err := c.Validate()
			if !errors.Is(err, ErrPublicSecret) && !errors.Is(err, ErrSecretTooShort) {
				t.Errorf("Validate(secret %s…) = %v, want ErrPublicSecret or ErrSecretTooShort", v[:8], err)
			}
			if err != nil && strings.Contains(strings.ToLower(err.Error()), strings.ToLower(s)) {
				t.Errorf("Validate() message %q repeats the secret", err)
			}
		}
	}
	c := validConfig()
	c.Security.Secret = strings.Repeat("5a", MinSecretBytes)
	if err := c.Validate(); err != nil {
		t.Errorf("Validate(fresh 32-byte secret) = %v, want nil", err)
	}
}

// TestMCPQueryDataSource: svc.mcp.query.data_source must name an entry of svc.data_sources when
// the endpoint is on, and defaults to the primary.
func TestMCPQueryDataSource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		enabled bool
		source  string
		want    error
	}{
		{"default is the primary", true, "", nil},
		{"an existing entry", true, "reader", nil},
		{"a missing entry", true, "nope", ErrInvalidDataSource},
		{"a missing entry while off", false, "nope", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			c.DataSources["reader"] = c.DataSources[PrimaryDataSource]
			c.MCP.Enabled = tt.enabled
			if tt.source != "" {
				c.MCP.Query.DataSource = tt.source
			}
			err := c.Validate()
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Errorf("Validate() = %v, want %v", err, tt.want)
			}
		})
	}
}
