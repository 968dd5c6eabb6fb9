package security

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security/token"
	"github.com/uptrace/bun"
)

// sessionRow is one row of sys_security_session. The primary key is the token's hash; the token
// itself is never stored.
type sessionRow struct {
	bun.BaseModel `bun:"table:sys_security_session"`

	ID           string    `bun:"id,pk"`
	PrincipalID  string    `bun:"principal_id"`
	Principal    string    `bun:"principal"` // JSON snapshot taken at login
	ClientIP     string    `bun:"client_ip"`
	CreatedAt    time.Time `bun:"created_at"`
	LastSeenAt   time.Time `bun:"last_seen_at"`
	ExpiresAt    time.Time `bun:"expires_at"`
	MaxExpiresAt time.Time `bun:"max_expires_at"`
}

func newSessionRow(s Session) (*sessionRow, error) {
	snap, err := json.Marshal(s.Principal)
	if err != nil {
		return nil, fmt.Errorf("security: principal snapshot: %w", err)
	}
	return &sessionRow{ID: s.ID, PrincipalID: s.UserID, Principal: string(snap), ClientIP: s.ClientIP,
		CreatedAt: s.CreatedAt.UTC(), LastSeenAt: s.LastSeenAt.UTC(), ExpiresAt: s.ExpiresAt.UTC(), MaxExpiresAt: s.MaxExpiresAt.UTC()}, nil
}

func (r *sessionRow) session() (*Session, error) {
	p, err := decodePrincipal(r.Principal, r.PrincipalID)
	if err != nil {
		return nil, err
	}
	return &Session{ID: r.ID, UserID: r.PrincipalID, Principal: p, ClientIP: r.ClientIP, CreatedAt: r.CreatedAt.UTC(),
		LastSeenAt: r.LastSeenAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(), MaxExpiresAt: r.MaxExpiresAt.UTC()}, nil
}

// decodePrincipal reads a principal snapshot; one that does not match its owner id is refused
// as an invalid token.
func decodePrincipal(snapshot, id string) (*rpc.Principal, error) {
	var p rpc.Principal
	if err := json.Unmarshal([]byte(snapshot), &p); err != nil || p.ID != id {
		return nil, ErrTokenInvalid
	}
	if p.Roles == nil {
		p.Roles = []string{}
	}
	return &p, nil
}

// dbSessions keeps sessions in the primary database: every node reads the same rows, so a
// revocation (a deleted row) is seen by the next request on any node.
type dbSessions struct {
	db *db.DB
}

var _ sessionStore = (*dbSessions)(nil)

// create counts the user's live sessions and inserts the new one in one transaction. The count
// is not locked across nodes (best effort, spec §5.3); Sessions serializes a user's logins per
// node, which bounds the excess by the number of racing nodes.
func (s *dbSessions) precision() time.Duration { return time.Microsecond }

func (s *dbSessions) create(ctx context.Context, sess Session, limit sessionLimit, now time.Time) ([]Session, error) {
	row, err := newSessionRow(sess)
	if err != nil {
		return nil, err
	}
	var evicted []Session
	err = s.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		evicted = nil
		if limit.max > 0 {
			var live []sessionRow
			err := tx.NewSelect().Model(&live).Column("id", "principal_id").
				Where("principal_id = ?", sess.UserID).Where("expires_at > ?", now.UTC()).
				Order("created_at ASC", "id ASC").Scan(ctx)
			if err != nil {
				return err
			}
			if over := len(live) - limit.max + 1; over > 0 {
				if limit.reject {
					return ErrTooManyConcurrentSessions
				}
				ids := make([]string, over)
				for i := range over {
					ids[i] = live[i].ID
					evicted = append(evicted, Session{ID: live[i].ID, UserID: live[i].PrincipalID})
				}
				if _, err := tx.NewDelete().Model((*sessionRow)(nil)).Where("id IN (?)", bun.List(ids)).Exec(ctx); err != nil {
					return err
				}
				for _, id := range ids {
					if err := token.RecordChange(ctx, tx, token.ChangeSession, id, now); err != nil {
						return err
					}
				}
			}
		}
		_, err := tx.NewInsert().Model(row).Exec(ctx)
		return err
	})
	if errors.Is(err, ErrTooManyConcurrentSessions) {
		return nil, ErrTooManyConcurrentSessions
	}
	if err != nil {
		return nil, fmt.Errorf("security: create session: %w", err)
	}
	return evicted, nil
}

func (s *dbSessions) get(ctx context.Context, id string) (*Session, error) {
	var row sessionRow
	err := s.db.NewSelect().Model(&row).Where("id = ?", id).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("security: load session: %w", err)
	}
	return row.session()
}

func (s *dbSessions) touch(ctx context.Context, id string, seen, expires time.Time) error {
	_, err := s.db.NewUpdate().Model((*sessionRow)(nil)).
		Set("expires_at = ?", expires.UTC()).Set("last_seen_at = ?", seen.UTC()).
		Where("id = ?", id).Where("expires_at < ?", expires.UTC()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("security: extend session: %w", err)
	}
	return nil
}

// remove deletes the session and records the change in one transaction.
func (s *dbSessions) remove(ctx context.Context, id string, now time.Time) (*Session, error) {
	sess, err := s.get(ctx, id)
	if err != nil || sess == nil {
		return nil, err
	}
	gone := false
	err = s.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewDelete().Model((*sessionRow)(nil)).Where("id = ?", id).Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			gone = true // another request removed it first
			return err
		}
		return token.RecordChange(ctx, tx, token.ChangeSession, id, now)
	})
	if err != nil {
		return nil, fmt.Errorf("security: revoke session: %w", err)
	}
	if gone {
		return nil, nil
	}
	return sess, nil
}

func (s *dbSessions) list(ctx context.Context, userID string, now time.Time) ([]Session, error) {
	var rows []sessionRow
	err := s.db.NewSelect().Model(&rows).Where("principal_id = ?", userID).Where("expires_at > ?", now.UTC()).
		Order("created_at ASC", "id ASC").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("security: list sessions: %w", err)
	}
	out := make([]Session, 0, len(rows))
	for i := range rows {
		sess, err := rows[i].session()
		if err != nil {
			continue // a corrupt snapshot cannot authenticate anyway
		}
		out = append(out, *sess)
	}
	return out, nil
}

func (s *dbSessions) purge(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.NewDelete().Model((*sessionRow)(nil)).Where("expires_at <= ?", now.UTC()).Exec(ctx)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
