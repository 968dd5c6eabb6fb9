package svc

import (
	"log/slog"
	"net"
	"time"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/cron"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/mcp"
	"github.com/svc-framework/svc/ops"
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
	permissions rpc.PermissionChecker
	audit       rpc.AuditSink
	security    security.Options
	storage     storage.Options
	cron        cron.Options
	mcp         mcp.Options
	telemetry   ops.Options
	integration *integration.Options
	approval    *approval.Options
}

// WithSecurity sets the security module's host extension points (authenticators, user-info
// loader, user store, challenge providers, event sink, ...).
func WithSecurity(o security.Options) Option { return func(opts *options) { opts.security = o } }

// WithStorage sets the storage module's host extension points (file ACL, backend, events).
func WithStorage(o storage.Options) Option { return func(opts *options) { opts.storage = o } }

// WithCron sets the cron module's host extension points: the job handlers this node runs (a node
// claims only schedules whose job it has), its node id and the event publisher (default: the
// server's event bus).
func WithCron(o cron.Options) Option { return func(opts *options) { opts.cron = o } }

// WithMCP sets the MCP endpoint's host extension points: tools, resources, resource templates
// and prompts (typed helpers in package mcp), the server identity and instructions. The endpoint
// is mounted only when svc.mcp.enabled.
func WithMCP(o mcp.Options) Option { return func(opts *options) { opts.mcp = o } }

// WithTelemetry sets the operations module's extension points: a tracer provider that replaces
// the OTLP exporter of svc.tracing (and turns tracing on), or the admin listener.
func WithTelemetry(o ops.Options) Option { return func(opts *options) { opts.telemetry = o } }

// WithIntegration includes the integration module (spec §2.2: its resources are registered
// only when it is included) with the host's extension points (the code-set catalog). Its
// tables are migrated by svc.integration.auto_migrate or `svc migrate`.
func WithIntegration(o integration.Options) Option {
	return func(opts *options) { opts.integration = &o }
}

// WithApproval includes the approval module (spec §2.2: its resources are registered only when
// it is included) with the host's extension points: its directory (assignee, user-name and
// department resolvers; each nil part falls back to the built-in user store's departments and
// superiors) and its table inspector (default: the schema module's). Its tables are migrated
// by svc.approval.auto_migrate or `svc migrate`. approval.* events must be routed to a
// transactional transport: New adds the outbox route for approval.EventPattern when no rule of
// svc.event.routing covers it.
func WithApproval(o approval.Options) Option {
	return func(opts *options) { opts.approval = &o }
}

// WithLogger replaces the default JSON logger.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithClock replaces time.Now for everything with TTLs, expiries and schedules (tests).
func WithClock(now func() time.Time) Option { return func(o *options) { o.clock = now } }

// WithListener serves on ln instead of listening on svc.app.port.
func WithListener(ln net.Listener) Option { return func(o *options) { o.listener = ln } }

// WithModule appends a host module to the boot chain, after the built-in modules and earlier
// WithModule calls. It is the one way a host adds to the server: RPC resources, authentication
// strategies, routes, workers, migrations and messages are fields of the app.Module that build
// returns from the server's dependencies:
//
//	svc.WithModule(func(d app.Deps) (app.Module, error) {
//		return app.Module{Name: "shop", Resources: []rpc.Resource{orders.Resource(d.DB)}}, nil
//	})
func WithModule(build ModuleFunc) Option {
	return func(o *options) { o.modules = append(o.modules, build) }
}

// WithPermissionChecker sets the checker of RequiredPermission tokens; without one (and without
// the security module's built-in user store) every permission-guarded operation answers 403.
func WithPermissionChecker(pc rpc.PermissionChecker) Option {
	return func(o *options) { o.permissions = pc }
}

// WithAuditSink receives the audit records of operations marked rpc.Audit, in addition to the
// event bus, which publishes them as svc.api.request.audit in any case.
func WithAuditSink(a rpc.AuditSink) Option { return func(o *options) { o.audit = a } }
