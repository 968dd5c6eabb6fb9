package config

import (
	"fmt"
	"time"
)

// BindingConsistency is how an approval instance's business binding is applied.
type BindingConsistency string

// Business binding consistencies.
const (
	// ConsistencySynchronous applies the binding inside the approval transaction; a failure rolls
	// the approval action back (default).
	ConsistencySynchronous BindingConsistency = "synchronous"
	// ConsistencyEventual commits the desired state and lets a worker converge it.
	ConsistencyEventual BindingConsistency = "eventual"
)

// Day is 24 hours: approval retentions are written in days ("90d").
const Day = 24 * time.Hour

// Defaults of svc.approval.
const (
	defaultApprovalTimeoutScan    = time.Minute
	defaultApprovalPreWarningScan = 5 * time.Minute
	defaultApprovalCleanupScan    = 24 * time.Hour
	defaultDelegationMaxDepth     = 10
	defaultFormSnapshotRetention  = 90 * Day
	defaultUrgeRecordRetention    = 30 * Day
	defaultCCRecordRetention      = 90 * Day
	defaultFormDataMaxBytes       = 65536
	defaultBindingScanInterval    = 10 * time.Second
	defaultBindingBatchSize       = 100
)

// Approval is the svc.approval section (spec §8.3). Non-positive durations and counts take the
// defaults; negative form_data_max_bytes and negative business_binding worker values are
// startup errors.
type Approval struct {
	// AutoMigrate is svc.approval.auto_migrate (default false; never turned on by defaults): run
	// the apv_* migration at startup.
	AutoMigrate bool `toml:"auto_migrate"`
	// TimeoutScanInterval is svc.approval.timeout_scan_interval (default 1m): how often overdue
	// tasks are processed.
	TimeoutScanInterval time.Duration `toml:"timeout_scan_interval"`
	// PreWarningScanInterval is svc.approval.pre_warning_scan_interval (default 5m): how often
	// deadline warnings are sent.
	PreWarningScanInterval time.Duration `toml:"pre_warning_scan_interval"`
	// CleanupScanInterval is svc.approval.cleanup_scan_interval (default 24h): how often the
	// retention job runs.
	CleanupScanInterval time.Duration `toml:"cleanup_scan_interval"`
	// DelegationMaxDepth is svc.approval.delegation_max_depth (default 10): the longest
	// delegation chain followed.
	DelegationMaxDepth int `toml:"delegation_max_depth"`
	// FormSnapshotRetention is svc.approval.form_snapshot_retention (default 90d): age after
	// which apv_form_snapshot rows are pruned.
	FormSnapshotRetention time.Duration `toml:"form_snapshot_retention"`
	// UrgeRecordRetention is svc.approval.urge_record_retention (default 30d): apv_urge_record.
	UrgeRecordRetention time.Duration `toml:"urge_record_retention"`
	// CCRecordRetention is svc.approval.cc_record_retention (default 90d): read apv_cc_record rows.
	CCRecordRetention time.Duration `toml:"cc_record_retention"`
	// FormDataMaxBytes is svc.approval.form_data_max_bytes (default 65536, zero selects it): the
	// cap of JSON-encoded form data; negative is ErrInvalidApprovalFormDataMaxBytes.
	// svc.app.body_limit remains the outer ceiling.
	FormDataMaxBytes int `toml:"form_data_max_bytes"`
	// BusinessBinding is svc.approval.business_binding.
	BusinessBinding BusinessBinding `toml:"business_binding"`
}

// BusinessBinding is svc.approval.business_binding: how approval state is projected onto the
// host's business table.
type BusinessBinding struct {
	// Consistency is svc.approval.business_binding.consistency: synchronous (default) or eventual.
	Consistency BindingConsistency `toml:"consistency"`
	// ScanInterval is svc.approval.business_binding.scan_interval (default 10s): the eventual
	// worker's cadence; negative is ErrInvalidApprovalBusinessBindingWorkerConfig.
	ScanInterval time.Duration `toml:"scan_interval"`
	// BatchSize is svc.approval.business_binding.batch_size (default 100): projections per scan;
	// negative is ErrInvalidApprovalBusinessBindingWorkerConfig.
	BatchSize int `toml:"batch_size"`
}

// negatives reports the negative values the spec makes startup errors (§7).
func (a *Approval) negatives() []error {
	errs := negatives(ErrInvalidApprovalFormDataMaxBytes, count("svc.approval.form_data_max_bytes", a.FormDataMaxBytes))
	return append(errs, negatives(ErrInvalidApprovalBusinessBindingWorkerConfig,
		dur("svc.approval.business_binding.scan_interval", a.BusinessBinding.ScanInterval),
		count("svc.approval.business_binding.batch_size", a.BusinessBinding.BatchSize))...)
}

func (a *Approval) applyDefaults() []error {
	errs := a.negatives()
	a.TimeoutScanInterval = positive(a.TimeoutScanInterval, defaultApprovalTimeoutScan)
	a.PreWarningScanInterval = positive(a.PreWarningScanInterval, defaultApprovalPreWarningScan)
	a.CleanupScanInterval = positive(a.CleanupScanInterval, defaultApprovalCleanupScan)
	a.DelegationMaxDepth = positive(a.DelegationMaxDepth, defaultDelegationMaxDepth)
	a.FormSnapshotRetention = positive(a.FormSnapshotRetention, defaultFormSnapshotRetention)
	a.UrgeRecordRetention = positive(a.UrgeRecordRetention, defaultUrgeRecordRetention)
	a.CCRecordRetention = positive(a.CCRecordRetention, defaultCCRecordRetention)
	a.FormDataMaxBytes = positive(a.FormDataMaxBytes, defaultFormDataMaxBytes)
	b := &a.BusinessBinding
	b.Consistency = orDefault(b.Consistency, ConsistencySynchronous)
	b.ScanInterval = positive(b.ScanInterval, defaultBindingScanInterval)
	b.BatchSize = positive(b.BatchSize, defaultBindingBatchSize)
	return errs
}

func (a *Approval) validate() []error {
	errs := a.negatives()
	switch a.BusinessBinding.Consistency {
	case "", ConsistencySynchronous, ConsistencyEventual:
	default:
		errs = append(errs, fmt.Errorf("svc.approval.business_binding.consistency %q: %w", a.BusinessBinding.Consistency, ErrInvalidApprovalBindingConsistency))
	}
	return errs
}
