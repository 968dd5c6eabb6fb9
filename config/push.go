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
	defaultMaxConnectionsPerUser  = 10
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
	// every origin, which is safe because only an explicit bearer token (Authorization header or
	// __accessToken query) authenticates the handshake, never a cookie or other credential a
	// browser attaches by itself (docs/push.md).
	AllowedOrigins []string `toml:"allowed_origins"`
	// PingInterval is svc.push.ping_interval (default 30s); a connection missing two consecutive
	// pongs is dropped.
	PingInterval time.Duration `toml:"ping_interval"`
	// WriteTimeout is svc.push.write_timeout (default 10s) per outbound frame.
	WriteTimeout time.Duration `toml:"write_timeout"`
	// SendBuffer is svc.push.send_buffer (default 32): queued frames per connection; a client too
	// slow to drain is disconnected.
	SendBuffer int `toml:"send_buffer"`
	// MaxConnectionsPerUser is svc.push.max_connections_per_user (default 10; ours, the spec's
	// default is 0 = unlimited): sockets per user per node, the next one closed with 4429. Unset
	// or 0 takes the default, so a single token cannot open sockets without bound (issue #31); a
	// negative value removes the cap.
	MaxConnectionsPerUser int `toml:"max_connections_per_user"`
	// SessionRecheckInterval is svc.push.session_recheck_interval (default 60s): how often the
	// token of every open connection is decided again as /api would (session ended, user
	// disabled, password changed, current roles). Changes of the built-in user store and
	// revocations reach the sockets at once; this is the net for the rest.
	SessionRecheckInterval time.Duration `toml:"session_recheck_interval"`
	// Bridge is svc.push.bridge (ours, not in the spec): bus events forwarded to push targets
	// without code, one entry per event type. Empty by default.
	Bridge []PushBridge `toml:"bridge"`
}

// PushBridge is one entry of svc.push.bridge: every event of type Event published on the bus
// (svc.event) becomes a push of Type whose payload is the event's JSON payload, sent to the
// union of the targets below.
type PushBridge struct {
	// Event is the event type to forward (exact match); required.
	Event string `toml:"event"`
	// Type is the push message type; default the event type.
	Type string `toml:"type"`
	// Broadcast sends to every connection.
	Broadcast bool `toml:"broadcast"`
	// Users are principal ids that always receive it.
	Users []string `toml:"users"`
	// Roles are roles whose holders receive it.
	Roles []string `toml:"roles"`
	// UserField names a top-level field of the event payload holding the recipient principal
	// id (a string or number) or ids (an array); an event without it reaches only the other
	// targets.
	UserField string `toml:"user_field"`
}

func (p *Push) applyDefaults() {
	p.Path = orDefault(p.Path, defaultPushPath)
	p.PingInterval = positive(p.PingInterval, defaultPingInterval)
	p.WriteTimeout = positive(p.WriteTimeout, defaultWriteTimeout)
	p.SendBuffer = positive(p.SendBuffer, defaultSendBuffer)
	if p.MaxConnectionsPerUser == 0 { // negative: no cap, kept as given
		p.MaxConnectionsPerUser = defaultMaxConnectionsPerUser
	}
	p.SessionRecheckInterval = positive(p.SessionRecheckInterval, defaultSessionRecheckInterval)
}

func (p *Push) validate() []error {
	var errs []error
	if p.Path != "" && !strings.HasPrefix(p.Path, "/") {
		errs = append(errs, fmt.Errorf("svc.push.path %q: must start with a slash: %w", p.Path, ErrInvalidPushPath))
	}
	for i, b := range p.Bridge {
		if err := b.validate(); err != nil {
			errs = append(errs, fmt.Errorf("svc.push.bridge[%d]: %s: %w", i, err, ErrInvalidPushBridge))
		}
	}
	return errs
}

// validate checks one bridge entry: an event type of the bus's shape and at least one target.
func (b *PushBridge) validate() error {
	if b.Event == "" || strings.ContainsFunc(b.Event, notEventTypeRune) {
		return fmt.Errorf("event %q must match ^[a-zA-Z0-9._-]+$", b.Event)
	}
	if !b.Broadcast && len(b.Users) == 0 && len(b.Roles) == 0 && b.UserField == "" {
		return fmt.Errorf("event %q: no target (broadcast, users, roles or user_field)", b.Event)
	}
	return nil
}

// notEventTypeRune reports a character outside the event-type alphabet [a-zA-Z0-9._-].
func notEventTypeRune(r rune) bool {
	return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '.' && r != '_' && r != '-'
}
