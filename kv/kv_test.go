package kv_test

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/kv"
	"github.com/svc-framework/svc/svctest"
)

func TestOpenDisabled(t *testing.T) {
	t.Parallel()
	// An unreachable address proves no connection is attempted.
	client, err := kv.Open(t.Context(), config.KVStore{Enabled: false, Host: "192.0.2.1", Port: 1})
	if client != nil || err != nil {
		t.Fatalf("Open(disabled) = %v, %v; want nil, nil", client, err)
	}
}

func TestOpenRedis(t *testing.T) {
	t.Parallel()
	cfg := svctest.RedisConfig(t)
	client, err := kv.Open(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer func() { _ = client.Close() }()
	key := svctest.UniquePrefix(t) + "greeting"
	defer client.Del(t.Context(), key)
	if err := client.Set(t.Context(), key, "hello", time.Minute).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if got, err := client.Get(t.Context(), key).Result(); err != nil || got != "hello" {
		t.Errorf("GET = %q, %v; want hello, nil", got, err)
	}
}

func TestOpenSelectsDatabase(t *testing.T) {
	t.Parallel()
	cfg := svctest.RedisConfig(t)
	cfg.Database = 3
	client, err := kv.Open(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer func() { _ = client.Close() }()
	info, err := client.ClientInfo(t.Context()).Result()
	if err != nil {
		t.Fatalf("CLIENT INFO: %v", err)
	}
	if info.DB != 3 {
		t.Errorf("connection database = %d, want 3", info.DB)
	}
}

func TestOpenErrorHidesPassword(t *testing.T) {
	t.Parallel()
	const password = "kv-s3cr3t-Pa55"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := uint16(l.Addr().(*net.TCPAddr).Port)
	_ = l.Close()
	tests := []struct {
		name     string
		cfg      func(t *testing.T) config.KVStore
		wantAddr string
	}{
		{"unreachable", func(*testing.T) config.KVStore {
			return config.KVStore{Enabled: true, Host: "127.0.0.1", Port: closed, User: "svc", Password: password}
		}, "127.0.0.1"},
		{"wrong password", func(t *testing.T) config.KVStore {
			cfg := svctest.RedisConfig(t)
			cfg.User, cfg.Password = "svc-no-such-user", password
			return cfg
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client, err := kv.Open(t.Context(), tt.cfg(t))
			if err == nil {
				_ = client.Close()
				t.Fatal("Open succeeded, want an error")
			}
			if strings.Contains(err.Error(), password) {
				t.Errorf("error %q contains the password", err)
			}
			if !strings.Contains(err.Error(), tt.wantAddr) {
				t.Errorf("error %q does not name the address %s", err, tt.wantAddr)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		cfg                 config.KVStore
		wantNetwork, wantAt string
		wantErr             error
	}{
		{"defaults", config.KVStore{Enabled: true}, "tcp", "127.0.0.1:6379", nil},
		{"tcp", config.KVStore{Network: "tcp", Host: "redis.internal", Port: 6380}, "tcp", "redis.internal:6380", nil},
		{"ipv6", config.KVStore{Host: "::1", Port: 6379}, "tcp", "[::1]:6379", nil},
		{"unix", config.KVStore{Network: "unix", Host: "/run/redis.sock", Port: 6379}, "unix", "/run/redis.sock", nil},
		{"unix without path", config.KVStore{Network: "unix"}, "", "", config.ErrInvalidKVStore},
		{"unknown network", config.KVStore{Network: "udp"}, "", "", config.ErrInvalidKVStore},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts, err := kv.Options(tt.cfg)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Options error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if opts.Network != tt.wantNetwork || opts.Addr != tt.wantAt {
				t.Errorf("Options = %s %s, want %s %s", opts.Network, opts.Addr, tt.wantNetwork, tt.wantAt)
			}
		})
	}
}
