package token

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

// rotateIn moves the family from jti from to jti to within tx, only if from is still current
// and the family is not revoked. ok = false means another request rotated or revoked it first.
// Rotations are committed by the revoker's batches.
func (s *familyStore) rotateIn(ctx context.Context, tx bun.IDB, id, from, to string, now, expires time.Time) (bool, error) {
	res, err := tx.NewUpdate().Model((*family)(nil)).
		Set("current_jti = ?", to).Set("refreshed_at = ?", now.UTC()).Set("expires_at = ?", expires.UTC()).
		Where("id = ?", id).Where("current_jti = ?", from).Where("revoked_at IS NULL").
		Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("rotate token family: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("rotate token family: %w", err)
	}
	return n == 1, nil
}

// revokeIn marks the families revoked with reason within tx (one UPDATE whatever their number);
// the caller records their change rows in the same transaction. Revoking a family twice keeps
// the first reason (its extra change row is harmless).
func (s *familyStore) revokeIn(ctx context.Context, tx bun.IDB, ids []string, reason string, now time.Time) error {
	_, err := tx.NewUpdate().Model((*family)(nil)).
		Set("revoked_at = ?", now.UTC()).Set("revoke_reason = ?", reason).
		Where("id IN (?)", bun.List(ids)).Where("revoked_at IS NULL").
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("revoke token families: %w", err)
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

// revokedSince calls each with the id and revocation time of every family revoked after since,
// reading the rows as they come. With fromLog it reads the family rows of the change log
// (sys_security_change, indexed by created_at, which keeps changeRetention): every revocation
// records one there at its revocation time. Otherwise it reads the family table, which has no
// index on revoked_at (one would make every revocation's UPDATE several times dearer on
// SQLite), so it is a scan: only for an access lifetime longer than the change log keeps.
func (s *familyStore) revokedSince(ctx context.Context, since time.Time, fromLog bool, each func(id string, at time.Time)) error {
	q := s.db.NewSelect().Model((*family)(nil)).Column("id", "revoked_at").Where("revoked_at > ?", since.UTC())
	if fromLog {
		q = s.db.NewSelect().Model((*changeRow)(nil)).Column("ref", "created_at").
			Where("kind = ?", ChangeFamily).Where("created_at > ?", since.UTC())
	}
	rows, err := q.Rows(ctx)
	if err != nil {
		return fmt.Errorf("security: load revoked token families: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var f family
		var c changeRow
		if fromLog {
			err = s.db.ScanRow(ctx, rows, &c)
			f.ID, f.RevokedAt = c.Ref, &c.CreatedAt
		} else {
			err = s.db.ScanRow(ctx, rows, &f)
		}
		if err != nil {
			return fmt.Errorf("security: load revoked token families: %w", err)
		}
		if f.RevokedAt != nil {
			each(f.ID, *f.RevokedAt)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("security: load revoked token families: %w", err)
	}
	return nil
}

// purge deletes families whose refresh token can no longer be used, and returns how many.
func (s *familyStore) purge(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.NewDelete().Model((*family)(nil)).Where("expires_at < ?", before.UTC()).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("security: purge token families: %w", err)
	}
	return res.RowsAffected()
}
