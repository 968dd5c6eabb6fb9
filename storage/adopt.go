package storage

import (
	"context"
	"fmt"

	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// Adopt makes uploaded files part of a business record. Call it inside the host's own
// transaction tx on the primary database, in the same transaction that saves the record:
//
//   - only uploaded claims (complete_upload succeeded) of principal p are adopted: a key that is
//     pending, another principal's, already adopted or unknown answers ErrClaimNotFound, and the
//     host must then roll back tx (claims of the other keys were consumed in it);
//   - an anonymous or nil principal answers ErrAccessDenied, a plain error without a code
//     (wire-core §7.8);
//   - the claims are consumed (deleted) and the registry records move from uploaded to claimed,
//     with EventFileClaimed per key.
//
// Adopting no keys is a no-op. Repeated keys count once.
func (s *Service) Adopt(ctx context.Context, tx bun.IDB, p *rpc.Principal, keys ...string) error {
	keys = distinct(keys)
	if len(keys) == 0 {
		return nil
	}
	if p.IsAnonymous() {
		return fmt.Errorf("%w: adoption needs an authenticated principal", ErrAccessDenied)
	}
	n, err := s.claims.consume(ctx, tx, p.ID, keys)
	if err != nil {
		return fmt.Errorf("storage: adopt: %w", err)
	}
	if n != int64(len(keys)) {
		return fmt.Errorf("%w: %d of %d keys are not uploaded claims of %s", ErrClaimNotFound, int64(len(keys))-n, len(keys), p.ID)
	}
	if err := s.files.markClaimed(ctx, tx, keys, s.now()); err != nil {
		return fmt.Errorf("storage: adopt: %w", err)
	}
	for _, k := range keys {
		if err := s.publish(ctx, tx, EventFileClaimed, FileClaimed{FileKey: k}); err != nil {
			return fmt.Errorf("storage: adopt: %w", err)
		}
	}
	return nil
}

// Replace is Adopt for an update of a business record whose files were oldKeys and are now
// newKeys: keys only in newKeys are adopted, keys only in oldKeys are queued for deletion with
// reason "replaced", keys in both are left alone. It runs inside the host's transaction tx, so
// the queued deletions happen only if the update commits.
func (s *Service) Replace(ctx context.Context, tx bun.IDB, p *rpc.Principal, oldKeys, newKeys []string) error {
	oldSet := make(map[string]bool, len(oldKeys))
	for _, k := range oldKeys {
		oldSet[k] = true
	}
	newSet := make(map[string]bool, len(newKeys))
	var added []string
	for _, k := range newKeys {
		newSet[k] = true
		if !oldSet[k] {
			added = append(added, k)
		}
	}
	var removed []string
	for _, k := range oldKeys {
		if !newSet[k] {
			removed = append(removed, k)
		}
	}
	if err := s.Adopt(ctx, tx, p, added...); err != nil {
		return err
	}
	return s.enqueue(ctx, tx, ReasonReplaced, removed)
}

// Delete queues the files of a deleted business record for deletion with reason "deleted",
// inside the host's transaction tx. The delete worker removes the objects after commit and marks
// the registry records deleted. Queuing a key twice is harmless.
func (s *Service) Delete(ctx context.Context, tx bun.IDB, keys ...string) error {
	return s.enqueue(ctx, tx, ReasonDeleted, keys)
}

func (s *Service) enqueue(ctx context.Context, tx bun.IDB, reason string, keys []string) error {
	now := s.now()
	for _, k := range distinct(keys) {
		if err := s.queue.enqueue(ctx, tx, k, "", reason, now); err != nil {
			return fmt.Errorf("storage: queue %s for deletion: %w", k, err)
		}
	}
	return nil
}
