package approval

import (
	"context"
	"encoding/json"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
)

// InstanceInfo is the instance of my.get_instance_detail (wire-approval §6.5 InstanceInfo, with
// flowId and flowCode as the client expects, §15); formData is stripped of the fields hidden
// from the viewer.
type InstanceInfo struct {
	InstanceID      string            `json:"instanceId"`
	InstanceNo      string            `json:"instanceNo"`
	Title           string            `json:"title"`
	FlowID          string            `json:"flowId"`
	FlowCode        string            `json:"flowCode"`
	FlowName        string            `json:"flowName"`
	FlowIcon        *string           `json:"flowIcon,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
	Applicant       UserInfo          `json:"applicant"`
	Status          string            `json:"status"`
	CurrentNodeID   *string           `json:"currentNodeId,omitempty"`
	CurrentNodeName *string           `json:"currentNodeName,omitempty"`
	BusinessRef     *string           `json:"businessRef,omitempty"`
	FormData        map[string]any    `json:"formData,omitempty"`
	CreatedAt       crud.Time         `json:"createdAt"`
	FinishedAt      *crud.Time        `json:"finishedAt,omitempty"`
}

// InstanceDetailInfo is the instance of admin.get_instance_detail (§6.6): InstanceInfo with
// tenantId and flowVersionId and the unfiltered form data.
type InstanceDetailInfo struct {
	InstanceInfo
	TenantID      string `json:"tenantId"`
	FlowVersionID string `json:"flowVersionId"`
}

// InstanceDetail is the answer of my.get_instance_detail (§6.5): the viewer's projection of an
// instance.
type InstanceDetail struct {
	Instance         InstanceInfo                 `json:"instance"`
	FormSchema       json.RawMessage              `json:"formSchema,omitempty"`
	Timeline         []TimelineEntry              `json:"timeline"`
	FlowGraph        InstanceFlowGraph            `json:"flowGraph"`
	AvailableActions []string                     `json:"availableActions"`
	FieldPermissions map[string]design.Permission `json:"fieldPermissions,omitempty"`
	MyTask           *ViewerTask                  `json:"myTask,omitempty"`
}

// AdminInstanceDetail is the answer of admin.get_instance_detail (§6.6).
type AdminInstanceDetail struct {
	Instance   InstanceDetailInfo `json:"instance"`
	FormSchema json.RawMessage    `json:"formSchema,omitempty"`
	Timeline   []TimelineEntry    `json:"timeline"`
	FlowGraph  InstanceFlowGraph  `json:"flowGraph"`
}

// myDetailOp is approval/my get_instance_detail: any authenticated caller who is the
// applicant, holds or held a task, or received a CC of the instance (else 40701); another
// tenant's instance is not found (40101).
func (s queries) myDetailOp() rpc.Op {
	return rpc.Handle("get_instance_detail", s.myDetail)
}

// adminDetailOp is approval/admin get_instance_detail (approval.instance.detail): the whole
// instance with unfiltered form data, tenant-checked.
func (s queries) adminDetailOp() rpc.Op {
	return rpc.Handle("get_instance_detail", s.adminDetail, rpc.RequiredPermission("approval.instance.detail"))
}

// DetailStatements is the number of statements my.get_instance_detail and
// admin.get_instance_detail run once the version's graph is cached (five more on the first read
// of a version): the instance, its flow, and its visits, tasks, action logs, CC records and
// urge records — one each, whatever their number.
const DetailStatements = 7

// detailData is everything the detail projections read, loaded in a fixed number of
// statements (docs/approval.md, Reference, "Query bounds"): the instance, its flow, its version's graph (cached),
// and all its visits, tasks, action logs, cc records and urge records.
type detailData struct {
	inst   *Instance
	flow   *Flow
	g      *graph
	visits []Visit      // by sequence
	tasks  []Task       // by creation, then sort order
	logs   []ActionLog  // by sequence (rows of before the column: by creation, then id)
	ccs    []CCRecord   // by creation
	urges  []UrgeRecord // by creation
	byTask map[string]*Task
	views  []visitView // per visit, see visitViews
}

// loadDetail reads instance id and its history for the caller of c (another tenant's instance
// is not found).
func (s queries) loadDetail(ctx context.Context, c rpc.Call, id string) (*detailData, caller, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, cl, err
	}
	d, err := s.loadHistory(ctx, cl, id)
	return d, cl, err
}

// loadHistory reads instance id (seen by cl) and its history.
func (s queries) loadHistory(ctx context.Context, cl caller, id string) (*detailData, error) {
	d := &detailData{inst: new(Instance), flow: new(Flow)}
	if err := s.db.NewSelect().Model(d.inst).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, notFoundAs(err, ErrInstanceNotFound)
	}
	if !cl.sees(d.inst.TenantID) {
		return nil, ErrInstanceNotFound
	}
	if err := s.db.NewSelect().Model(d.flow).Where("id = ?", d.inst.FlowID).Scan(ctx); err != nil {
		return nil, err
	}
	g, err := s.loadGraph(ctx, s.db, d.inst.FlowVersionID)
	if err != nil {
		return nil, err
	}
	d.g = g
	byInstance := func(model any, order ...string) error {
		return s.db.NewSelect().Model(model).Where("instance_id = ?", id).Order(order...).Scan(ctx)
	}
	if err := byInstance(&d.visits, "sequence"); err != nil {
		return nil, err
	}
	if err := byInstance(&d.tasks, "created_at", "sort_order", "id"); err != nil {
		return nil, err
	}
	if err := byInstance(&d.logs, "seq", "created_at", "id"); err != nil {
		return nil, err
	}
	if err := byInstance(&d.ccs, "created_at", "id"); err != nil {
		return nil, err
	}
	// apv_urge_record is indexed by task, not by instance: every urge names its task.
	if err := s.db.NewSelect().Model(&d.urges).Where("task_id IN (?)", s.db.NewSelect().Model((*Task)(nil)).Column("id").
		Where("instance_id = ?", id)).Order("created_at", "id").Scan(ctx); err != nil {
		return nil, err
	}
	d.byTask = make(map[string]*Task, len(d.tasks))
	for i := range d.tasks {
		d.byTask[d.tasks[i].ID] = &d.tasks[i]
	}
	return d, nil
}

// info is the instance's InstanceInfo with form data as given.
func (d *detailData) info(form map[string]any) InstanceInfo {
	i := d.inst
	in := InstanceInfo{InstanceID: i.ID, InstanceNo: i.InstanceNo, Title: i.Title, FlowID: i.FlowID, FlowCode: i.FlowCode,
		FlowName: d.flow.Name, FlowIcon: d.flow.Icon, Labels: d.flow.Labels, Status: i.Status, CurrentNodeID: i.CurrentNodeID,
		BusinessRef: i.BusinessRef, FormData: form, CreatedAt: i.CreatedAt,
		Applicant: i.applicant()}
	if n := d.g.nodes[deref(i.CurrentNodeID)]; n != nil {
		in.CurrentNodeName = &n.Name
	}
	if !i.FinishedAt.IsZero() {
		f := i.FinishedAt
		in.FinishedAt = &f
	}
	return in
}

// formSchema is the version's form document as stored (absent when the version has none).
func (d *detailData) formSchema() json.RawMessage {
	if isNull(d.g.version.FormSchema) {
		return nil
	}
	return d.g.version.FormSchema
}

// myDetail answers my.get_instance_detail for the caller.
func (s queries) myDetail(ctx context.Context, c rpc.Call, p InstanceIDParams) (*InstanceDetail, error) {
	d, cl, err := s.loadDetail(ctx, c, p.InstanceID)
	if err != nil {
		return nil, err
	}
	v := d.viewer(cl.ID, s.clock())
	if !v.sees() {
		return nil, ErrAccessDenied
	}
	mt := v.myTask()
	out := &InstanceDetail{FormSchema: d.formSchema(), Timeline: d.timeline(), FlowGraph: d.flowGraph(),
		AvailableActions: v.actions(mt), MyTask: mt}
	form := d.inst.FormData
	if d.g.hasFields {
		out.FieldPermissions = v.fieldPermissions()
		form = stripHidden(d.g, form, out.FieldPermissions)
	}
	out.Instance = d.info(form)
	return out, nil
}

// adminDetail answers admin.get_instance_detail.
func (s queries) adminDetail(ctx context.Context, c rpc.Call, p InstanceIDParams) (*AdminInstanceDetail, error) {
	d, _, err := s.loadDetail(ctx, c, p.InstanceID)
	if err != nil {
		return nil, err
	}
	return &AdminInstanceDetail{
		Instance:   InstanceDetailInfo{InstanceInfo: d.info(d.inst.FormData), TenantID: d.inst.TenantID, FlowVersionID: d.inst.FlowVersionID},
		FormSchema: d.formSchema(), Timeline: d.timeline(), FlowGraph: d.flowGraph(),
	}, nil
}
