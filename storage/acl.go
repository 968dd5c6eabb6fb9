package storage

import (
	"context"
	"strings"

	"github.com/svc-framework/svc/rpc"
)

// ReadPermission is the permission token that lets a principal read every private file under the
// default ACL (Options.ReadPermission replaces it).
const ReadPermission = "sys.storage.file.read"

// FileACL decides who may read a private file, for the download proxy and sys/storage/file
// resolve (wire-core §7.6). Keys under pub/ are readable by everyone and never reach it.
//
// p is nil when the request carried no credentials. f is the registry record of the key; for an
// object the registry does not know, only f.Key is set. An error answers
// ErrFailedToGetFile (2202).
type FileACL interface {
	CanRead(ctx context.Context, p *rpc.Principal, f File) (bool, error)
}

// PermissionChecker checks a permission token for a principal: nil when held, an error (usually
// rpc.ErrAccessDenied) when not. The rpc engine's CheckPermission has this shape.
type PermissionChecker interface {
	CheckPermission(ctx context.Context, p *rpc.Principal, token string) error
}

// DefaultACL lets the uploader read their own files, the system principal read everything, and
// any principal holding Permission read everything.
type DefaultACL struct {
	// Permission is the token that grants reading every file (default ReadPermission).
	Permission string
	// Checker checks Permission; nil means only uploaders and the system read.
	Checker PermissionChecker
}

var _ FileACL = DefaultACL{}

// CanRead implements FileACL. A checker failure counts as "not held".
func (a DefaultACL) CanRead(ctx context.Context, p *rpc.Principal, f File) (bool, error) {
	switch {
	case strings.HasPrefix(f.Key, PublicPrefix):
		return true, nil
	case p == nil || p.IsAnonymous():
		return false, nil
	case p.IsSystem():
		return true, nil
	case f.UploadedBy != "" && f.UploadedBy == p.ID:
		return true, nil
	case a.Checker == nil:
		return false, nil
	}
	perm := a.Permission
	if perm == "" {
		perm = ReadPermission
	}
	return a.Checker.CheckPermission(ctx, p, perm) == nil, nil
}

// canRead applies the pub/ rule, then the configured ACL.
func (s *Service) canRead(ctx context.Context, p *rpc.Principal, f File) (bool, error) {
	if strings.HasPrefix(f.Key, PublicPrefix) {
		return true, nil
	}
	return s.acl.CanRead(ctx, p, f)
}
