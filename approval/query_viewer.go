package approval

import (
	"time"

	"github.com/svc-framework/svc/approval/design"
)

// ViewerTask is the viewer's pending task in my.get_instance_detail (wire-approval §6.5): what
// process_task targets and what the node lets its holder do, computed by the commands' own
// checks (rules.go).
type ViewerTask struct {
	TaskID             string                   `json:"taskId"`
	NodeID             string                   `json:"nodeId"`
	IsOpinionRequired  bool                     `json:"isOpinionRequired"`
	AddAssigneeTypes   []design.AddAssigneeType `json:"addAssigneeTypes,omitempty"`
	RollbackTargets    []RollbackTarget         `json:"rollbackTargets,omitempty"`
	RemovableAssignees []RemovableAssignee      `json:"removableAssignees,omitempty"`
}

// RollbackTarget is a node process_task's rollback accepts as targetNodeId.
type RollbackTarget struct {
	NodeID string `json:"nodeId"`
	Name   string `json:"name"`
}

// RemovableAssignee is a peer task remove_assignee accepts.
type RemovableAssignee struct {
	TaskID   string   `json:"taskId"`
	Assignee UserInfo `json:"assignee"`
	Status   string   `json:"status"`
}

// viewer is one user looking at a loaded instance.
type viewer struct {
	d       *detailData
	user    string
	now     time.Time
	hadTask bool  // holds or held a task on the instance
	cc      bool  // received a carbon copy
	pending *Task // its task process_task would accept, if any
}

// viewer is user's view of d at now.
func (d *detailData) viewer(user string, now time.Time) *viewer {
	v := &viewer{d: d, user: user, now: now}
	for i := range d.tasks {
		t := &d.tasks[i]
		if t.AssigneeID != user {
			continue
		}
		v.hadTask = true
		if v.pending == nil && decisionErr(d.inst, t, user) == nil {
			v.pending = t
		}
	}
	for i := range d.ccs {
		v.cc = v.cc || d.ccs[i].CCUserID == user
	}
	return v
}

// sees reports whether the viewer may read the detail: applicant, task holder or CC recipient.
func (v *viewer) sees() bool { return v.d.inst.ApplicantID == v.user || v.hadTask || v.cc }

// node is the node of the viewer's pending task.
func (v *viewer) node() *Node { return v.d.g.nodes[v.pending.NodeID] }

// actions are the commands the viewer may run now, in the order of §6.5; mt is v.myTask().
func (v *viewer) actions(mt *ViewerTask) []string {
	d, out := v.d, []string{}
	if withdrawErr(d.inst, v.user) == nil {
		out = append(out, ActionWithdraw)
	}
	if resubmitErr(d.inst, v.user) == nil {
		out = append(out, ActionResubmit)
	}
	if mt != nil {
		n := v.node()
		decision, _ := decisionAction(n, ActionApprove)
		out = append(out, decision, ActionReject)
		if transferErr(n) == nil {
			out = append(out, ActionTransfer)
		}
		if len(mt.RollbackTargets) > 0 {
			out = append(out, ActionRollback)
		}
		if len(mt.AddAssigneeTypes) > 0 {
			out = append(out, ActionAddAssignee)
		}
		if len(mt.RemovableAssignees) > 0 {
			out = append(out, ActionRemoveAssignee)
		}
	}
	participant := participantErr(d.inst, v.user, v.hadTask)
	if manualCCErr(d.inst, d.g, participant) == nil {
		out = append(out, ActionAddCC)
	}
	if participant == nil && len(v.urgeable()) > 0 {
		out = append(out, ActionUrge)
	}
	return out
}

// myTask is the viewer's pending task with the node's action settings (nil: none).
func (v *viewer) myTask() *ViewerTask {
	t := v.pending
	if t == nil {
		return nil
	}
	n := v.node()
	mt := &ViewerTask{TaskID: t.ID, NodeID: n.ID, IsOpinionRequired: n.IsOpinionRequired}
	for _, typ := range []design.AddAssigneeType{AddBefore, AddAfter, AddParallel} {
		if addAssigneeErr(t, n, v.user, typ) == nil {
			mt.AddAssigneeTypes = append(mt.AddAssigneeTypes, typ)
		}
	}
	if rollbackErr(n) == nil {
		seq := 0
		for i := range v.d.visits {
			if v.d.visits[i].ID == t.VisitID {
				seq = v.d.visits[i].Sequence
			}
		}
		for _, x := range rollbackTrail(v.d.g, n, v.d.visits, seq) {
			mt.RollbackTargets = append(mt.RollbackTargets, RollbackTarget{NodeID: x.ID, Name: x.Name})
		}
	}
	var peers []Task
	for i := range v.d.tasks {
		if v.d.tasks[i].VisitID == t.VisitID {
			peers = append(peers, v.d.tasks[i])
		}
	}
	for i := range peers {
		x := &peers[i]
		if removeAssigneeErr(peers, x, n, v.user) == nil {
			mt.RemovableAssignees = append(mt.RemovableAssignees, RemovableAssignee{TaskID: x.ID, Status: x.Status,
				Assignee: x.assignee()})
		}
	}
	return mt
}

// urgeable are the pending tasks urge_task accepts from the viewer now: the instance runs and
// the viewer's last urge of the task is older than the node's cooldown.
func (v *viewer) urgeable() []*Task {
	d := v.d
	if d.inst.Status != InstanceRunning {
		return nil
	}
	var out []*Task
	for i := range d.tasks {
		t := &d.tasks[i]
		if t.Status != TaskPending {
			continue
		}
		since := urgeSince(d.g.nodes[t.NodeID], v.now)
		cooling := false
		for j := range d.urges {
			u := &d.urges[j]
			cooling = cooling || (deref(u.TaskID) == t.ID && u.UrgerID == v.user && u.CreatedAt.After(since))
		}
		if !cooling {
			out = append(out, t)
		}
	}
	return out
}

// fieldPermissions is the viewer's permission for every form field (§8 read projection): the
// maximum over its roles on hidden < visible < editable < required. A task reads its node's
// permission (absent: visible), at full strength only while process_task would accept it; a
// CC recipient reads the CC's node permission, clamped to read-only; the applicant sees every
// field and may write each (required ones as required) while resubmit would accept it. No role
// leaves a field hidden.
func (v *viewer) fieldPermissions() map[string]design.Permission {
	roles := v.permissionRoles()
	out := make(map[string]design.Permission, len(v.d.g.fields))
	for i := range v.d.g.fields {
		f := &v.d.g.fields[i]
		ps := make([]design.Permission, len(roles))
		for j, r := range roles {
			ps[j] = r(f)
		}
		out[f.Key] = design.MaxPermission(ps...)
	}
	return out
}

// permissionRoles are the viewer's roles as field-permission functions (see fieldPermissions).
func (v *viewer) permissionRoles() []func(f *design.FormField) design.Permission {
	d := v.d
	var roles []func(f *design.FormField) design.Permission
	for i := range d.tasks {
		t := &d.tasks[i]
		if t.AssigneeID != v.user {
			continue
		}
		ps, writes := d.g.nodes[t.NodeID].FieldPermissions, t == v.pending
		roles = append(roles, func(f *design.FormField) design.Permission {
			p := design.PermissionOf(ps, f.Key)
			if !writes {
				p = p.ReadOnly()
			}
			return p
		})
	}
	for i := range d.ccs {
		c := &d.ccs[i]
		if c.CCUserID != v.user {
			continue
		}
		var ps map[string]design.Permission
		if n := d.g.nodes[deref(c.NodeID)]; n != nil {
			ps = n.FieldPermissions
		}
		roles = append(roles, func(f *design.FormField) design.Permission { return design.PermissionOf(ps, f.Key).ReadOnly() })
	}
	if d.inst.ApplicantID == v.user {
		resubmits := resubmitErr(d.inst, v.user) == nil
		roles = append(roles, func(f *design.FormField) design.Permission {
			switch {
			case !resubmits:
				return design.PermVisible
			case f.IsRequired:
				return design.PermRequired
			}
			return design.PermEditable
		})
	}
	return roles
}

// stripHidden is form data without the fields hidden from the viewer (keys that are not form
// fields are dropped: start and resubmit refuse them).
func stripHidden(g *graph, form map[string]any, perms map[string]design.Permission) map[string]any {
	return design.StripHidden(g.fields, form, func(k string) design.Permission { return perms[k] }, false)
}
