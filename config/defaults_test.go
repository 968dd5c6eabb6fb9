package config

import (
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// wantDefaults is the effective configuration of an empty file: every default of spec §5.3,
// §5.4, §6.1 and §8.3, keys without a default left zero.
func wantDefaults() *Config {
	return &Config{
		App: App{Name: "svc-app", BodyLimit: 32 * MiB, BodyMemoryBudget: 64 * MiB, BodyReadIdleTimeout: 30 * time.Second,
			BodyMinRate: 1 * KiB, BodyMinRateGrace: 10 * time.Second, BodyMemoryPerClient: 32 * MiB, BodyMemoryRate: 64 * KiB},
		KVStore: KVStore{Host: "127.0.0.1", Port: 6379, Network: NetworkTCP},
		API: API{
			RateLimit:    RateLimit{Max: 100, Period: 5 * time.Minute},
			BodyEncoding: APIBodyEncoding{Encoding: BodyEncodingAESGCM},
		},
		Security: Security{
			TokenExpires:       168 * time.Hour,
			AccessTokenExpires: 30 * time.Minute,
			RefreshNotBefore:   15 * time.Minute,
			LoginRateLimit:     6,
			RefreshRateLimit:   1,
			HashMemoryBudget:   24 * MiB,
			TokenType:          TokenTypeJWT,
			Lockout: Lockout{
				Enabled: true, MaxFailures: 10, Window: 15 * time.Minute, LockDuration: 15 * time.Minute,
				Strategy: LockoutLock, BackoffBase: time.Second, BackoffMax: 15 * time.Minute, Key: LockoutKeyUserIP,
			},
			Session: Session{OnExceed: OnExceedEvictOldest, IdleTTL: 30 * time.Minute, MaxLifetime: 168 * time.Hour, Sliding: true},
			TrustLogin: TrustLogin{
				Path: "/sso/trust", CodeTTL: 60 * time.Second, BindUserAgent: true,
				RateLimit: RateLimit{Max: 120, Period: time.Minute},
			},
			Revocation: Revocation{FailMode: RevocationFailClosed, MaxFeedAge: 10 * time.Second},
		},
		Storage: Storage{
			Provider:             StorageMemory,
			ObjStore:             ObjStore{Bucket: "svc-app"},
			Filesystem:           Filesystem{Root: "./storage"},
			MaxUploadSize:        1073741824,
			ClaimTTL:             24 * time.Hour,
			MaxPendingClaims:     100,
			SweepInterval:        5 * time.Minute,
			SweepBatchSize:       200,
			DeleteWorkerInterval: 5 * time.Minute,
			DeleteBatchSize:      100,
			DeleteConcurrency:    8,
			DeleteMaxAttempts:    12,
			DeleteLeaseWindow:    5 * time.Minute,
		},
		Monitor: Monitor{SampleInterval: 10 * time.Second, SampleDuration: 2 * time.Second},
		MCP:     MCP{Query: MCPQuery{Permission: DefaultMCPQueryPermission, MaxRows: 1000, MaxBytes: 4 * MiB, MaxSQLBytes: 64 * KiB, Timeout: 10 * time.Second, DataSource: PrimaryDataSource}},
		Approval: Approval{
			TimeoutScanInterval:    time.Minute,
			PreWarningScanInterval: 5 * time.Minute,
			CleanupScanInterval:    24 * time.Hour,
			DelegationMaxDepth:     10,
			FormSnapshotRetention:  90 * 24 * time.Hour,
			UrgeRecordRetention:    30 * 24 * time.Hour,
			CCRecordRetention:      90 * 24 * time.Hour,
			FormDataMaxBytes:       65536,
			BusinessBinding:        BusinessBinding{Consistency: ConsistencySynchronous, ScanInterval: 10 * time.Second, BatchSize: 100},
		},
		Cron: Cron{Store: CronStore{
			PollInterval: 5 * time.Second, BatchSize: 32, MaxConcurrent: 16, MisfireThreshold: time.Minute,
			HeartbeatInterval: 10 * time.Second, AbandonedAfter: time.Minute,
		}},
		Integration: Integration{
			SecretAlgorithm: SecretAlgorithmAES,
			RunTimeout:      30 * time.Second,
			MaxResponseBody: 8 * MiB,
			Log:             InvocationLog{Mode: InvocationLogErrors, CaptureLimit: 4096},
			Inbound:         Inbound{RateLimit: RateLimit{Max: 120, Period: time.Minute}},
			ScriptCache:     ScriptCache{MaxBytes: 32 * MiB, TTL: time.Hour},
			Script:          Script{MemoryLimit: 512 * MiB, Concurrency: runtime.NumCPU(), QueueWait: 5 * time.Second},
		},
		Push: Push{
			Path: "/ws", PingInterval: 30 * time.Second, WriteTimeout: 10 * time.Second, SendBuffer: 32,
			MaxConnectionsPerUser: 10, SessionRecheckInterval: 60 * time.Second,
		},
		Event: Event{
			DefaultTransport: "memory",
			AsyncQueueSize:   4096,
			AsyncWorkers:     4,
			PublishTimeout:   5 * time.Second,
			Transports: EventTransports{
				Memory:   MemoryTransport{QueueSize: 1024, FullPolicy: FullPolicyError},
				TxMemory: TxMemoryTransport{QueueSize: 1024, FullPolicy: FullPolicyError},
				Outbox: OutboxTransport{
					RelayInterval: 10 * time.Second, MaxRetries: 10, BatchSize: 100, LeaseMultiplier: 4,
					MinLease: 15 * time.Second, Sink: "memory", CleanupInterval: time.Hour, CompletedTTL: 168 * time.Hour,
				},
				KVStoreStream: KVStoreStreamTransport{
					StreamPrefix: "svc:events:", BlockTimeout: 5 * time.Second, ClaimIdle: 60 * time.Second,
					ClaimInterval: 30 * time.Second, ClaimBatchSize: 64, ReaperConcurrency: 4,
					HandlerTimeout: 30 * time.Second, SetupTimeout: 5 * time.Second, ConsumerID: "svc",
					StartID: "0", IdleGroupSweepInterval: 10 * time.Minute,
				},
			},
			Inbox: Inbox{Retention: 168 * time.Hour, ProcessingLease: 10 * time.Minute, CleanupInterval: time.Hour},
		},
		Log:     Log{Level: LogInfo},
		I18n:    I18n{Language: "en"},
		Admin:   Admin{Address: "127.0.0.1:9464"},
		Metrics: Metrics{Path: "/metrics"},
		Tracing: Tracing{SampleRatio: 1, ServiceName: "svc-app"},
		Console: Console{Enabled: true, Path: "/console"},
		Audit:   Audit{Retention: 90 * 24 * time.Hour, QueueSize: 4096, BatchSize: 128, SweepInterval: time.Hour, FlushInterval: 250 * time.Millisecond},
		Backup:  Backup{Destination: BackupToFolder, Dir: "./data/backups", StoragePrefix: "backups"},
	}
}

var ignoreUnexported = cmpopts.IgnoreUnexported(Config{})

func TestDefault(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff(wantDefaults(), Default(), ignoreUnexported); diff != "" {
		t.Errorf("Default() mismatch (-want +got):\n%s", diff)
	}
}

// TestLoadEmptyFileDefaults: a file with only the port yields the defaults, and so does a file
// that sets every tunable to zero or a negative value where that is not a startup error.
func TestLoadEmptyFileDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
	}{
		{"only port", "[svc.app]\nport = 8080\n"},
		{"non-positive values", `
[svc.app]
port = 8080
body_limit = 0
body_memory_budget = 0
body_read_idle_timeout = "-1s"
body_min_rate = 0
body_min_rate_grace = "-1s"
body_memory_per_client = 0
body_memory_rate = 0
[svc.api.rate_limit]
max = -1
period = "-5m"
[svc.security]
token_expires = "0s"
access_token_expires = "-5m"
login_rate_limit = -3
token_type = ""
[svc.security.lockout]
max_failures = 0
strategy = ""
[svc.security.trust_login.rate_limit]
max = 0
[svc.storage]
max_upload_size = 0
claim_ttl = "-1h"
sweep_batch_size = -1
upload_part_rate_limit = -1
orphan_retention = "-1h"
[svc.approval]
timeout_scan_interval = "-1m"
delegation_max_depth = -2
form_data_max_bytes = 0
[svc.cron.store]
batch_size = 0
[svc.integration.log]
capture_limit = 0
[svc.push]
send_buffer = -1
[svc.event]
async_workers = 0
[svc.event.transports.outbox]
max_retries = -1
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := mustLoad(t, tt.file, nil)
			want := wantDefaults()
			want.App.Port = 8080
			if diff := cmp.Diff(want, cfg, ignoreUnexported, cmpopts.IgnoreFields(Config{}, "Source")); diff != "" {
				t.Errorf("Load mismatch (-want +got):\n%s", diff)
			}
			if err := cfg.Validate(); !errorsIsOnly(err, ErrMissingPrimaryDataSource) {
				t.Errorf("Validate() = %v, want only ErrMissingPrimaryDataSource", err)
			}
		})
	}
}

func TestPositive(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		v, def time.Duration
		want   time.Duration
	}{
		{"positive kept", time.Second, time.Minute, time.Second},
		{"zero replaced", 0, time.Minute, time.Minute},
		{"negative replaced", -time.Second, time.Minute, time.Minute},
		{"zero default", -time.Second, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := positive(tt.v, tt.def); got != tt.want {
				t.Errorf("positive(%v, %v) = %v, want %v", tt.v, tt.def, got, tt.want)
			}
		})
	}
}

// TestBodyMemoryBudgetDefault: body_memory_budget defaults to twice body_limit, never below 64 MiB.
func TestBodyMemoryBudgetDefault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		bodyLimit Size
		want      Size
	}{
		{"small limit takes the floor", 4 * MiB, 64 * MiB},
		{"default limit", 0, 64 * MiB},
		{"large limit doubles", 100 * MiB, 200 * MiB},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := App{BodyLimit: tt.bodyLimit}
			a.applyDefaults()
			if a.BodyMemoryBudget != tt.want {
				t.Errorf("BodyMemoryBudget = %s, want %s", a.BodyMemoryBudget, tt.want)
			}
		})
	}
}

// TestMaxConnectionsPerUserDefault: the per-user socket cap defaults to 10 (issue #31), unset
// and 0 alike; a positive value is kept and a negative one removes the cap.
func TestMaxConnectionsPerUserDefault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		v, want int
	}{
		{"unset takes the default", 0, 10},
		{"positive kept", 3, 3},
		{"negative kept: no cap", -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := Push{MaxConnectionsPerUser: tt.v}
			p.applyDefaults()
			if p.MaxConnectionsPerUser != tt.want {
				t.Errorf("MaxConnectionsPerUser = %d, want %d", p.MaxConnectionsPerUser, tt.want)
			}
		})
	}
}
