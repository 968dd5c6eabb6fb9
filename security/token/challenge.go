package token

import (
	"time"

	"github.com/svc-framework/svc/rpc"
)

// ChallengeTokenTTL is the lifetime of a challenge-state token (wire-core §5.2).
const ChallengeTokenTTL = 5 * time.Minute

// ChallengeState is what a challenge token carries between the steps of a login: the login
// mechanism and identifier, the principal found so far, the challenge to resolve next and those
// resolved.
type ChallengeState struct {
	LoginType  string
	Identifier string
	Principal  *rpc.Principal
	Pending    string
	Resolved   []string
	// LoginAt is the token's issue instant (its lat claim), for the token state's check.
	LoginAt time.Time
}

// Challenges sign the state between login steps: a JWT (typ challenge, ChallengeTokenTTL) with a
// key derived from the signing secret for this purpose only, so it is tamper-proof and can never
// pass as an access or refresh token.
type Challenges struct {
	signer signer
}

// NewChallenges returns the challenge-token signer over keys for audience (svc.app.name).
func NewChallenges(keys *Keys, audience string, now func() time.Time) *Challenges {
	return &Challenges{signer: signer{keys: keys, purpose: typChallenge, audience: audience, now: now,
		lifetimes: map[string]time.Duration{typChallenge: ChallengeTokenTTL}}}
}

// Issue signs st (its LoginAt is set to now).
func (t *Challenges) Issue(st ChallengeState) (string, error) {
	now := t.signer.now()
	c := &claims{ID: newID(), Type: typChallenge, IssuedAt: date(now), NotBefore: date(now),
		Expires: date(now.Add(ChallengeTokenTTL)), Mechanism: st.LoginType, Identifier: st.Identifier,
		Pending: []string{st.Pending}, Resolved: st.Resolved, LoginAt: now.UnixMicro()}
	if err := c.setPrincipal(st.Principal); err != nil {
		return "", err
	}
	return t.signer.sign(c)
}

// Parse verifies a challenge token; ok is false for any failure (forged, expired, malformed).
func (t *Challenges) Parse(token string) (st ChallengeState, ok bool) {
	c, err := t.signer.parse(token, typChallenge)
	if err != nil || len(c.Pending) != 1 {
		return ChallengeState{}, false
	}
	p, err := c.principal()
	if err != nil {
		return ChallengeState{}, false
	}
	return ChallengeState{LoginType: c.Mechanism, Identifier: c.Identifier, Principal: p, Pending: c.Pending[0],
		Resolved: c.Resolved, LoginAt: c.loginTime()}, true
}
