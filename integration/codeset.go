package integration

import (
	"context"

	"github.com/svc-framework/svc/rpc"
)

// CodeSetCatalog is the host's canonical code catalog read by integration/code_set and checked
// when a code map is saved. The host passes it in Options; without one the catalog answers
// supported:false.
type CodeSetCatalog interface {
	// CodeSets lists the catalog's code sets; nil means the catalog cannot enumerate them.
	CodeSets(ctx context.Context) ([]CodeSetInfo, error)
	// Codes lists the codes of one code set.
	Codes(ctx context.Context, codeSet string) ([]CodeInfo, error)
}

// CodeSetInfo is one code set of the catalog.
type CodeSetInfo struct {
	CodeSet string `json:"codeSet"`
	Name    string `json:"name"`
}

// CodeInfo is one code of a code set.
type CodeInfo struct {
	Code  string `json:"code"`
	Label string `json:"label"`
}

// CodeSetList is list_code_sets' answer.
type CodeSetList struct {
	Supported bool          `json:"supported"`
	CodeSets  []CodeSetInfo `json:"codeSets,omitempty"`
}

// CodeList is list_codes' answer.
type CodeList struct {
	Supported bool       `json:"supported"`
	Codes     []CodeInfo `json:"codes,omitempty"`
}

// CodeSetParams are list_codes' params.
type CodeSetParams struct {
	CodeSet string `json:"codeSet"`
}

// Validate: codeSet is required.
func (p *CodeSetParams) Validate() error { return required("codeSet", p.CodeSet) }

// codeSetResource is integration/code_set, the read-only catalog view (wire-integration §5.6),
// under the code-map query permission.
func (s *Service) codeSetResource() rpc.Resource {
	q := rpc.RequiredPermission("integration.code_map.query")
	return rpc.Resource{Name: "integration/code_set", Ops: []rpc.Op{
		rpc.Handle("list_code_sets", s.listCodeSets, q),
		rpc.Handle("list_codes", s.listCodes, q),
	}}
}

func (s *Service) listCodeSets(ctx context.Context, _ rpc.Call, _ rpc.NoParams) (*CodeSetList, error) {
	if s.codeSets == nil {
		return &CodeSetList{}, nil
	}
	sets, err := s.codeSets.CodeSets(ctx)
	if err != nil {
		return nil, err
	}
	return &CodeSetList{Supported: true, CodeSets: nonNil(sets)}, nil
}

func (s *Service) listCodes(ctx context.Context, _ rpc.Call, p CodeSetParams) (*CodeList, error) {
	if s.codeSets == nil {
		return &CodeList{}, nil
	}
	codes, err := s.codeSets.Codes(ctx, p.CodeSet)
	if err != nil {
		return nil, err
	}
	return &CodeList{Supported: true, Codes: nonNil(codes)}, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
