package svc

import (
	"log/slog"
	"net"
	"time"

	"github.com/svc-framework/svc/monitor"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/storage"
)

// Option configures a Server for a host application.
type Option func(*options)

type options struct {
	logger      *slog.Logger
	clock       func() time.Time
	listener    net.Listener
	modules     []ModuleFunc
	resources   []rpc.Resource
	strategies  []rpc.Strategy
	permissions rpc.PermissionChecker
	audit       rpc.AuditSink
	security    security.Options
	storage     storage.Options
	monitor     monitor.Options
}

// WithSecurity sets the security module's host extension points (authenticators, user-info
// loader, user store, challenge providers, event sink, ...).
func WithSecurity(o security.Options) Option { return func(opts *options) { opts.security = o } }

// WithStorage sets the storage module's host extension points (file ACL, backend, events).
func WithStorage(o storage.Options) Option { return func(opts *options) { opts.storage = o } }

// WithMonitor gives sys/monitor its optional inspectors (event streams, integration stats).
func WithMonitor(o monitor.Options) Option { return func(opts *options) { opts.monitor = o } }

// WithLogger replaces the default JSON logger.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithClock replaces time.Now for everything with TTLs, expiries and schedules (tests).
func WithClock(now func() time.Time) Option { return func(o *options) { o.clock = now } }

// WithListener serves on ln instead of listening on svc.app.port.
func WithListener(ln net.Listener) Option { return func(o *options) { o.listener = ln } }

// WithModule appends a host module to the boot chain, after the built-in modules.
func WithModule(m ModuleFunc) Option { return func(o *options) { o.modules = append(o.modules, m) } }

// WithResources mounts host RPC resources on /api.
func WithResources(rs ...rpc.Resource) Option {
	return func(o *options) { o.resources = append(o.resources, rs...) }
}

// WithStrategy adds a host authentication strategy to the shared registry.
func WithStrategy(st rpc.Strategy) Option {
	return func(o *options) { o.strategies = append(o.strategies, st) }
}

// WithPermissionChecker sets the checker of RequiredPermission tokens; without one (and without
// the security module's built-in user store) every permission-guarded operation answers 403.
func WithPermissionChecker(pc rpc.PermissionChecker) Option {
	return func(o *options) { o.permissions = pc }
}

// WithAuditSink receives the audit records of operations marked rpc.Audit.
func WithAuditSink(a rpc.AuditSink) Option { return func(o *options) { o.audit = a } }
