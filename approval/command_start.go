package approval

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"text/template"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// start creates an instance of the flow's published version and walks it forward from the
// start node until a node waits or the flow ends, all in one transaction (§8 Start).
func (s *Service) start(ctx context.Context, c rpc.Call, p StartParams) (*Instance, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	f, op, err := s.initiable(ctx, c, cl, p.TenantID, p.FlowCode)
	if err != nil {
		return nil, err
	}
	if f.BindingMode == BindingBusiness && strings.TrimSpace(deref(p.BusinessRef)) == "" && s.ext.refs == nil {
		return nil, ErrBusinessRefRequired
	}
	versionID, err := s.publishedVersion(ctx, f)
	if err != nil {
		return nil, err
	}
	g, err := s.loadGraph(ctx, s.db, versionID)
	if err != nil {
		return nil, err
	}
	data := nonNilMap(p.FormData)
	if err := s.checkForm(g, data); err != nil {
		return nil, err
	}
	inst, err := s.newInstance(ctx, f, versionID, op, p.BusinessRef, data)
	if err != nil {
		return nil, err
	}
	err = s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		r, err := s.newRun(ctx, tx, inst, op)
		if err != nil {
			return err
		}
		r.flow = f                                    // read above; spares the delegation lookup a second read
		if b := g.version.BusinessBinding; b != nil { // the version's snapshot decides (§9)
			if err := r.claimProjection(ctx, b); err != nil {
				return err
			}
		}
		// Queued like the run's other writes (the rows referencing it come after it in the
		// flush). Keyed as the instance's row: while it waits, save renders it again with the
		// instance as save leaves it, and no update is added.
		if err := r.writes.QueueAs(ctx, instanceRow{inst.ID}, tx.NewInsert().Model(inst)); err != nil {
			return err
		}
		if err := r.storeForm(ctx); err != nil {
			return err
		}
		if err := r.log(ctx, ActionSubmit, r.g.start, nil, nil); err != nil {
			return err
		}
		if err := r.publish(ctx, EventInstanceCreated, nil); err != nil {
			return err
		}
		if err := r.transition(ctx, InstanceRunning); err != nil {
			return err
		}
		if err := r.enter(ctx, r.g.start, 0); err != nil {
			return err
		}
		return r.save(ctx)
	})
	if err != nil {
		return nil, err
	}
	return inst, nil
}

// initiable finds the flow the caller may start by (tenant — empty: the caller's —, code) with
// start's gates (§8 Start 1): 40001 unknown or another tenant's, 40002 inactive, 40003 nothing
// published, 40103 the initiation rule refuses. It answers the caller as operator too.
func (s *Service) initiable(ctx context.Context, c rpc.Call, cl caller, tenant, code string) (*Flow, UserInfo, error) {
	if tenant == "" {
		tenant = cl.Tenant
	}
	if !cl.sees(tenant) {
		return nil, UserInfo{}, ErrFlowNotFound
	}
	op, err := s.operator(ctx, cl)
	if err != nil {
		return nil, UserInfo{}, err
	}
	f := new(Flow)
	if err := s.db.NewSelect().Model(f).Where("tenant_id = ?", tenant).Where("code = ?", code).Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, UserInfo{}, ErrFlowNotFound
		}
		return nil, UserInfo{}, err
	}
	switch {
	case !f.IsActive:
		return nil, UserInfo{}, ErrFlowNotActive
	case f.CurrentVersion == 0:
		return nil, UserInfo{}, ErrNoPublishedVersion
	}
	if err := s.mayInitiate(ctx, f, c.Principal, op); err != nil {
		return nil, UserInfo{}, err
	}
	return f, op, nil
}

// checkForm validates form data against the version's fields (when the version has a form
// document) and the size cap.
func (s *Service) checkForm(g *graph, data map[string]any) error {
	if g.hasFields {
		return s.ValidateFormData(g.fields, data)
	}
	return s.ValidateGrowth(map[string]any{}, data)
}

// mayInitiate applies the flow's initiation rule: everyone, or a matching initiator row (user
// id, the caller's department, one of its roles).
func (s *Service) mayInitiate(ctx context.Context, f *Flow, p *rpc.Principal, op UserInfo) error {
	if f.IsAllInitiationAllowed {
		return nil
	}
	var rows []Initiator
	if err := s.db.NewSelect().Model(&rows).Where("flow_id = ?", f.ID).Scan(ctx); err != nil {
		return err
	}
	if !initiatorAllows(rows, p, op) {
		return ErrNotAllowedInitiate
	}
	return nil
}

// initiatorAllows reports whether one of a flow's initiator rows matches the caller: its user
// id, its department, one of its roles. my.find_available_flows applies it to a batch of flows.
func initiatorAllows(rows []Initiator, p *rpc.Principal, op UserInfo) bool {
	for _, in := range rows {
		switch in.Kind {
		case InitiatorUser:
			if slices.Contains(in.IDs, op.ID) {
				return true
			}
		case InitiatorDepartment:
			if op.DepartmentID != "" && slices.Contains(in.IDs, op.DepartmentID) {
				return true
			}
		case InitiatorRole:
			for _, r := range p.Roles {
				if slices.Contains(in.IDs, r) {
					return true
				}
			}
		}
	}
	return false
}

// instanceNo is the default instance number: the flow code (at most 32 characters), the UTC
// time to the second and 8 random hex digits — unique in practice; the column's unique key
// makes a collision fail the start.
func instanceNo(code string, now crud.Time) string {
	if len(code) > 32 {
		code = code[:32]
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return strings.ToUpper(code) + "-" + now.Format("20060102150405") + "-" + hex.EncodeToString(b[:])
}

// title renders the flow's title template with flowName, flowCode, instanceNo, formData,
// applicantId, applicantName and the nested flow.name/code and applicant.id/name.
func title(f *Flow, inst *Instance) (string, error) {
	t, err := template.New("title").Option("missingkey=zero").Parse(f.InstanceTitleTemplate)
	if err != nil {
		return "", ErrTitleTemplateFailed.Wrap(err)
	}
	var b bytes.Buffer
	err = t.Execute(&b, map[string]any{"flowName": f.Name, "flowCode": f.Code, "instanceNo": inst.InstanceNo,
		"formData": inst.FormData, "applicantId": inst.ApplicantID, "applicantName": inst.ApplicantName,
		"flow": map[string]any{"name": f.Name, "code": f.Code}, "applicant": map[string]any{"id": inst.ApplicantID, "name": inst.ApplicantName}})
	if err != nil {
		return "", ErrTitleTemplateFailed.Wrap(err)
	}
	out := b.String()
	if len(out) > 256 {
		out = out[:256]
	}
	return out, nil
}

// StartParams are start's params (wire-approval §6.4). The applicant, its department and the
// globals are resolved on the server.
type StartParams struct {
	TenantID    string         `json:"tenantId"`
	FlowCode    string         `json:"flowCode"`
	BusinessRef *string        `json:"businessRef"`
	FormData    map[string]any `json:"formData"`
}
