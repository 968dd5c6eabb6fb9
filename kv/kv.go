package kv

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
)

// Fallbacks for zero fields of config.KVStore (spec §8.3 defaults).
const (
	defaultHost = "127.0.0.1"
	defaultPort = 6379
)

// pingTimeout bounds the startup ping; dialTimeout bounds establishing one connection.
const (
	pingTimeout = 5 * time.Second
	dialTimeout = 5 * time.Second
)

// Open builds the client for svc.kvstore and pings it. When cfg.Enabled is false it returns
// (nil, nil) and does no I/O: a nil client means the key-value store is disabled. A failed ping
// closes the client; the error names the address and never contains the password.
func Open(ctx context.Context, cfg config.KVStore) (*redis.Client, error) {
	if !cfg.Enabled {
		return nil, nil
	}
	opts, err := Options(cfg)
	if err != nil {
		return nil, err
	}
	client := redis.NewClient(opts)
	pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := client.Ping(pingCtx).Err(); err != nil {
		_ = client.Close()
		return nil, redact(fmt.Errorf("kv: ping %s %s: %w", opts.Network, opts.Addr, err), cfg.Password)
	}
	return client, nil
}

// Options maps svc.kvstore onto go-redis options without connecting (for callers that build
// other client kinds from the same section). Zero host and port fall back to 127.0.0.1:6379; an
// unknown network fails with config.ErrInvalidKVStore.
func Options(cfg config.KVStore) (*redis.Options, error) {
	opts := &redis.Options{
		Username:              cfg.User,
		Password:              cfg.Password,
		DB:                    int(cfg.Database),
		DialTimeout:           dialTimeout,
		ContextTimeoutEnabled: true,
	}
	switch network := string(cfg.Network); network {
	case "", "tcp":
		host, port := cfg.Host, cfg.Port
		if host == "" {
			host = defaultHost
		}
		if port == 0 {
			port = defaultPort
		}
		opts.Network, opts.Addr = "tcp", net.JoinHostPort(host, strconv.Itoa(int(port)))
	case "unix":
		if cfg.Host == "" {
			return nil, fmt.Errorf("kv: svc.kvstore.host: the socket path is required for network unix: %w", config.ErrInvalidKVStore)
		}
		opts.Network, opts.Addr = "unix", cfg.Host
	default:
		return nil, fmt.Errorf("kv: svc.kvstore.network %q: want tcp or unix: %w", network, config.ErrInvalidKVStore)
	}
	return opts, nil
}

// redactedError keeps the cause reachable (errors.Is, errors.As) behind a message from which the
// password has been removed.
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.cause }

// redact removes every occurrence of password from err's message. Redis replies do not echo the
// password; this guarantees it whatever the server or a proxy in front of it says.
func redact(err error, password string) error {
	if password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), password, "xxxxx"), cause: err}
}
