package approval

import (
	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
)

// NodeParticipant is one task of a node visit with its outcome fused from the action log that
// finished it (wire-approval §6.7).
type NodeParticipant struct {
	TaskID      string     `json:"taskId"`
	User        UserInfo   `json:"user"`
	Delegator   *UserInfo  `json:"delegator,omitempty"`
	Status      string     `json:"status"`
	Deadline    *crud.Time `json:"deadline,omitempty"`
	IsTimeout   bool       `json:"isTimeout,omitempty"`
	Opinion     *string    `json:"opinion,omitempty"`
	Attachments []string   `json:"attachments,omitempty"`
	ActionTime  *crud.Time `json:"actionTime,omitempty"`
	TransferTo  *UserInfo  `json:"transferTo,omitempty"`
}

// Activity is a side action (or an urge) recorded at a node visit; decisions are not
// activities, they live on the participant that made them (§6.7).
type Activity struct {
	Action             string     `json:"action"`
	Operator           UserInfo   `json:"operator"`
	Opinion            *string    `json:"opinion,omitempty"`
	Attachments        []string   `json:"attachments,omitempty"`
	TransferTo         *UserInfo  `json:"transferTo,omitempty"`
	Target             *UserInfo  `json:"target,omitempty"`
	RollbackToNodeID   *string    `json:"rollbackToNodeId,omitempty"`
	RollbackToNodeName *string    `json:"rollbackToNodeName,omitempty"`
	AddedAssignees     []UserInfo `json:"addedAssignees,omitempty"`
	RemovedAssignees   []UserInfo `json:"removedAssignees,omitempty"`
	CCUsers            []UserInfo `json:"ccUsers,omitempty"`
	CreatedAt          crud.Time  `json:"createdAt"`
}

// CCRecipient is one carbon copy of a node visit with its read receipt.
type CCRecipient struct {
	User   UserInfo   `json:"user"`
	ReadAt *crud.Time `json:"readAt,omitempty"`
}

// visitView is what a timeline entry and a flow-graph node say about one node visit.
type visitView struct {
	ExecutionType  design.ExecutionType  `json:"executionType,omitempty"`
	ApprovalMethod design.ApprovalMethod `json:"approvalMethod,omitempty"`
	PassRule       design.PassRule       `json:"passRule,omitempty"`
	PassRatio      *Decimal              `json:"passRatio,omitempty"`
	Participants   []NodeParticipant     `json:"participants,omitempty"`
	CCRecipients   []CCRecipient         `json:"ccRecipients,omitempty"`
	Activities     []Activity            `json:"activities,omitempty"`
}

// TimelineEntry is one step of the path an instance took (§6.7): a node visit, or a withdraw /
// terminate milestone carrying its one activity.
type TimelineEntry struct {
	Kind   string  `json:"kind"`
	NodeID *string `json:"nodeId,omitempty"`
	Name   *string `json:"name,omitempty"`
	Status *string `json:"status,omitempty"`
	visitView
	StartedAt  crud.Time  `json:"startedAt"`
	FinishedAt *crud.Time `json:"finishedAt,omitempty"`
}

// activityActions are the action-log actions shown as activities of a visit; withdraw and
// terminate become milestone entries, decisions fuse into participants.
var activityActions = map[string]bool{ActionTransfer: true, ActionRollback: true, ActionAddAssignee: true,
	ActionRemoveAssignee: true, ActionAddCC: true, ActionReassign: true, ActionExecute: true, ActionSubmit: true, ActionResubmit: true}

// finishingActions are the actions whose log finishes a task (its participant's outcome).
var finishingActions = map[string]bool{ActionApprove: true, ActionHandle: true, ActionReject: true, ActionTransfer: true,
	ActionRollback: true, ActionReassign: true}

// timeline is the instance's path: one entry per visit in sequence, withdraw and terminate
// milestones after the visits of the round (submit or resubmit) they ended.
func (d *detailData) timeline() []TimelineEntry {
	views := d.visitViews()
	var milestones []TimelineEntry
	var rounds []int // round of each milestone: submits and resubmits logged before it
	round := 0
	for i := range d.logs {
		l := &d.logs[i]
		switch l.Action {
		case ActionSubmit, ActionResubmit:
			round++
		case ActionWithdraw, ActionTerminate:
			at := l.CreatedAt
			milestones = append(milestones, TimelineEntry{Kind: l.Action, StartedAt: at, FinishedAt: &at,
				visitView: visitView{Activities: []Activity{d.activity(l)}}})
			rounds = append(rounds, round)
		}
	}
	out := make([]TimelineEntry, 0, len(d.visits)+len(milestones))
	next, visitRound := 0, 0
	flush := func(upTo int) {
		for ; next < len(milestones) && rounds[next] <= upTo; next++ {
			out = append(out, milestones[next])
		}
	}
	for i := range d.visits {
		v := &d.visits[i]
		n := d.g.nodes[v.NodeID]
		if n.Kind == design.NodeStart {
			flush(visitRound)
			visitRound++
		}
		e := TimelineEntry{Kind: string(n.Kind), NodeID: &n.ID, Name: &n.Name, Status: &v.Status, visitView: views[i], StartedAt: v.CreatedAt}
		if !v.FinishedAt.IsZero() {
			f := v.FinishedAt
			e.FinishedAt = &f
		}
		out = append(out, e)
	}
	flush(len(d.logs) + 1)
	return out
}

// visitViews builds the view of every visit: node settings, participants, cc recipients and
// activities attributed to it (computed once per detail).
func (d *detailData) visitViews() []visitView {
	if d.views != nil {
		return d.views
	}
	views := make([]visitView, len(d.visits))
	index := make(map[string]int, len(d.visits))
	var starts []int
	for i := range d.visits {
		v := &d.visits[i]
		index[v.ID] = i
		n := d.g.nodes[v.NodeID]
		if n.Kind == design.NodeStart {
			starts = append(starts, i)
		}
		if n.Kind == design.NodeApproval || n.Kind == design.NodeHandle {
			views[i] = visitView{ExecutionType: n.ExecutionType, ApprovalMethod: n.ApprovalMethod, PassRule: n.PassRule}
			if n.PassRule == design.PassRatio {
				ratio := n.PassRatio
				views[i].PassRatio = &ratio
			}
		}
	}
	finished := d.finishingLogs()
	for i := range d.tasks {
		t := &d.tasks[i]
		if at, ok := index[t.VisitID]; ok {
			views[at].Participants = append(views[at].Participants, participant(t, finished[t.ID]))
		}
	}
	for i := range d.ccs {
		c := &d.ccs[i]
		at := d.visitOf(index, c.VisitID, c.NodeID, c.TaskID, c.CreatedAt)
		if at >= 0 {
			r := CCRecipient{User: UserInfo{ID: c.CCUserID, Name: c.CCUserName, DepartmentID: deref(c.CCUserDepartmentID),
				DepartmentName: deref(c.CCUserDepartmentName)}, ReadAt: optionalTime(c.ReadAt)}
			views[at].CCRecipients = append(views[at].CCRecipients, r)
		}
	}
	d.attributeActivities(views, index, starts)
	d.views = views
	return views
}

// attributeActivities adds the side-action logs and the urges to their visits in time order:
// the k-th submit or resubmit to the k-th start visit, a task's action to the task's visit,
// any other to the node's latest visit begun by then.
func (d *detailData) attributeActivities(views []visitView, index map[string]int, starts []int) {
	submits := 0
	u := 0
	addUrges := func(until *crud.Time) {
		for ; u < len(d.urges) && (until == nil || !d.urges[u].CreatedAt.After(until.Time)); u++ {
			ur := &d.urges[u]
			if at := d.visitOf(index, nil, &ur.NodeID, ur.TaskID, ur.CreatedAt); at >= 0 {
				views[at].Activities = append(views[at].Activities, d.urgeActivity(ur))
			}
		}
	}
	for i := range d.logs {
		l := &d.logs[i]
		if !activityActions[l.Action] {
			continue
		}
		addUrges(&l.CreatedAt)
		at := -1
		if l.Action == ActionSubmit || l.Action == ActionResubmit {
			if submits < len(starts) {
				at = starts[submits]
			}
			submits++
		} else {
			at = d.visitOf(index, nil, l.NodeID, l.TaskID, l.CreatedAt)
		}
		if at >= 0 {
			views[at].Activities = append(views[at].Activities, d.activity(l))
		}
	}
	addUrges(nil)
}

// visitOf is the index of the visit a record belongs to: its own visit, its task's visit, or
// the latest visit of its node begun at or before at (-1: none).
func (d *detailData) visitOf(index map[string]int, visitID, nodeID, taskID *string, at crud.Time) int {
	if visitID != nil {
		if i, ok := index[*visitID]; ok {
			return i
		}
	}
	if taskID != nil {
		if t := d.byTask[*taskID]; t != nil {
			if i, ok := index[t.VisitID]; ok {
				return i
			}
		}
	}
	if nodeID == nil {
		return -1
	}
	for i := len(d.visits) - 1; i >= 0; i-- {
		v := &d.visits[i]
		if v.NodeID == *nodeID && !v.CreatedAt.After(at.Time) {
			return i
		}
	}
	return -1
}

// finishingLogs maps each finished task to the last log that finished it.
func (d *detailData) finishingLogs() map[string]*ActionLog {
	out := map[string]*ActionLog{}
	for i := range d.logs {
		l := &d.logs[i]
		if l.TaskID == nil || !finishingActions[l.Action] {
			continue
		}
		if t := d.byTask[*l.TaskID]; t != nil && !live(t.Status) {
			out[t.ID] = l
		}
	}
	return out
}

// participant is task t with the outcome of its finishing log l (nil: none).
func participant(t *Task, l *ActionLog) NodeParticipant {
	p := NodeParticipant{TaskID: t.ID, Status: t.Status, IsTimeout: t.IsTimeout, Deadline: optionalTime(t.Deadline),
		User: t.assignee()}
	if t.DelegatorID != nil {
		p.Delegator = &UserInfo{ID: *t.DelegatorID, Name: deref(t.DelegatorName), DepartmentID: deref(t.DelegatorDepartmentID),
			DepartmentName: deref(t.DelegatorDepartmentName)}
	}
	if l != nil {
		p.Opinion, p.Attachments, p.ActionTime, p.TransferTo = l.Opinion, l.Attachments, optionalTime(l.CreatedAt), l.transferTo()
	}
	return p
}

// activity is the Activity of log l.
func (d *detailData) activity(l *ActionLog) Activity {
	a := Activity{Action: l.Action, Opinion: l.Opinion, Attachments: l.Attachments, TransferTo: l.transferTo(),
		RollbackToNodeID: l.RollbackToNodeID, AddedAssignees: l.AddedAssignees, RemovedAssignees: l.RemovedAssignees,
		CCUsers: l.CCUsers, CreatedAt: l.CreatedAt,
		Operator: UserInfo{ID: l.OperatorID, Name: l.OperatorName, DepartmentID: deref(l.OperatorDepartmentID), DepartmentName: deref(l.OperatorDepartmentName)}}
	if l.RollbackToNodeID != nil {
		if n := d.g.nodes[*l.RollbackToNodeID]; n != nil {
			a.RollbackToNodeName = &n.Name
		}
	}
	return a
}

// urgeActivity is the urge activity of record u: the urger, its target and its message (as
// opinion: the Activity shape has no message field).
func (d *detailData) urgeActivity(u *UrgeRecord) Activity {
	msg := u.Message
	return Activity{Action: ActionUrge, Operator: UserInfo{ID: u.UrgerID, Name: deref(u.UrgerName)}, Opinion: &msg,
		Target: &UserInfo{ID: u.TargetUserID, Name: deref(u.TargetUserName)}, CreatedAt: u.CreatedAt}
}

// optionalTime is t, nil when zero.
func optionalTime(t crud.Time) *crud.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
