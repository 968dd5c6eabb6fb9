package config

import (
	"fmt"
	"strings"
	"time"
)

// Defaults of svc.push.
const (
	defaultPushPath               = "/ws"
	defaultPingInterval           = 30 * time.Second
	defaultWriteTimeout           = 10 * time.Second
	defaultSendBuffer             = 32
	defaultSessionRecheckInterval = 60 * time.Second
)

// Push is the svc.push section (spec §6.2, §8.3): the WebSocket push endpoint.
type Push struct {
	// Enabled is svc.push.enabled (default false). Disabled, the notifier stays available and
	// drops deliveries.
	Enabled bool `toml:"enabled"`
	// Path is svc.push.path (default /ws): the WebSocket route; must start with a slash.
	Path string `toml:"path"`
	// AllowedOrigins is svc.push.allowed_origins: origins accepted at the handshake; empty allows
	// every origin (the handshake is token-authenticated).
	AllowedOrigins []string `toml:"allowed_origins"`
	// PingInterval is svc.push.ping_interval (default 30s); a connection missing two consecutive
	// pongs is dropped.
	PingInterval time.Duration `toml:"ping_interval"`
	// WriteTimeout is svc.push.write_timeout (default 10s) per outbound frame.
	WriteTimeout time.Duration `toml:"write_timeout"`
	// SendBuffer is svc.push.send_buffer (default 32): queued frames per connection; a client too
	// slow to drain is disconnected.
	SendBuffer int `toml:"send_buffer"`
	// MaxConnectionsPerUser is svc.push.max_connections_per_user (default 0 = unlimited), per user
	// per node.
	MaxConnectionsPerUser int `toml:"max_connections_per_user"`
	// SessionRecheckInterval is svc.push.session_recheck_interval (default 60s): how often
	// opaque-token sessions of open connections are revalidated.
	SessionRecheckInterval time.Duration `toml:"session_recheck_interval"`
}

func (p *Push) applyDefaults() {
	p.Path = orDefault(p.Path, defaultPushPath)
	p.PingInterval = positive(p.PingInterval, defaultPingInterval)
	p.WriteTimeout = positive(p.WriteTimeout, defaultWriteTimeout)
	p.SendBuffer = positive(p.SendBuffer, defaultSendBuffer)
	p.MaxConnectionsPerUser = positive(p.MaxConnectionsPerUser, 0)
	p.SessionRecheckInterval = positive(p.SessionRecheckInterval, defaultSessionRecheckInterval)
}

func (p *Push) validate() []error {
	if p.Path != "" && !strings.HasPrefix(p.Path, "/") {
		return []error{fmt.Errorf("svc.push.path %q: must start with a slash: %w", p.Path, ErrInvalidPushPath)}
	}
	return nil
}
