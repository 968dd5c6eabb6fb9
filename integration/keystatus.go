package integration

import (
	"context"
	"strings"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
)

// SystemKeyStatus counts one system's stored secrets (sensitive auth params of both directions
// and the data-source password) by how they are kept.
type SystemKeyStatus struct {
	SystemCode string `json:"systemCode"`
	SystemName string `json:"systemName"`
	// Sealed values open with the configured key.
	Sealed int `json:"sealed"`
	// Plaintext values are stored unencrypted (saved while no key was configured).
	Plaintext int `json:"plaintext"`
	// Undecryptable values are sealed but do not open with the configured key (another key or
	// algorithm, or no key configured).
	Undecryptable int `json:"undecryptable"`
}

// KeyStatus is key_status's answer: whether a secret key is configured, and per system holding
// secrets how they are kept. RotationNeeded holds when some value is plaintext while a key is
// configured, or does not open with it: `svc integration rotate-key` brings them in line.
type KeyStatus struct {
	Encrypted      bool              `json:"encrypted"`
	RotationNeeded bool              `json:"rotationNeeded"`
	Systems        []SystemKeyStatus `json:"systems"`
}

// keyStatus is integration/ops key_status (beyond the original; the console's key rotation
// status): it reads every system and opens, never returns, its secrets.
func (s *Service) keyStatus(ctx context.Context, _ rpc.Call, _ rpc.NoParams) (*KeyStatus, error) {
	return ReadKeyStatus(ctx, s.db, s.secrets, s.outAuth.sensitive, s.inAuth.sensitive)
}

// ReadKeyStatus classifies the stored secrets of every system with secrets: out and in name
// the sensitive params of each scheme (every param of a scheme not listed is sensitive).
func ReadKeyStatus(ctx context.Context, d *db.DB, secrets *Secrets, out, in map[string][]string) (*KeyStatus, error) {
	var rows []System
	if err := d.NewSelect().Model(&rows).Column("code", "name", "outbound_auth", "inbound_auth", "data_source").OrderExpr("code ASC").Scan(ctx); err != nil {
		return nil, err
	}
	res := &KeyStatus{Encrypted: !secrets.Plaintext(), Systems: []SystemKeyStatus{}}
	for i := range rows {
		r := &rows[i]
		st := SystemKeyStatus{SystemCode: r.Code, SystemName: r.Name}
		// The callback answers each value unchanged and never fails: the row is only read.
		_ = mapSecrets(r, out, in, func(v string) (string, error) {
			switch {
			case v == "":
			case !strings.HasPrefix(v, sealedPrefix):
				st.Plaintext++
			default:
				if _, err := secrets.Open(v); err != nil {
					st.Undecryptable++
				} else {
					st.Sealed++
				}
			}
			return v, nil
		})
		if st.Sealed+st.Plaintext+st.Undecryptable == 0 {
			continue
		}
		if st.Undecryptable > 0 || (res.Encrypted && st.Plaintext > 0) {
			res.RotationNeeded = true
		}
		res.Systems = append(res.Systems, st)
	}
	return res, nil
}
