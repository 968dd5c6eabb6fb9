package security

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/svc-framework/svc/db"
	"github.com/uptrace/bun"
)

// family is one row of sys_security_token_family: the refresh-token chain started by a login.
type family struct {
	bun.BaseModel `bun:"table:sys_security_token_family"`

	ID           string     `bun:"id,pk"`
	PrincipalID  string     `bun:"principal_id"`
	CurrentJTI   string     `bun:"current_jti"`
	Principal    string     `bun:"principal"` // JSON snapshot taken at login
	CreatedAt    time.Time  `bun:"created_at"`
	RefreshedAt  time.Time  `bun:"refreshed_at"`
	ExpiresAt    time.Time  `bun:"expires_at"`
	RevokedAt    *time.Time `bun:"revoked_at"`
	RevokeReason string     `bun:"revoke_reason"`
	ClientIP     string     `bun:"client_ip"` // the login's client address (migration 006)
}

// familyStore keeps token families in the primary database, so every node agrees on which
// refresh token is current: rotation is one conditional UPDATE (compare-and-swap on
// current_jti), which is atomic on PostgreSQL, MySQL and SQLite alike.
type familyStore struct {
	db *db.DB
}

func (s *familyStore) create(ctx context.Context, f family) error {
	f.CreatedAt, f.RefreshedAt, f.ExpiresAt = f.CreatedAt.UTC(), f.RefreshedAt.UTC(), f.ExpiresAt.UTC()
	if _, err := s.db.NewInsert().Model(&f).Exec(ctx); err != nil {
		return fmt.Errorf("security: create token family: %w", err)
	}
	return nil
}

// get returns the family, or nil when it does not exist (never issued, or purged).
func (s *familyStore) get(ctx context.Context, id string) (*family, error) {
	var f family
	err := s.db.NewSelect().Model(&f).Where("id = ?", id).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("security: load token family: %w", err)
	}
	return &f, nil
}

// rotate moves the family from jti from to jti to, only if from is still current and the
// family is not revoked. ok = false means another request rotated or revoked it first.
func (s *familyStore) rotate(ctx context.Context, id, from, to string, now, expires time.Time) (bool, error) {
	res, err := s.db.NewUpdate().Model((*family)(nil)).
		Set("current_jti = ?", to).Set("refreshed_at = ?", now.UTC()).Set("expires_at = ?", expires.UTC()).
		Where("id = ?", id).Where("current_jti = ?", from).Where("revoked_at IS NULL").
		Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("security: rotate token family: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("security: rotate token family: %w", err)
	}
	return n == 1, nil
}

// revokeAll marks the families revoked with reason and records one change row each, in one
// transaction: one UPDATE and one multi-row INSERT whatever the number of families. Revoking a
// family twice keeps the first reason (its extra change row is harmless).
func (s *familyStore) revokeAll(ctx context.Context, ids []string, reason string, now time.Time) error {
	changes := make([]changeRow, len(ids))
	for i, id := range ids {
		changes[i] = changeRow{Kind: changeFamily, Ref: id, CreatedAt: now.UTC()}
	}
	err := s.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewUpdate().Model((*family)(nil)).
			Set("revoked_at = ?", now.UTC()).Set("revoke_reason = ?", reason).
			Where("id IN (?)", bun.List(ids)).Where("revoked_at IS NULL").
			Exec(ctx)
		if err != nil {
			return err
		}
		_, err = tx.NewInsert().Model(&changes).Exec(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("security: revoke token families: %w", err)
	}
	return nil
}

// live returns the families of principal id that are neither revoked nor expired at now, oldest
// first.
func (s *familyStore) live(ctx context.Context, principalID string, now time.Time) ([]family, error) {
	var out []family
	err := s.db.NewSelect().Model(&out).Where("principal_id = ?", principalID).Where("revoked_at IS NULL").
		Where("expires_at > ?", now.UTC()).Order("created_at ASC", "id ASC").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("security: list token families: %w", err)
	}
	return out, nil
}

// isRevoked reports whether the family is revoked; an unknown family (never issued, or purged
// after its refresh token expired) is not.
func (s *familyStore) isRevoked(ctx context.Context, id string) (bool, error) {
	var revoked []time.Time
	err := s.db.NewSelect().Model((*family)(nil)).Column("revoked_at").Where("id = ?", id).Where("revoked_at IS NOT NULL").
		Limit(1).Scan(ctx, &revoked)
	if err != nil {
		return false, fmt.Errorf("security: load token family: %w", err)
	}
	return len(revoked) > 0, nil
}

// purge deletes families whose refresh token can no longer be used, and returns how many.
func (s *familyStore) purge(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.NewDelete().Model((*family)(nil)).Where("expires_at < ?", before.UTC()).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("security: purge token families: %w", err)
	}
	return res.RowsAffected()
}
