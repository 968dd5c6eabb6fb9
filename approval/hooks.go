package approval

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// InstanceLifecycleHook is told about every instance it should know of (wire-approval §11). Both
// methods run inside the transaction of the command that causes them (tx is that transaction):
// an error rolls the whole command back and is answered to the caller. The instance must not be
// modified. Hooks run in the order of Options.LifecycleHooks; hosts must not rely on it.
type InstanceLifecycleHook interface {
	// OnInstanceCreated is called once when start has inserted the instance (status running).
	OnInstanceCreated(ctx context.Context, tx bun.IDB, inst *Instance) error
	// OnInstanceTransition is called on every later status change: running → approved,
	// rejected, terminated, withdrawn, returned; returned or withdrawn → running (resubmit),
	// withdrawn or terminated.
	OnInstanceTransition(ctx context.Context, tx bun.IDB, inst *Instance, from, to string) error
}

// InstanceNoGenerator replaces the built-in instance number (<CODE>-<yyyymmddhhmmss>-<8 hex>).
// The number must be unique across tenants (apv_instance.instance_no is a unique key) and at most
// 64 characters.
type InstanceNoGenerator interface {
	Generate(ctx context.Context, flowCode string) (string, error)
}

// InstanceGlobalsResolver fills apv_instance.globals at start: values condition expressions
// read as globals (wire-approval §8 Start, step 3). It sees the applicant and the submitted form.
type InstanceGlobalsResolver interface {
	ResolveGlobals(ctx context.Context, flowCode string, applicant UserInfo, formData map[string]any) (map[string]any, error)
}

// BusinessRefProvider supplies the businessRef of a business flow's start when the caller sends
// none (wire-approval §6.4 StartParams): a single key value, or a JSON object of the key columns.
// An empty answer leaves the start refused with 40107.
type BusinessRefProvider interface {
	BusinessRef(ctx context.Context, flowCode string, applicant UserInfo, formData map[string]any) (string, error)
}

// extensions are the host's Go extension points the engine calls.
type extensions struct {
	hooks   []InstanceLifecycleHook
	numbers InstanceNoGenerator
	globals InstanceGlobalsResolver
	refs    BusinessRefProvider
}

func extensionsOf(o Options) extensions {
	return extensions{hooks: o.LifecycleHooks, numbers: o.InstanceNoGenerator, globals: o.GlobalsResolver,
		refs: o.BusinessRefProvider}
}

// instanceNumber is the number of a new instance of flow code: the host's generator, else the
// built-in one.
func (s *Service) instanceNumber(ctx context.Context, code string, now crud.Time) (string, error) {
	if s.ext.numbers == nil {
		return instanceNo(code, now), nil
	}
	no, err := s.ext.numbers.Generate(ctx, code)
	switch {
	case err != nil:
		return "", fmt.Errorf("approval: instance number: %w", err)
	case no == "" || len(no) > 64:
		return "", errors.New("approval: the instance number generator answered an empty or longer than 64 characters number")
	}
	return no, nil
}

// resolveGlobals is the globals of a new instance (none without a resolver).
func (s *Service) resolveGlobals(ctx context.Context, code string, op UserInfo, data map[string]any) (map[string]any, error) {
	if s.ext.globals == nil {
		return nil, nil
	}
	g, err := s.ext.globals.ResolveGlobals(ctx, code, op, data)
	if err != nil {
		return nil, fmt.Errorf("approval: globals: %w", err)
	}
	return g, nil
}

// businessRef is the start's business reference: the caller's, else the provider's.
func (s *Service) businessRef(ctx context.Context, asked *string, code string, op UserInfo, data map[string]any) (*string, error) {
	if (asked != nil && *asked != "") || s.ext.refs == nil {
		return asked, nil
	}
	ref, err := s.ext.refs.BusinessRef(ctx, code, op, data)
	if err != nil {
		return nil, fmt.Errorf("approval: business reference: %w", err)
	}
	if ref == "" {
		return asked, nil
	}
	return &ref, nil
}

// newInstance builds the row of a new running instance of f's published version versionID:
// number (Options.InstanceNoGenerator or the built-in one), title, applicant, globals
// (Options.GlobalsResolver) and, for a business flow, the business reference (the caller's or
// Options.BusinessRefProvider's; 40107 when neither has one).
func (s *Service) newInstance(ctx context.Context, f *Flow, versionID string, op UserInfo, ref *string, data map[string]any) (*Instance, error) {
	if f.BindingMode == BindingBusiness {
		var err error
		if ref, err = s.businessRef(ctx, ref, f.Code, op, data); err != nil {
			return nil, err
		}
		if strings.TrimSpace(deref(ref)) == "" {
			return nil, ErrBusinessRefRequired
		}
	}
	now := crud.NewTime(s.clock())
	inst := &Instance{TenantID: f.TenantID, FlowID: f.ID, FlowCode: f.Code, FlowVersionID: versionID,
		ApplicantID: op.ID, ApplicantName: op.Name,
		ApplicantDepartmentID: optional(op.DepartmentID), ApplicantDepartmentName: optional(op.DepartmentName),
		Status: InstanceRunning, BusinessRef: ref, FormData: data}
	inst.ID, inst.CreatedAt, inst.UpdatedAt, inst.CreatedBy, inst.UpdatedBy = rpc.NewID(), now, now, op.ID, op.ID
	var err error
	if inst.InstanceNo, err = s.instanceNumber(ctx, f.Code, now); err != nil {
		return nil, err
	}
	if inst.Globals, err = s.resolveGlobals(ctx, f.Code, op, data); err != nil {
		return nil, err
	}
	if inst.Title, err = title(f, inst); err != nil {
		return nil, err
	}
	return inst, nil
}
