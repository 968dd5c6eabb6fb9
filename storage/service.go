package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
	"github.com/uptrace/bun"
)

// Service is the storage module at run time: the upload lifecycle behind sys/storage, the file
// registry behind sys/storage/file, the download proxy, the workers, and the adoption API that
// host code calls inside its own transactions (Adopt, Replace, Delete).
type Service struct {
	cfg     config.Storage
	db      *db.DB
	backend backend.Backend
	info    backend.Info
	clock   func() time.Time
	log     *slog.Logger
	events  Publisher
	acl     FileACL
	auth    Authenticator
	errs    ErrorWriter

	claims claimStore
	parts  partStore
	files  registry
	queue  deleteQueue
}

// serviceDeps are what newService needs; New fills them from app.Platform, app.API and Options. cfg has the
// defaults of config applied (spec §8.2: config.Load, config.Default).
type serviceDeps struct {
	cfg     config.Storage
	db      *db.DB
	backend backend.Backend
	clock   func() time.Time // nil means time.Now (tests of the service alone)
	log     *slog.Logger     // nil discards
	opts    Options
	auth    Authenticator     // nil: every download is unauthenticated
	perms   PermissionChecker // nil: only uploaders and the system read private files
	errs    ErrorWriter
}

func newService(d serviceDeps) *Service {
	acl := d.opts.ACL
	if acl == nil {
		acl = DefaultACL{Permission: d.opts.ReadPermission, Checker: d.perms}
	}
	clock := d.clock
	if clock == nil {
		clock = time.Now
	}
	log := d.log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{
		cfg: d.cfg, db: d.db, backend: d.backend, info: d.backend.Info(), clock: clock,
		log: log.With(slog.String("module", "storage")), events: d.opts.Events, acl: acl,
		auth: d.auth, errs: d.errs,
		parts: partStore{d: d.db},
	}
}

// cleanupTimeout bounds the clean-up a failed request does after the client may have gone (the
// object of a mismatched completion, the session or claim of a failed init): long enough for a
// slow object store, short enough that a hung backend cannot hold the goroutine forever.
const cleanupTimeout = 30 * time.Second

// cleanupContext is ctx without its cancellation (the clean-up must run even when the client
// went away) but with a deadline of cleanupTimeout.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}

// Backend returns the backend objects are stored in.
func (s *Service) Backend() backend.Backend { return s.backend }

// now is the service clock in the database's form (UTC, microseconds).
func (s *Service) now() time.Time { return dbTime(s.clock()) }

// ownedClaim returns the claim id of principal p. An unknown id and another principal's claim
// both answer rpc.ErrAccessDenied (403/1100), so a caller cannot tell whether a claim exists.
func (s *Service) ownedClaim(ctx context.Context, p *rpc.Principal, id string) (*Claim, error) {
	c, err := s.claims.get(ctx, s.db, id)
	if err != nil {
		return nil, fmt.Errorf("storage: load claim: %w", err)
	}
	if c == nil || p.IsAnonymous() || c.CreatedBy != p.ID {
		return nil, rpc.ErrAccessDenied
	}
	return c, nil
}

// errClaimGone is what registerUpload answers when the claim is neither pending nor uploaded and
// no file was registered under its key: the sweeper expired it (its object and session queued
// claim_expired) or its owner aborted it while the object was being assembled.
var errClaimGone = errors.New("storage: claim gone before its upload was registered")

// registerUpload is the database half of a completed upload (spec §3, pending → uploaded): the
// claim becomes uploaded, its recorded parts are cleared and the file is registered, in one
// transaction. It is idempotent: a claim already registered (uploaded, or adopted since) changes
// nothing and publishes nothing. A claim gone with no file registered answers errClaimGone: the
// object behind it is queued for deletion and must not be answered as an upload.
func (s *Service) registerUpload(ctx context.Context, c *Claim) error {
	gone := false
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		gone = false
		moved, err := s.claims.markUploaded(ctx, tx, c.ID)
		if err != nil {
			return err
		}
		if !moved {
			gone, err = s.unregistered(ctx, tx, c)
			return err
		}
		if err := s.parts.clear(ctx, tx, c.ID); err != nil {
			return err
		}
		if err := s.files.record(ctx, tx, c, s.now()); err != nil {
			return err
		}
		return s.publish(ctx, tx, EventFileUploaded, FileUploaded{
			FileKey: c.Key, Size: c.Size, ContentType: c.ContentType,
			OriginalFilename: c.OriginalFilename, UploadedBy: c.CreatedBy,
		})
	})
	if err == nil && gone {
		return errClaimGone
	}
	return err
}

// unregistered tells, for a claim that was no longer pending, whether its upload was never
// registered: the claim row is gone (a registered claim stays uploaded until adoption or orphan
// reclamation consume it) and the registry has no record of its key (adoption and reclamation
// keep theirs).
func (s *Service) unregistered(ctx context.Context, tx bun.IDB, c *Claim) (bool, error) {
	cur, err := s.claims.get(ctx, tx, c.ID)
	if err != nil || cur != nil {
		return false, err
	}
	_, known, err := s.files.lookup(ctx, tx, c.Key)
	return err == nil && !known, err
}

// isNotFound reports a missing object.
func isNotFound(err error) bool { return errors.Is(err, backend.ErrNotFound) }
