package config

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Defaults of svc.app.
const (
	defaultAppName   = "svc-app"
	defaultBodyLimit = 32 * MiB
	// minBodyMemoryBudget is the floor of body_memory_budget's default (twice body_limit).
	minBodyMemoryBudget        = 64 * MiB
	defaultBodyReadIdleTimeout = 30 * time.Second
	defaultBodyMinRate         = 1 * KiB
	defaultBodyMinRateGrace    = 10 * time.Second
	defaultBodyMemoryRate      = 64 * KiB
)

// App is the svc.app section (spec §8.3).
type App struct {
	// Name is svc.app.name (default "svc-app"): the JWT audience, the push-relay channel
	// namespace and the last fallback of the object-store bucket.
	Name string `toml:"name"`
	// Host is svc.app.host (default "", every interface): the address the HTTP server listens
	// on, an IP address ("127.0.0.1", "::1") or a host name ("localhost"; the server binds the
	// first address it resolves to). "127.0.0.1" accepts only connections from this machine.
	// The spec names no such key; the empty default keeps the listener it always had, on every
	// interface. Anything else fails Validate with ErrInvalidValue.
	Host string `toml:"host"`
	// Port is svc.app.port: the HTTP port. Required, no default; a missing port fails Validate
	// with ErrMissingPort.
	Port uint16 `toml:"port"`
	// BodyLimit is svc.app.body_limit (default 32mib): the largest request body accepted.
	// Non-positive selects the default.
	BodyLimit Size `toml:"body_limit"`
	// BodyMemoryBudget is svc.app.body_memory_budget (default twice body_limit, at least
	// 64mib): the request-body bytes all /api requests and inbound integration deliveries
	// together may hold in memory (JSON bodies, decoded bodies, multipart fields and spooled
	// parts, delivery bodies with their script copies; file parts streamed to storage do not
	// count). The rpc engine owns the one budget; modules read through app.API.Bodies. A request that would exceed it waits for room up to body_read_idle_timeout, then
	// answers 503. Non-positive selects the default; a budget below body_limit fails Validate
	// with ErrInvalidBodyMemoryBudget, since one maximal body must fit.
	BodyMemoryBudget Size `toml:"body_memory_budget"`
	// BodyMemoryPerClient is svc.app.body_memory_per_client (default body_limit, at most
	// body_memory_budget): the most one client address (the client IP as trusted_proxies
	// determine it; an IPv6 address by its /64) holds of body_memory_budget at once, whatever
	// its number of connections; a body that would take its address past it answers 503. Of
	// the budget, an eighth is kept for small requests (up to 32 KiB held; a login is under
	// 1 KiB), of which one address holds at most a sixteenth (at least 32 KiB): no address can
	// deny /api to the others. Non-positive selects the default.
	BodyMemoryPerClient Size `toml:"body_memory_per_client"`
	// BodyMemoryRate is svc.app.body_memory_rate (default 64kib, bytes per second): a body
	// read into memory (a JSON /api body, an inbound integration delivery) must have arrived
	// whole by its start + body_min_rate_grace + held / rate, wall-clock time, where held is
	// what it holds of body_memory_budget: the longer a body holds memory, the faster it must
	// arrive, so a trickling client holds little. Behind it the read fails and the connection
	// closes. Streamed multipart file parts are not held and only body_min_rate applies to
	// them. Non-positive selects the default.
	BodyMemoryRate Size `toml:"body_memory_rate"`
	// BodyReadIdleTimeout is svc.app.body_read_idle_timeout (default 30s): every read of a
	// request body must receive data within it, else the connection is closed (body_min_rate
	// bounds a body that keeps each read within it); it also bounds the wait for room in
	// body_memory_budget. Non-positive selects the default.
	BodyReadIdleTimeout time.Duration `toml:"body_read_idle_timeout"`
	// BodyMinRate is svc.app.body_min_rate (default 1kib, bytes per second): once
	// body_min_rate_grace has passed, a request body must have arrived at this average rate,
	// counting only the time the server spent waiting for it (a handler busy elsewhere, or
	// waiting for room in body_memory_budget, does not count against the client); a body
	// behind it has its read fail and its connection closed. It bounds a body that trickles in
	// just fast enough to beat body_read_idle_timeout: at most grace + size / rate. Applied to
	// every route's body in one place (app/bodyidle.go). Non-positive selects the default.
	BodyMinRate Size `toml:"body_min_rate"`
	// BodyMinRateGrace is svc.app.body_min_rate_grace (default 10s): the waiting time a body
	// may spend before body_min_rate applies (a slow start, a first byte late). Non-positive
	// selects the default.
	BodyMinRateGrace time.Duration `toml:"body_min_rate_grace"`
	// MemoryLimit is svc.app.memory_limit (default derived): the soft memory limit the svc
	// binary gives Go's runtime (debug.SetMemoryLimit) at start, its one memory setting beside
	// the runtime's default GOGC (issue #43). Non-positive selects the default: the
	// GOMEMLIMIT environment variable when set (GOMEMLIMIT=off: no limit), else 90 % of the
	// container's cgroup memory limit where there is one, else none. A soft limit makes the
	// collector work harder as the process nears it instead of letting the heap grow to twice
	// the live heap; it never refuses an allocation. Library hosts set their own.
	MemoryLimit Size `toml:"memory_limit"`
	// TrustedProxies is svc.app.trusted_proxies: IPs or CIDRs whose X-Forwarded-For is believed.
	// Empty means forwarded headers are ignored and the peer address is the client IP.
	TrustedProxies []string `toml:"trusted_proxies"`
}

func (a *App) applyDefaults() {
	a.Name = orDefault(a.Name, defaultAppName)
	a.BodyLimit = positive(a.BodyLimit, defaultBodyLimit)
	a.BodyMemoryBudget = positive(a.BodyMemoryBudget, max(2*a.BodyLimit, minBodyMemoryBudget))
	a.BodyReadIdleTimeout = positive(a.BodyReadIdleTimeout, defaultBodyReadIdleTimeout)
	a.BodyMinRate = positive(a.BodyMinRate, defaultBodyMinRate)
	a.BodyMinRateGrace = positive(a.BodyMinRateGrace, defaultBodyMinRateGrace)
	a.BodyMemoryPerClient = min(positive(a.BodyMemoryPerClient, a.BodyLimit), max(a.BodyMemoryBudget, a.BodyLimit))
	a.BodyMemoryRate = positive(a.BodyMemoryRate, defaultBodyMemoryRate)
}

func (a *App) validate() []error {
	var errs []error
	if a.Port == 0 {
		errs = append(errs, fmt.Errorf("svc.app.port: required (set it in application.toml or SVC_APP_PORT): %w", ErrMissingPort))
	}
	if a.Host != "" && !validListenHost(a.Host) {
		errs = append(errs, fmt.Errorf("svc.app.host %q: want an IP address or a host name, without a port: %w", a.Host, ErrInvalidValue))
	}
	if a.BodyMemoryBudget > 0 && a.BodyMemoryBudget < a.BodyLimit {
		errs = append(errs, fmt.Errorf("svc.app.body_memory_budget %s: below svc.app.body_limit %s: %w",
			a.BodyMemoryBudget, a.BodyLimit, ErrInvalidBodyMemoryBudget))
	}
	for i, p := range a.TrustedProxies {
		if !validIPOrPrefix(p) {
			errs = append(errs, fmt.Errorf("svc.app.trusted_proxies[%d] %q: %w", i, p, ErrInvalidTrustedProxy))
		}
	}
	return errs
}

// ListenAddress is the host:port the HTTP server listens on: svc.app.host and svc.app.port
// (":8080", every interface, when the host is empty).
func (a *App) ListenAddress() string {
	return net.JoinHostPort(a.Host, strconv.Itoa(int(a.Port)))
}

// validListenHost reports whether h is an IP address (no zone, no brackets) or a DNS host name.
func validListenHost(h string) bool {
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Zone() == ""
	}
	return !strings.HasPrefix(h, "*.") && validHostPattern(h)
}

// CORS is the svc.cors section (spec §8.3).
type CORS struct {
	// Enabled is svc.cors.enabled (default false).
	Enabled bool `toml:"enabled"`
	// AllowOrigins is svc.cors.allow_origins: the origins allowed ("*" for any).
	AllowOrigins []string `toml:"allow_origins"`
}

// validIPOrPrefix reports whether s is an IP address or a CIDR prefix.
func validIPOrPrefix(s string) bool {
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	_, err := netip.ParsePrefix(s)
	return err == nil
}
