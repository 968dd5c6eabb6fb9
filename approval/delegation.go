package approval

import (
	"context"
	"strings"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// DelegationSearch filters find_page (wire-approval §6.2): each field equal. The original's
// client sends it in params, paging in meta.
type DelegationSearch struct {
	DelegatorID string `json:"delegatorId"`
	DelegateeID string `json:"delegateeId"`
	IsActive    *bool  `json:"isActive"`
}

// DelegationParams are create and update's params (§6.2). The window is startsAt/endsAt (the
// client's and the latest DDL's names); startTime/endTime, the older documentation's names, are
// accepted when the newer ones are absent (§15).
type DelegationParams struct {
	ID             string     `json:"id"`
	DelegatorID    string     `json:"delegatorId"`
	DelegateeID    string     `json:"delegateeId"`
	FlowCategoryID *string    `json:"flowCategoryId"`
	FlowID         *string    `json:"flowId"`
	StartsAt       *crud.Time `json:"startsAt"`
	EndsAt         *crud.Time `json:"endsAt"`
	StartTime      *crud.Time `json:"startTime"`
	EndTime        *crud.Time `json:"endTime"`
	IsActive       *bool      `json:"isActive"`
	Reason         *string    `json:"reason"`
}

// window returns the effective start and end: startsAt/endsAt, else startTime/endTime.
func (p *DelegationParams) window() (start, end *crud.Time) {
	start, end = p.StartsAt, p.EndsAt
	if start == nil || start.IsZero() {
		start = p.StartTime
	}
	if end == nil || end.IsZero() {
		end = p.EndTime
	}
	return start, end
}

// Validate: delegatee and the window are required and the window is not empty (400/1400).
// delegatorId is checked after it is stamped (buildDelegation).
func (p *DelegationParams) Validate() error {
	var c rpc.Check
	start, end := p.window()
	c.Required("delegateeId", strings.TrimSpace(p.DelegateeID) != "")
	c.Required("startsAt", start != nil && !start.IsZero())
	c.Required("endsAt", end != nil && !end.IsZero())
	if p.Reason != nil {
		c.MaxLen("reason", *p.Reason, 256)
	}
	if err := c.Err(); err != nil {
		return err
	}
	if !start.Before(end.Time) {
		return ErrDelegationWindow
	}
	return nil
}

// delegationResource is approval/delegation: find_page, create ({id}), update and delete under
// approval.delegation.*, on the shared crud helper. A caller who is not a super-admin sees and
// edits only the delegations it gives: delegatorId is stamped from the caller on create and
// pinned on update. A category or flow scope must name one the caller's tenant holds.
func (s *Service) delegationResource() rpc.Resource {
	r := &crud.Resource[Delegation, *Delegation, DelegationSearch, DelegationParams]{
		Query: crud.Query[Delegation, DelegationSearch]{Name: "approval/delegation", Permission: "approval.delegation", DB: s.db,
			Search: crud.NewSearch(
				crud.Eq("delegator_id", func(q *DelegationSearch) string { return q.DelegatorID }),
				crud.Eq("delegatee_id", func(q *DelegationSearch) string { return q.DelegateeID }),
				crud.EqPtr("is_active", func(q *DelegationSearch) *bool { return q.IsActive }),
			).Sortable("startsAt", "endsAt"),
			Scope: func(c rpc.Call, q *bun.SelectQuery) (*bun.SelectQuery, error) {
				cl, err := callerOf(c)
				if err != nil || cl.Super {
					return q, err
				}
				return q.Where("delegator_id = ?", cl.ID), nil
			},
		},
		Clock: s.clock, ID: func(p *DelegationParams) string { return p.ID },
		Stamp: s.stampDelegation,
		Build: s.buildDelegation,
	}
	ops := []rpc.Op{}
	for _, op := range r.Ops() {
		switch op.Action {
		case "find_page", "create", "update", "delete":
			ops = append(ops, op)
		}
	}
	return rpc.Resource{Name: r.Name, Ops: ops}
}

// stampDelegation pins delegatorId to a caller who is not a super-admin and checks that a
// category or flow scope names one of the caller's tenant (400/1400 otherwise).
func (s *Service) stampDelegation(ctx context.Context, c rpc.Call, p *DelegationParams) error {
	cl, err := callerOf(c)
	if err != nil {
		return err
	}
	if !cl.Super {
		p.DelegatorID = cl.ID
	}
	if id := deref(blankNil(p.FlowCategoryID)); id != "" {
		q := cl.tenantFilter(s.db.NewSelect().Model((*Category)(nil)).Where("id = ?", id), "tenant_id", "")
		if n, err := q.Count(ctx); err != nil || n == 0 {
			return ErrDelegationCategoryNotFound
		}
	}
	if id := deref(blankNil(p.FlowID)); id != "" {
		q := cl.tenantFilter(s.db.NewSelect().Model((*Flow)(nil)).Where("id = ?", id), "tenant_id", "")
		if n, err := q.Count(ctx); err != nil || n == 0 {
			return ErrDelegationFlowNotFound
		}
	}
	return nil
}

func (s *Service) buildDelegation(_ context.Context, _ bun.IDB, p *DelegationParams, _ *Delegation) (*Delegation, error) {
	switch {
	case strings.TrimSpace(p.DelegatorID) == "":
		return nil, rpc.ErrValidationRequired.WithArgs("field", "delegatorId")
	case p.DelegatorID == p.DelegateeID:
		return nil, ErrDelegationSelf
	}
	start, end := p.window()
	return &Delegation{DelegatorID: p.DelegatorID, DelegateeID: p.DelegateeID, FlowCategoryID: blankNil(p.FlowCategoryID),
		FlowID: blankNil(p.FlowID), StartsAt: crud.NewTime(start.Time), EndsAt: crud.NewTime(end.Time),
		IsActive: p.IsActive == nil || *p.IsActive, Reason: p.Reason}, nil
}
