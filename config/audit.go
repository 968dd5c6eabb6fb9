package config

import "time"

// Defaults of svc.audit.
const (
	defaultAuditRetention     = 90 * 24 * time.Hour
	defaultAuditQueueSize     = 4096
	defaultAuditBatchSize     = 128
	defaultAuditSweepInterval = time.Hour
	defaultAuditFlushInterval = 250 * time.Millisecond
)

// Audit is the svc.audit section (ours, issue #47): the persisted audit trail of the audited
// /api operations and the security events, in the table sys_audit_record.
type Audit struct {
	// Enabled is svc.audit.enabled (default false; the shipped configs/application.toml turns it
	// on): record the trail. Off, nothing is queued or written and sys/audit has no operations.
	Enabled bool `toml:"enabled"`
	// AutoMigrate is svc.audit.auto_migrate (default false): create sys_audit_record at startup.
	AutoMigrate bool `toml:"auto_migrate"`
	// Retention is svc.audit.retention (default 2160h, 90 days): records older than this are
	// deleted by the sweep worker.
	Retention time.Duration `toml:"retention"`
	// QueueSize is svc.audit.queue_size (default 4096): records waiting for the writer on this
	// node; a record that finds the queue full is dropped and counted
	// (svc_audit_records_dropped_total), never waited for.
	QueueSize int `toml:"queue_size"`
	// BatchSize is svc.audit.batch_size (default 128): the most records one INSERT writes.
	BatchSize int `toml:"batch_size"`
	// FlushInterval is svc.audit.flush_interval (default 250ms): the longest the writer waits,
	// after a record arrived, for more to fill its batch. Fewer, larger transactions cost the
	// database (on SQLite: its one writer, shared with the requests) less than one per record.
	FlushInterval time.Duration `toml:"flush_interval"`
	// SweepInterval is svc.audit.sweep_interval (default 1h): how often records past the
	// retention are deleted.
	SweepInterval time.Duration `toml:"sweep_interval"`
}

func (a *Audit) applyDefaults() {
	a.Retention = positive(a.Retention, defaultAuditRetention)
	a.QueueSize = positive(a.QueueSize, defaultAuditQueueSize)
	a.BatchSize = positive(a.BatchSize, defaultAuditBatchSize)
	a.SweepInterval = positive(a.SweepInterval, defaultAuditSweepInterval)
	a.FlushInterval = positive(a.FlushInterval, defaultAuditFlushInterval)
}
