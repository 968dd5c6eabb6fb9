package approval

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// Projection statuses (wire-approval §4 BindingProjectionStatus).
const (
	ProjectionPending    = "pending"
	ProjectionProcessing = "processing"
	ProjectionApplied    = "applied"
	ProjectionFailed     = "failed"
)

// Projection is a row of apv_business_projection (wire-approval §3, §9): the desired state of one
// business record (target) and how far it is applied. One row per target (target_hash unique);
// the owner is the instance whose state it carries, the applied owner the one whose state the
// record holds (the CAS fence of the apply).
type Projection struct {
	bun.BaseModel `bun:"table:apv_business_projection"`
	crud.Audited

	TenantID               string            `bun:"tenant_id"`
	FlowID                 string            `bun:"flow_id"`
	FlowVersionID          string            `bun:"flow_version_id"`
	OwnerInstanceID        string            `bun:"owner_instance_id"`
	AppliedOwnerInstanceID *string           `bun:"applied_owner_instance_id"`
	TargetHash             string            `bun:"target_hash"`
	Consistency            string            `bun:"consistency"`
	Binding                *BusinessBinding  `bun:"binding,type:json"`
	RecordKey              map[string]string `bun:"record_key,type:json"`
	DesiredStatus          string            `bun:"desired_status"`
	DesiredStartedAt       crud.Time         `bun:"desired_started_at"`
	DesiredFinishedAt      crud.Time         `bun:"desired_finished_at,nullzero"`
	DesiredRevision        int64             `bun:"desired_revision"`
	AppliedRevision        int64             `bun:"applied_revision"`
	Status                 string            `bun:"status"`
	AttemptCount           int               `bun:"attempt_count"`
	NextAttemptAt          crud.Time         `bun:"next_attempt_at,nullzero"`
	LeaseUntil             crud.Time         `bun:"lease_until,nullzero"`
	LastError              *string           `bun:"last_error"`
	AppliedAt              crud.Time         `bun:"applied_at,nullzero"`
}

// recordKey resolves a business reference to the record key of binding b (wire-approval §9):
// with one key column the reference verbatim; with several a JSON object holding exactly the key
// columns with string or number values. Anything else is 40109 (ErrBusinessRefMalformed): the
// client reads the catalogue's message, the cause naming the column is logged (Service.explain).
func recordKey(b *BusinessBinding, ref string) (map[string]string, error) {
	if len(b.KeyColumns) == 1 {
		return map[string]string{b.KeyColumns[0]: ref}, nil
	}
	dec := json.NewDecoder(strings.NewReader(ref))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, malformedRef("the key (%s) is composite: businessRef must be a JSON object of these columns", strings.Join(b.KeyColumns, ", "))
	}
	key := make(map[string]string, len(b.KeyColumns))
	for _, col := range b.KeyColumns {
		switch v := obj[col].(type) {
		case string:
			key[col] = v
		case json.Number:
			key[col] = v.String()
		case nil:
			return nil, malformedRef("businessRef has no value for key column %s", col)
		default:
			return nil, malformedRef("the value of key column %s must be a string or a number", col)
		}
	}
	for k := range obj {
		if !slices.Contains(b.KeyColumns, k) {
			return nil, malformedRef("%s is not a key column of %s", k, b.TableName)
		}
	}
	return key, nil
}

// malformedRef is ErrBusinessRefMalformed with its cause (logged, never sent).
func malformedRef(format string, args ...any) error {
	return ErrBusinessRefMalformed.Wrap(fmt.Errorf("approval: invalid business reference: "+format, args...))
}

// targetHash identifies a business record: SHA-256 of the lower-cased table and the canonical
// key (JSON with sorted keys), hex.
func targetHash(table string, key map[string]string) string {
	canon, _ := json.Marshal(key) // map keys are sorted
	sum := sha256.Sum256(append([]byte(strings.ToLower(table)+"\n"), canon...))
	return hex.EncodeToString(sum[:])
}

// final reports whether an instance status is final (no transition leaves it).
func final(status string) bool {
	return status == InstanceApproved || status == InstanceRejected || status == InstanceTerminated
}

// claimProjection takes the business record of the new instance's businessRef for it (start of an
// instance whose version carries a binding snapshot, wire-approval §9; 40107 without a
// reference): a new projection row, or the row of the record when its owner is final
// (superseded: the owner changes, the applied owner stays the CAS fence until the new state is
// written). A record owned by an instance that is not final is 40108.
func (r *run) claimProjection(ctx context.Context, b *BusinessBinding) error {
	if strings.TrimSpace(deref(r.inst.BusinessRef)) == "" {
		return ErrBusinessRefRequired
	}
	key, err := recordKey(b, deref(r.inst.BusinessRef))
	if err != nil {
		return err
	}
	p := new(Projection)
	switch err := r.s.db.ForUpdate(r.tx.NewSelect().Model(p).Where("target_hash = ?", targetHash(b.TableName, key))).Scan(ctx); {
	case errors.Is(err, sql.ErrNoRows):
		return r.insertProjection(ctx, b, key)
	case err != nil:
		return err
	}
	var owner string
	err = r.tx.NewSelect().Model((*Instance)(nil)).Column("status").Where("id = ?", p.OwnerInstanceID).Scan(ctx, &owner)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if err == nil && !final(owner) {
		return ErrBindingTargetBusy
	}
	r.fillProjection(p, b, key)
	if _, err := r.tx.NewUpdate().Model(p).Column("updated_at", "updated_by", "tenant_id", "flow_id", "flow_version_id",
		"owner_instance_id", "consistency", "binding", "record_key").WherePK().Exec(ctx); err != nil {
		return err
	}
	r.proj, r.inst.BusinessProjectionID = p, &p.ID
	return nil
}

// insertProjection writes the first projection row of a record (revision 0; the start's
// transition makes it 1). A concurrent claim of the same record loses on the unique key: 40108.
func (r *run) insertProjection(ctx context.Context, b *BusinessBinding, key map[string]string) error {
	now := crud.NewTime(r.now)
	p := &Projection{TargetHash: targetHash(b.TableName, key), DesiredStatus: InstanceRunning, DesiredStartedAt: r.inst.CreatedAt,
		Status: ProjectionPending}
	p.ID, p.CreatedAt, p.CreatedBy = rpc.NewID(), now, r.op.ID
	r.fillProjection(p, b, key)
	if _, err := r.tx.NewInsert().Model(p).Exec(ctx); err != nil {
		if db.IsUniqueViolation(err) {
			return ErrBindingTargetBusy
		}
		return err
	}
	r.proj, r.inst.BusinessProjectionID = p, &p.ID
	return nil
}

// fillProjection makes the run's instance the owner of p.
func (r *run) fillProjection(p *Projection, b *BusinessBinding, key map[string]string) {
	p.UpdatedAt, p.UpdatedBy = crud.NewTime(r.now), r.op.ID
	p.TenantID, p.FlowID, p.FlowVersionID, p.OwnerInstanceID = r.inst.TenantID, r.inst.FlowID, r.inst.FlowVersionID, r.inst.ID
	p.Consistency, p.Binding, p.RecordKey = string(r.s.cfg.BusinessBinding.Consistency), b, key
}

// project records the instance's new state as the next desired revision of its projection
// (nothing for a standalone instance or one superseded on its record); a synchronous projection
// is applied at once (applySynchronous).
func (r *run) project(ctx context.Context) error {
	if r.inst.BusinessProjectionID == nil {
		return nil
	}
	if r.proj == nil {
		p, err := r.s.lockProjection(ctx, r.tx, *r.inst.BusinessProjectionID)
		if errors.Is(err, ErrBindingProjectionNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		r.proj = p
	}
	p := r.proj
	if p.OwnerInstanceID != r.inst.ID {
		return nil
	}
	p.DesiredStatus, p.DesiredStartedAt, p.DesiredFinishedAt = r.inst.Status, r.inst.CreatedAt, r.inst.FinishedAt
	p.DesiredRevision++
	p.Status, p.AttemptCount, p.NextAttemptAt, p.LeaseUntil, p.LastError = ProjectionPending, 0, crud.NewTime(r.now), crud.Time{}, nil
	p.UpdatedAt, p.UpdatedBy = crud.NewTime(r.now), r.op.ID
	if p.Consistency == string(config.ConsistencySynchronous) {
		if err := r.applySynchronous(ctx, p); err != nil {
			return err
		}
	}
	_, err := r.tx.NewUpdate().Model(p).Column(projectionState...).WherePK().Exec(ctx)
	return err
}

// applySynchronous applies p inside the command's transaction. A failure fails the command —
// a write that matched no row is 40109 (ErrBusinessRecordUnavailable: the catalogue's message
// for the client, the table, key and fence in the server log) — except under an administrator's
// terminate (run.forced): there the apply runs in a savepoint, and a failure is rolled back to it
// and recorded on p instead (recordFailure), so the instance always ends. A deadlock or
// serialization failure, or an ended ctx, still fails the command: the whole transaction is lost
// then, not just the apply.
func (r *run) applySynchronous(ctx context.Context, p *Projection) error {
	if !r.forced {
		err := applyProjection(ctx, r.tx, p, r.now)
		if errors.Is(err, ErrProjectionFenced) {
			return ErrBusinessRecordUnavailable.Wrap(err)
		}
		return err
	}
	err := db.InSavepoint(ctx, r.tx, func(ctx context.Context, sp bun.Tx) error {
		return applyProjection(ctx, sp, p, r.now)
	})
	if err == nil {
		return nil
	}
	if db.IsRetryable(err) || ctx.Err() != nil {
		return err
	}
	return r.recordFailure(ctx, p, err)
}

// recordFailure records on p (written by project with the new revision) that its desired
// revision could not be applied: status failed, attempt_count 1, the next attempt after the first
// backoff, last_error — so find_business_projections and get_metrics (pendingBindingFailures)
// show it and the approval-binding worker, or retry_business_projection, applies it once the
// host has repaired the record. It logs the cause with the request id and publishes
// approval.instance.binding_failed inside the command's transaction (it commits with the
// terminate, or not at all).
func (r *run) recordFailure(ctx context.Context, p *Projection, cause error) error {
	msg := cause.Error()
	p.Status, p.AttemptCount, p.NextAttemptAt, p.LastError = ProjectionFailed, 1, crud.NewTime(r.now.Add(backoff(1))), &msg
	r.s.log.LogAttrs(ctx, slog.LevelWarn, "approval: business record not written; the instance ends anyway",
		slog.String("request_id", rpc.RequestInfoFrom(ctx).ID), slog.String("instance", r.inst.ID),
		slog.String("projection", p.ID), slog.String("status", p.DesiredStatus), slog.Any("cause", cause))
	e := BindingFailedEvent{InstanceEvent: r.inst.event(r.now), Trigger: triggerOf(p.DesiredStatus, false), Status: p.DesiredStatus,
		ErrorMessage: msg}
	if p.Binding != nil {
		e.BusinessTable = p.Binding.TableName
	}
	return r.s.events.Publish(ctx, event.Named{Type: EventInstanceBindingFailed, Payload: e}, event.InTx(r.tx))
}

// projectionState are the columns a change of desired or applied state writes.
var projectionState = []string{"updated_at", "updated_by", "desired_status", "desired_started_at", "desired_finished_at",
	"desired_revision", "applied_revision", "applied_owner_instance_id", "applied_at", "status", "attempt_count",
	"next_attempt_at", "lease_until", "last_error"}

// ErrProjectionFenced is the failure of an apply that matched no business row: the record does
// not exist, or its instance column names neither the applied owner nor the owner (a newer
// owner wrote it, or the host changed it).
var ErrProjectionFenced = errors.New("approval: the business record does not exist or is owned by another instance")

// applyProjection writes p's desired revision into the business table with the CAS-fenced UPDATE
// of wire-approval §9 and records it applied in p (the caller writes p):
//
//	UPDATE <table> SET <status>=mapped, <instanceId>=owner[, <startedAt>=…][, <finishedAt>=…]
//	WHERE <key columns match> AND (<instanceId> = applied owner OR <instanceId> = owner)
//
// (IS NULL in place of the applied owner before the first apply). Identifiers are quoted for the
// dialect. No matching row is ErrProjectionFenced.
func applyProjection(ctx context.Context, idb bun.IDB, p *Projection, now time.Time) error {
	b := p.Binding
	if b == nil {
		return errors.New("approval: the projection has no binding")
	}
	status := p.DesiredStatus
	if m, ok := b.StatusMapping[status]; ok && m != "" {
		status = m
	}
	var set bytes.Buffer
	args := []any{bun.Ident(b.TableName), bun.Ident(b.StatusColumn), status, bun.Ident(b.InstanceIDColumn), p.OwnerInstanceID}
	set.WriteString("UPDATE ? SET ? = ?, ? = ?")
	if b.StartedAtColumn != "" {
		set.WriteString(", ? = ?")
		args = append(args, bun.Ident(b.StartedAtColumn), p.DesiredStartedAt)
	}
	if b.FinishedAtColumn != "" {
		set.WriteString(", ? = ?")
		var fin any
		if !p.DesiredFinishedAt.IsZero() {
			fin = p.DesiredFinishedAt
		}
		args = append(args, bun.Ident(b.FinishedAtColumn), fin)
	}
	where, wargs := fence(p)
	res, err := idb.NewRaw(set.String()+where, append(args, wargs...)...).Exec(ctx)
	if err != nil {
		return fmt.Errorf("approval: apply to %s: %w", b.TableName, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		// MySQL counts changed rows only: an apply that changes nothing matched if the row is there.
		var found int
		if err := idb.NewRaw("SELECT COUNT(*) FROM ?"+where, append([]any{bun.Ident(b.TableName)}, wargs...)...).Scan(ctx, &found); err != nil {
			return fmt.Errorf("approval: apply to %s: %w", b.TableName, err)
		}
		if found == 0 {
			key, _ := json.Marshal(p.RecordKey)
			owners := p.OwnerInstanceID
			if a := deref(p.AppliedOwnerInstanceID); a != "" && a != owners {
				owners += " or " + a
			}
			return fmt.Errorf("%w: no row of %s with key %s whose %s is empty or %s", ErrProjectionFenced, b.TableName, key,
				b.InstanceIDColumn, owners)
		}
	}
	owner := p.OwnerInstanceID
	p.AppliedRevision, p.AppliedOwnerInstanceID, p.AppliedAt = p.DesiredRevision, &owner, crud.NewTime(now)
	p.Status, p.AttemptCount, p.NextAttemptAt, p.LeaseUntil, p.LastError = ProjectionApplied, 0, crud.Time{}, crud.Time{}, nil
	return nil
}

// fence is the WHERE clause of an apply: the key columns (sorted) and the owner fence — the
// instance column is empty (NULL: nobody holds the record, before the first write or after the
// host re-created it), the owner, or the applied owner (the instance written last, which a new
// owner supersedes). Only the projection's owner ever writes, so an older instance never
// overwrites a newer one.
func fence(p *Projection) (string, []any) {
	cols := make([]string, 0, len(p.RecordKey))
	for c := range p.RecordKey {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	var w strings.Builder
	var args []any
	w.WriteString(" WHERE ")
	for _, c := range cols {
		w.WriteString("? = ? AND ")
		args = append(args, bun.Ident(c), p.RecordKey[c])
	}
	inst := bun.Ident(p.Binding.InstanceIDColumn)
	w.WriteString("(? IS NULL OR ? = ?")
	args = append(args, inst, inst, p.OwnerInstanceID)
	if p.AppliedOwnerInstanceID != nil && *p.AppliedOwnerInstanceID != p.OwnerInstanceID {
		w.WriteString(" OR ? = ?")
		args = append(args, inst, *p.AppliedOwnerInstanceID)
	}
	w.WriteString(")")
	return w.String(), args
}
