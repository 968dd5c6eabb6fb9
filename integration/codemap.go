package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// Unmapped-value policies of a code map.
const (
	UnmappedReject      = "reject"
	UnmappedPassthrough = "passthrough"
	UnmappedFallback    = "fallback"
)

// CodeMapSearch filters code maps: systemId equal, codeSet and name contain, isEnabled equal.
type CodeMapSearch struct {
	SystemID  string `json:"systemId"`
	CodeSet   string `json:"codeSet"`
	Name      string `json:"name"`
	IsEnabled *bool  `json:"isEnabled"`
}

// CodeMapParams are create and update's params (wire-integration §5.5).
type CodeMapParams struct {
	ID                string          `json:"id"`
	SystemID          string          `json:"systemId"`
	CodeSet           string          `json:"codeSet"`
	Name              string          `json:"name"`
	Entries           []CodeMapEntry  `json:"entries"`
	OnUnmapped        string          `json:"onUnmapped"`
	FallbackCanonical json.RawMessage `json:"fallbackCanonical"`
	FallbackExternal  json.RawMessage `json:"fallbackExternal"`
	IsEnabled         *bool           `json:"isEnabled"`
}

// Validate: systemId, codeSet and name are required (400/1400).
func (p *CodeMapParams) Validate() error {
	return required("systemId", p.SystemID, "codeSet", p.CodeSet, "name", p.Name)
}

func (s *Service) codeMapResource() rpc.Resource {
	r := &crud.Resource[CodeMap, *CodeMap, CodeMapSearch, CodeMapParams]{
		Query: crud.Query[CodeMap, CodeMapSearch]{Name: "integration/code_map", Permission: "integration.code_map", DB: s.db,
			Search: crud.NewSearch(
				crud.Eq("system_id", func(q *CodeMapSearch) string { return q.SystemID }),
				crud.Contains("code_set", func(q *CodeMapSearch) string { return q.CodeSet }),
				crud.Contains("name", func(q *CodeMapSearch) string { return q.Name }),
				crud.EqPtr("is_enabled", func(q *CodeMapSearch) *bool { return q.IsEnabled }),
			).Sortable("codeSet", "name")},
		Clock: s.clock, ID: func(p *CodeMapParams) string { return p.ID },
		Build: func(ctx context.Context, _ bun.IDB, p *CodeMapParams, _ *CodeMap) (*CodeMap, error) {
			return s.buildCodeMap(ctx, p)
		},
	}
	return r.Resource()
}

func (s *Service) buildCodeMap(ctx context.Context, p *CodeMapParams) (*CodeMap, error) {
	policy := p.OnUnmapped
	if policy == "" {
		policy = UnmappedReject
	}
	if policy != UnmappedReject && policy != UnmappedPassthrough && policy != UnmappedFallback {
		return nil, detail(ErrInvalidCodeMap, "onUnmapped must be reject, passthrough or fallback")
	}
	if _, err := BuildCodeIndex(p.Entries); err != nil {
		return nil, err
	}
	if err := s.checkCodeSet(ctx, p.CodeSet); err != nil {
		return nil, err
	}
	return &CodeMap{SystemID: p.SystemID, CodeSet: p.CodeSet, Name: p.Name, Entries: p.Entries, OnUnmapped: policy,
		FallbackCanonical: nullIfEmpty(p.FallbackCanonical), FallbackExternal: nullIfEmpty(p.FallbackExternal),
		IsEnabled: enabled(p.IsEnabled)}, nil
}

// checkCodeSet: when the host catalog can list its code sets, codeSet must be one of them.
func (s *Service) checkCodeSet(ctx context.Context, codeSet string) error {
	if s.codeSets == nil {
		return nil
	}
	sets, err := s.codeSets.CodeSets(ctx)
	if err != nil || sets == nil {
		return err
	}
	for _, cs := range sets {
		if cs.CodeSet == codeSet {
			return nil
		}
	}
	return detail(ErrInvalidCodeMap, fmt.Sprintf("code set %q is not in the host catalog", codeSet))
}

// CodeIndex is a code map's lookup index: normalized value → the entry whose primary answers
// it, one map per side.
type CodeIndex struct {
	ToExternal  map[string]int // canonical primary or alias → entry
	ToCanonical map[string]int // external primary or alias → entry
}

// BuildCodeIndex indexes entries by the normalized string form of every primary and alias
// (so 1 and "1" are the same key); a value listed twice on one side is 2629.
func BuildCodeIndex(entries []CodeMapEntry) (*CodeIndex, error) {
	ix := &CodeIndex{ToExternal: map[string]int{}, ToCanonical: map[string]int{}}
	for i, e := range entries {
		if err := ix.add(ix.ToExternal, "canonical", i, append([]json.RawMessage{e.Canonical}, e.CanonicalAliases...)); err != nil {
			return nil, err
		}
		if err := ix.add(ix.ToCanonical, "external", i, append([]json.RawMessage{e.External}, e.ExternalAliases...)); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

func (ix *CodeIndex) add(side map[string]int, name string, entry int, values []json.RawMessage) error {
	for _, v := range values {
		key, err := NormalizeCode(v)
		if err != nil {
			return detail(ErrInvalidCodeMap, fmt.Sprintf("entry %d: %s: %v", entry+1, name, err))
		}
		if prev, dup := side[key]; dup {
			return detail(ErrInvalidCodeMap, fmt.Sprintf("%s value %s appears in entries %d and %d", name, key, prev+1, entry+1))
		}
		side[key] = entry
	}
	return nil
}

// NormalizeCode is the lookup key of a code value: a string as it is, a number in its shortest
// decimal form, a boolean as true/false. Anything else is an error.
func NormalizeCode(v json.RawMessage) (string, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", fmt.Errorf("value is missing")
	}
	switch v[0] {
	case '"':
		var s string
		err := json.Unmarshal(v, &s)
		return s, err
	case 't', 'f':
		var b bool
		err := json.Unmarshal(v, &b)
		return strconv.FormatBool(b), err
	case 'n', '{', '[':
		return "", fmt.Errorf("value must be a string, number or boolean")
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return "", fmt.Errorf("value %s is not a number", v)
	}
	return strconv.FormatFloat(f, 'f', -1, 64), nil
}

func nullIfEmpty(v json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(v); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	return v
}
