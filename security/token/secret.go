package token

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/uptrace/bun"
)

// generatedSecretBytes is the size of a generated signing secret: the HS256 output size.
const generatedSecretBytes = 32

// secretRowID is the id of the one row of sys_security_secret that holds the JWT signing secret.
const secretRowID = "jwt"

// Keys holds the module's HS256 keys. Build cannot know them (it does no I/O and the
// generated secret lives in the database), so the signers share this holder and Start fills it
// before the server serves its first request. Until then signing fails and every token is
// invalid.
type Keys struct {
	set atomic.Pointer[keySet]
}

// keySet is the signing key and the purpose-bound key derived from it for challenge state.
type keySet struct {
	token     []byte // access and refresh tokens
	challenge []byte // challenge-state tokens: deriveKey(token, typChallenge)
}

// Store installs key (decoded secret) for every signer sharing k.
func (k *Keys) Store(key []byte) {
	k.set.Store(&keySet{token: key, challenge: deriveKey(key, typChallenge)})
}

// get returns the key for purpose (typChallenge, or anything else for access and refresh tokens).
func (k *Keys) get(purpose string) ([]byte, error) {
	ks := k.set.Load()
	if ks == nil {
		return nil, errSigningKeyNotLoaded
	}
	if purpose == typChallenge {
		return ks.challenge, nil
	}
	return ks.token, nil
}

// errSigningKeyNotLoaded: a token was signed or verified before the module started.
var errSigningKeyNotLoaded = errors.New("security: signing key not loaded (the module has not started)")

// secretRow is the one row of sys_security_secret.
type secretRow struct {
	bun.BaseModel `bun:"table:sys_security_secret"`

	ID        string    `bun:"id,pk"`
	Secret    string    `bun:"secret"` // hex
	CreatedAt time.Time `bun:"created_at"`
}

// LoadSigningKey returns the JWT signing key: svc.security.secret when configured (it always
// wins), else the secret kept in the primary database, generated and stored by the first node
// that starts without one. generated reports that this call created the row.
func LoadSigningKey(ctx context.Context, configured string, d *db.DB, now time.Time) (key []byte, generated bool, err error) {
	if configured != "" {
		key, err := decodeSecret(configured)
		return key, false, err
	}
	key, err = readSecret(ctx, d)
	if err == nil {
		return key, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, false, err
	}
	fresh := make([]byte, generatedSecretBytes)
	if _, err := rand.Read(fresh); err != nil {
		return nil, false, fmt.Errorf("security: generate signing secret: %w", err)
	}
	// Insert if absent, then read back: of nodes starting at once on an empty database exactly
	// one insert wins and every node (the losers included) reads the winner's row.
	row := secretRow{ID: secretRowID, Secret: hex.EncodeToString(fresh), CreatedAt: now.UTC()}
	_, err = d.NewInsert().Model(&row).Exec(ctx)
	switch {
	case err == nil:
		generated = true
	case db.IsUniqueViolation(err):
	default:
		return nil, false, fmt.Errorf("%w: store a generated secret in sys_security_secret: %w", ErrSigningSecretUnavailable, err)
	}
	key, err = readSecret(ctx, d)
	if err != nil {
		return nil, false, err
	}
	return key, generated, nil
}

// readSecret reads the stored secret; sql.ErrNoRows when there is none yet. Any other failure (the
// table is missing because migrations were not applied, the database is down) is
// ErrSigningSecretUnavailable: never fall back to a per-process or public key.
func readSecret(ctx context.Context, d *db.DB) ([]byte, error) {
	var row secretRow
	err := d.NewSelect().Model(&row).Where("id = ?", secretRowID).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read sys_security_secret: %w", ErrSigningSecretUnavailable, err)
	}
	key, err := hex.DecodeString(row.Secret)
	if err != nil || len(key) < config.MinSecretBytes || config.IsPublicSecret(key) {
		return nil, fmt.Errorf("%w: the row %q of sys_security_secret is not a usable secret; delete it and restart every node", ErrSigningSecretUnavailable, secretRowID)
	}
	return key, nil
}

// decodeSecret decodes a configured svc.security.secret (config.Validate has checked it).
func decodeSecret(secret string) ([]byte, error) {
	key, err := hex.DecodeString(secret)
	if err != nil {
		return nil, fmt.Errorf("svc.security.secret: not hex: %w", config.ErrInvalidSecret)
	}
	if len(key) < config.MinSecretBytes {
		return nil, fmt.Errorf("svc.security.secret: %w", config.ErrSecretTooShort)
	}
	if config.IsPublicSecret(key) {
		return nil, fmt.Errorf("svc.security.secret: %w", config.ErrPublicSecret)
	}
	return key, nil
}
