package approval

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// run is one engine command inside its transaction: the locked instance, its graph, the
// operator and the clock reading every row of the command shares. Its methods take the
// command's ctx (the one inTx hands its function: it carries the batching scope its writes
// wait in); the run keeps none.
type run struct {
	s *Service
	// tx is the command's transaction. The run's inserts and updates go through writes, which
	// renders them when queued; a read of rows the run may have written calls writes.Flush
	// first, by name.
	tx      bun.Tx
	writes  writeBatch
	inst    *Instance
	flow    *Flow
	g       *graph
	op      UserInfo
	now     time.Time
	seq     int // the last visit sequence, read by the first visit of the run (seqRead)
	seqRead bool
	// logSeq is the last action log sequence of the instance, read by the run's first log
	// (logSeqRead) unless the lock's statement read it.
	logSeq     int64
	logSeqRead bool
	// fresh marks an instance start is creating (its first transition is from "");
	// proj is its business projection once read (projection.go).
	fresh bool
	proj  *Projection
	// forced marks an administrator's terminate: its synchronous business write may fail without
	// failing the command (run.applySynchronous records the failure instead).
	forced bool
}

// newRun prepares a run on inst (locked by the commands that change it): its graph. The last
// visit sequence is read when the run writes its first visit (0 for an instance created by this
// command), the flow row when a delegation lookup needs its category.
func (s *Service) newRun(ctx context.Context, tx bun.Tx, inst *Instance, op UserInfo) (*run, error) {
	g, err := s.loadGraph(ctx, tx, inst.FlowVersionID)
	if err != nil {
		return nil, err
	}
	r := &run{s: s, tx: tx, writes: writeBatch{tx: tx, atOnce: s.writesAtOnce.Load()}, inst: inst, g: g, op: op, now: s.clock().UTC()}
	if inst.CurrentNodeID == nil && inst.Status == InstanceRunning {
		r.fresh, r.seqRead, r.logSeqRead = true, true, true // a new instance: no visit, no log yet
	}
	return r, nil
}

// flowRow is the instance's flow (read once per run).
func (r *run) flowRow(ctx context.Context) (*Flow, error) {
	if r.flow == nil {
		f := new(Flow)
		if err := r.tx.NewSelect().Model(f).Where("id = ?", r.inst.FlowID).Scan(ctx); err != nil { // not written by a run: nothing to flush
			return nil, err
		}
		r.flow = f
	}
	return r.flow, nil
}

// lockInstance reads instance id for update: the first lock of every command that changes an
// instance (fixed order: instance row, then its tasks), so two deciders on one node serialise.
// (db.DB.ForUpdate: on SQLite the transaction's write lock is the lock.)
func (s *Service) lockInstance(ctx context.Context, tx bun.Tx, id string) (*Instance, error) {
	inst := new(Instance)
	q := s.db.ForUpdate(tx.NewSelect().Model(inst).Where("id = ?", id))
	if err := q.Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrInstanceNotFound
		}
		return nil, err
	}
	return inst, nil
}

// save queues the write of the instance's mutable columns (keyed as the row: while start's
// insert waits, it is rendered again instead).
func (r *run) save(ctx context.Context) error {
	r.inst.UpdatedAt, r.inst.UpdatedBy = crud.NewTime(r.now), r.op.ID
	return r.writes.QueueAs(ctx, instanceRow{r.inst.ID}, r.tx.NewUpdate().Model(r.inst).
		Column("status", "current_node_id", "finished_at", "form_data", "updated_at", "updated_by").WherePK())
}

// log queues an action log row of action at node n (nil: instance level) and task t (nil: none)
// (nothing in the command reads it back), with the instance's next log sequence: every command
// that logs holds the instance's lock (start: the instance is its own), so the sequences follow
// the commands' order whatever the clocks of the nodes that ran them.
func (r *run) log(ctx context.Context, action string, n *Node, t *Task, fill func(*ActionLog)) error {
	if !r.logSeqRead { // logs are written only here, so none of this run is pending: no flush
		if err := r.tx.NewSelect().Model((*ActionLog)(nil)).ColumnExpr("COALESCE(MAX(seq), 0)").
			Where("instance_id = ?", r.inst.ID).Scan(ctx, &r.logSeq); err != nil {
			return err
		}
		r.logSeqRead = true
	}
	r.logSeq++
	l := &ActionLog{ID: rpc.NewID(), CreatedAt: crud.NewTime(r.now), CreatedBy: r.op.ID, InstanceID: r.inst.ID, Seq: r.logSeq, Action: action,
		OperatorID: r.op.ID, OperatorName: r.op.Name, OperatorDepartmentID: optional(r.op.DepartmentID),
		OperatorDepartmentName: optional(r.op.DepartmentName), AddedAssignees: []UserInfo{}, RemovedAssignees: []UserInfo{}, CCUsers: []UserInfo{}}
	if n != nil {
		l.NodeID = &n.ID
	}
	if t != nil {
		l.TaskID = &t.ID
	}
	if fill != nil {
		fill(l)
	}
	return r.writes.Queue(ctx, r.tx.NewInsert().Model(l))
}

// canTransition is the instance state machine of wire-approval §7.
func canTransition(from, to string) bool {
	switch from {
	case InstanceRunning:
		return to != InstanceRunning
	case InstanceReturned:
		return to == InstanceRunning || to == InstanceTerminated || to == InstanceWithdrawn
	case InstanceWithdrawn:
		return to == InstanceRunning || to == InstanceTerminated
	}
	return false
}

// userInfos resolves ids through the directory; unknown ids get their id as name.
func (s *Service) userInfos(ctx context.Context, ids []string) (map[string]UserInfo, error) {
	m, err := s.users.ResolveUsers(ctx, dedupe(ids))
	if err != nil {
		return nil, ErrAssigneeResolveFailed.Wrap(err)
	}
	out := make(map[string]UserInfo, len(ids))
	for _, id := range ids {
		u, ok := m[id]
		if !ok || u.Name == "" {
			u.Name = id
		}
		u.ID = id
		out[id] = u
	}
	return out, nil
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}

func nonNilMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

// publish publishes an instance event of typ inside the run's transaction.
func (r *run) publish(ctx context.Context, typ string, fill func(*InstanceEvent)) error {
	e := r.inst.event(r.now)
	if fill != nil {
		fill(&e)
	}
	return r.s.events.Publish(ctx, event.Named{Type: typ, Payload: e}, event.InTx(r.tx))
}

// taskEvent publishes a task event of typ for t at node n.
func (r *run) taskEvent(ctx context.Context, typ string, t *Task, n *Node, fill func(*InstanceEvent)) error {
	return r.publish(ctx, typ, func(e *InstanceEvent) {
		e.TaskID, e.NodeID, e.NodeName = t.ID, n.ID, n.Name
		a := t.assignee()
		e.Assignee = &a
		if !t.Deadline.IsZero() {
			d := t.Deadline
			e.Deadline = &d
		}
		if fill != nil {
			fill(e)
		}
	})
}

// transition is the one place an instance's status changes (wire-approval §7): start (from ""
// to running), finish (approved, rejected, terminated), rollback to start (returned), withdraw
// and resubmit. It sets the status and finished_at (cleared on running), calls the lifecycle
// hooks and records the business projection's desired state (applied here when the binding is
// synchronous). Callers check their own refusal codes first; an illegal change is 40106.
func (r *run) transition(ctx context.Context, to string) error {
	from := r.inst.Status
	if r.fresh {
		from, r.fresh = "", false
	} else if !canTransition(from, to) {
		return ErrInvalidInstanceTransition
	}
	r.inst.Status = to
	if to == InstanceRunning {
		r.inst.FinishedAt = crud.Time{}
	} else {
		r.inst.FinishedAt = crud.NewTime(r.now)
	}
	if len(r.s.ext.hooks) > 0 { // hooks read through the transaction: they see the run's writes
		if err := r.writes.Flush(ctx); err != nil {
			return err
		}
	}
	for _, h := range r.s.ext.hooks {
		var err error
		if from == "" {
			err = h.OnInstanceCreated(ctx, r.tx, r.inst)
		} else {
			err = h.OnInstanceTransition(ctx, r.tx, r.inst, from, to)
		}
		if err != nil {
			return err
		}
	}
	return r.project(ctx)
}
