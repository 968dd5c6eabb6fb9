package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
)

// MaxResolveKeys is the most keys one resolve call takes (spec §8.2).
const MaxResolveKeys = 200

// ResolveParams are the params of sys/storage/file resolve (wire-core §7.5).
type ResolveParams struct {
	Keys []string `json:"keys"`
}

// Validate implements rpc.Validator: 1..200 keys, none empty, each identifier-like and at most
// backend.MaxKeyLength long (a control character or NUL is 400/1400, issue #11 item 5).
func (p *ResolveParams) Validate() error {
	var c rpc.Check
	c.Required("keys", len(p.Keys) > 0)
	c.Max("keys", int64(len(p.Keys)), MaxResolveKeys)
	for _, k := range p.Keys {
		c.Valid("keys", k != "")
		c.Identifier("keys", k, backend.MaxKeyLength)
	}
	return c.Err()
}

// ResolvedFile is one entry of the resolve result.
type ResolvedFile struct {
	Key              string   `json:"key"`
	OriginalFilename string   `json:"originalFilename"`
	ContentType      string   `json:"contentType"`
	Size             int64    `json:"size"`
	Status           string   `json:"status"`
	UploadedAt       DateTime `json:"uploadedAt"`
	UploadedBy       string   `json:"uploadedBy"`
}

// ResolveResult is the data of resolve: the readable known keys in request order, duplicates
// removed. Never null.
type ResolveResult struct {
	Files []ResolvedFile `json:"files"`
}

// DateTime renders a time as the original's "2006-01-02 15:04:05" in the server's local time
// zone (wire-core §7.3: no zone, no T).
type DateTime time.Time

// DateTimeLayout is the wire layout of DateTime.
const DateTimeLayout = "2006-01-02 15:04:05"

// MarshalJSON implements json.Marshaler.
func (d DateTime) MarshalJSON() ([]byte, error) {
	t := time.Time(d)
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + t.Local().Format(DateTimeLayout) + `"`), nil
}

// UnmarshalJSON implements json.Unmarshaler: the wire layout in the local zone, or null (the
// zero time), so Go clients read what MarshalJSON writes.
func (d *DateTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = DateTime{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	t, err := time.ParseInLocation(DateTimeLayout, s, time.Local)
	if err != nil {
		return err
	}
	*d = DateTime(t)
	return nil
}

// FileResource returns sys/storage/file: resolve (wire-core §7.5; the spec's "file/resolve"):
// Bearer, engine default rate limit, ACL-governed like the download proxy; and the operator
// actions (svc additions, issue #35) find_page under QueryPermission and delete under
// DeletePermission, audited.
func (s *Service) FileResource() rpc.Resource {
	return rpc.Resource{Name: "sys/storage/file", Ops: []rpc.Op{
		rpc.Handle("resolve", s.handleResolve),
		rpc.Handle("find_page", s.handleFindFiles, rpc.RequiredPermission(QueryPermission)),
		rpc.Handle("delete", s.handleDeleteFile, rpc.RequiredPermission(DeletePermission), rpc.Audit()),
	}}
}

func (s *Service) handleResolve(ctx context.Context, c rpc.Call, p ResolveParams) (*ResolveResult, error) {
	return s.Resolve(ctx, c.Principal, p.Keys)
}

// Resolve returns the registry records of keys that p may read, in the order given with
// duplicates removed. Unknown keys and keys the ACL refuses are left out, so the two look the
// same (spec §7); an ACL error fails the call with ErrFailedToGetFile (2202).
func (s *Service) Resolve(ctx context.Context, p *rpc.Principal, keys []string) (*ResolveResult, error) {
	keys = distinct(keys)
	known, err := s.files.lookupMany(ctx, s.db, keys)
	if err != nil {
		return nil, fmt.Errorf("storage: resolve: %w", err)
	}
	out := &ResolveResult{Files: make([]ResolvedFile, 0, len(known))}
	for _, k := range keys {
		f, ok := known[k]
		if !ok {
			continue
		}
		readable, err := s.canRead(ctx, p, f)
		if err != nil {
			return nil, ErrFailedToGetFile.Wrap(err)
		}
		if !readable {
			continue
		}
		out.Files = append(out.Files, ResolvedFile{
			Key: f.Key, OriginalFilename: f.OriginalFilename, ContentType: f.ContentType, Size: f.Size,
			Status: f.Status, UploadedAt: DateTime(f.UploadedAt), UploadedBy: f.UploadedBy,
		})
	}
	return out, nil
}

// distinct returns keys without empty strings and repeats, in first-seen order.
func distinct(keys []string) []string {
	seen := make(map[string]bool, len(keys))
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if k != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
