package audit

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
)

// dropLogEvery is the least time between two log lines about dropped records: a store that is
// down for an hour logs about sixty lines, not one per request.
const dropLogEvery = time.Minute

// Options are the host's choices for the trail.
type Options struct {
	// NodeID names this node in sys_audit_record.node_id; default "<hostname>-<random>".
	NodeID string
}

// Service is the audit trail of one node: a bounded queue that the request path fills without
// waiting, a writer worker that empties it in batches, a retention sweep, and sys/audit.
type Service struct {
	cfg     config.Audit
	db      *db.DB
	clock   func() time.Time
	log     *slog.Logger
	node    string
	metrics *metrics
	queue   chan entry

	written, dropped atomic.Uint64
	// lastDropLog is the unix nanoseconds of the last log line about drops; unlogged counts the
	// drops since.
	lastDropLog atomic.Int64
	unlogged    atomic.Int64
}

// New builds the trail from deps.Config.Audit over the primary database. It does no I/O.
func New(deps app.Platform, opts Options) (*Service, error) {
	node := opts.NodeID
	if node == "" {
		host, _ := os.Hostname()
		node = fmt.Sprintf("%s-%s", host, rpc.NewID()[24:])
	}
	m, err := newMetrics(deps.Metrics)
	if err != nil {
		return nil, err
	}
	s := &Service{cfg: deps.Config.Audit, db: deps.DB, clock: deps.Clock, node: node, metrics: m,
		log: deps.Logger.With(slog.String("module", "audit"))}
	if s.cfg.Enabled {
		s.queue = make(chan entry, s.cfg.QueueSize)
	}
	return s, nil
}

// Module lists what the trail adds to the server: sys/audit (without operations when the trail
// is off), the migration, and while it is on the writer and sweep workers. Stop writes what the
// queue still holds.
func (s *Service) Module() app.Module {
	m := app.Module{
		Name:        "audit",
		Resources:   []rpc.Resource{s.resource()},
		Migrations:  Migrations(),
		AutoMigrate: s.cfg.Enabled && s.cfg.AutoMigrate,
	}
	if !s.cfg.Enabled {
		return m
	}
	m.Workers = []app.Worker{
		{Name: "audit-writer", Run: s.WriteLoop},
		{Name: "audit-sweep", Interval: s.cfg.SweepInterval, Run: s.Sweep},
	}
	m.Stop = s.Flush
	return m
}

// NodeID returns this node's name in the trail.
func (s *Service) NodeID() string { return s.node }

// Enabled reports whether the trail records (svc.audit.enabled).
func (s *Service) Enabled() bool { return s.queue != nil }

// Sink returns the /api engine's audit sink that queues each record, or nil when the trail is
// off (rpc.AuditSinks skips a nil sink, so an off trail costs a request nothing).
func (s *Service) Sink() rpc.AuditSink {
	if !s.Enabled() {
		return nil
	}
	return apiSink{s}
}

// apiSink queues the records of audited calls.
type apiSink struct{ s *Service }

var _ rpc.AuditSink = apiSink{}

// Audit implements rpc.AuditSink.
func (a apiSink) Audit(_ context.Context, rec rpc.AuditRecord) { a.s.enqueue(fromAPI(rec)) }

// Record queues a security event (or any event a host wants in the trail). It never blocks: with
// the queue full the event is dropped and counted. A no-op when the trail is off.
func (s *Service) Record(e Event) {
	if !s.Enabled() {
		return
	}
	at := e.At
	if at.IsZero() {
		at = s.clock()
	}
	s.enqueue(entry{rec: Record{Kind: KindSecurity, At: at, RequestID: e.RequestID, UserID: e.UserID, UserName: e.UserName,
		Resource: SecurityResource, Action: e.Action, ClientIP: e.ClientIP, OK: e.OK}, detail: e.Detail})
}

// enqueue hands e to the writer without waiting: a full queue drops it.
func (s *Service) enqueue(e entry) {
	select {
	case s.queue <- e:
	default:
		s.drop(dropQueueFull, 1, nil)
	}
}

// drop counts n dropped records and logs, at most once per dropLogEvery, how many were dropped
// since the last line.
func (s *Service) drop(reason string, n int, err error) {
	s.dropped.Add(uint64(n))
	s.metrics.dropped.WithLabelValues(reason).Add(float64(n))
	pending := s.unlogged.Add(int64(n))
	now := s.clock().UnixNano()
	last := s.lastDropLog.Load()
	if last != 0 && now-last < int64(dropLogEvery) || !s.lastDropLog.CompareAndSwap(last, now) {
		return
	}
	s.unlogged.Add(-pending)
	attrs := []any{slog.String("reason", reason), slog.Int64("dropped", pending)}
	if err != nil {
		attrs = append(attrs, slog.Any("err", err))
	}
	s.log.Warn("audit: records dropped (svc_audit_records_dropped_total)", attrs...)
}

// Counts are the records this node wrote and dropped since it started.
type Counts struct {
	Written uint64 `json:"written"`
	Dropped uint64 `json:"dropped"`
	Queued  int    `json:"queued"`
}

// Counts returns the node's written and dropped totals and the queue's length.
func (s *Service) Counts() Counts {
	return Counts{Written: s.written.Load(), Dropped: s.dropped.Load(), Queued: len(s.queue)}
}
