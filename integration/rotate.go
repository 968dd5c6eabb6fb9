package integration

import (
	"context"
	"fmt"

	"github.com/svc-framework/svc/db"
	"github.com/uptrace/bun"
)

// rotateHook, when set (tests), runs after each system row is rewritten inside the rotation's
// transaction.
var rotateHook func(done int)

// RotateKey re-encrypts every stored secret of every system (sensitive auth params of both
// directions and the data-source password) from one key to another in one transaction: all rows
// or none (beyond the original). from opens the stored values (a plaintext value is taken as
// it is); to seals them (a plaintext Secrets decrypts to plaintext). A value that does not open
// with from fails the whole rotation with ErrSecretUndecryptable or ErrSecretKeyMissing. It
// returns how many rows were rewritten.
func RotateKey(ctx context.Context, d *db.DB, from, to *Secrets) (int, error) {
	done := 0
	err := d.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var rows []System
		q := d.ForUpdate(tx.NewSelect().Model(&rows).OrderExpr("id ASC"))
		if err := q.Scan(ctx); err != nil {
			return err
		}
		for i := range rows {
			r := &rows[i]
			if err := reseal(r, from, to); err != nil {
				return fmt.Errorf("system %s: %w", r.Code, err)
			}
			if _, err := tx.NewUpdate().Model(r).Column("outbound_auth", "inbound_auth", "data_source").WherePK().Exec(ctx); err != nil {
				return err
			}
			done++
			if rotateHook != nil {
				rotateHook(done)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return done, nil
}

// reseal rewrites the secrets of one system from one key to another.
func reseal(s *System, from, to *Secrets) error {
	move := func(v string) (string, error) {
		plain, err := from.Open(v)
		if err != nil || plain == "" {
			return plain, err
		}
		return to.Seal(plain), nil
	}
	return mapSecrets(s, outboundSchemes, inboundSchemes, move)
}

// mapSecrets replaces each stored secret of a system — the sensitive auth params of both
// directions (out and in name each scheme's sensitive params) and the data-source password —
// with f's answer, stopping at f's first error.
func mapSecrets(s *System, out, in map[string][]string, f func(v string) (string, error)) error {
	for _, a := range []struct {
		cfg     *AuthConfig
		schemes map[string][]string
	}{{s.OutboundAuth, out}, {s.InboundAuth, in}} {
		if a.cfg == nil {
			continue
		}
		for k, v := range a.cfg.Params {
			if !sensitive(a.schemes, a.cfg.Scheme, k) {
				continue
			}
			nv, err := f(v)
			if err != nil {
				return err
			}
			a.cfg.Params[k] = nv
		}
	}
	if s.DataSource != nil {
		pw, err := f(s.DataSource.Password)
		if err != nil {
			return err
		}
		s.DataSource.Password = pw
	}
	return nil
}

// OpenSystem decrypts every stored secret of a system with s: the plaintext credentials the runtime
// (issue #21) uses and the recorder scrubs. Errors are ErrSecretKeyMissing or
// ErrSecretUndecryptable.
func (s *Secrets) OpenSystem(sys *System) ([]string, error) {
	var out []string
	probe := *sys
	probe.OutboundAuth, probe.InboundAuth = cloneAuth(sys.OutboundAuth), cloneAuth(sys.InboundAuth)
	if sys.DataSource != nil {
		ds := *sys.DataSource
		probe.DataSource = &ds
	}
	if err := reseal(&probe, s, &Secrets{}); err != nil {
		return nil, err
	}
	for _, a := range []struct {
		cfg     *AuthConfig
		schemes map[string][]string
	}{{probe.OutboundAuth, outboundSchemes}, {probe.InboundAuth, inboundSchemes}} {
		if a.cfg == nil {
			continue
		}
		for k, v := range a.cfg.Params {
			if v != "" && sensitive(a.schemes, a.cfg.Scheme, k) {
				out = append(out, v)
			}
		}
	}
	if probe.DataSource != nil && probe.DataSource.Password != "" {
		out = append(out, probe.DataSource.Password)
	}
	return out, nil
}

func cloneAuth(a *AuthConfig) *AuthConfig {
	if a == nil {
		return nil
	}
	c := *a
	c.Params = make(map[string]string, len(a.Params))
	for k, v := range a.Params {
		c.Params[k] = v
	}
	return &c
}
