package security

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"slices"
	"strings"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

// HTTPBasic is the http_basic strategy over svc.security.basic_accounts:
// "Authorization: Basic base64(user:pass)" (scheme case-insensitive, split at the first colon,
// user non-empty). Malformed, unknown or wrong credentials all answer 401/1026 after the same
// constant-time comparison, and no WWW-Authenticate header is sent (wire-core §3.1). The
// principal is external_app "http_basic:<user>".
type HTTPBasic struct {
	accounts map[string]basicAccount
	dummy    [sha256.Size]byte
}

type basicAccount struct {
	digest [sha256.Size]byte
	roles  []string
}

var _ rpc.Strategy = (*HTTPBasic)(nil)

// NewHTTPBasic returns the strategy of the configured accounts.
func NewHTTPBasic(accounts map[string]config.BasicAccount) *HTTPBasic {
	s := &HTTPBasic{accounts: make(map[string]basicAccount, len(accounts)), dummy: sha256.Sum256([]byte("svc.security.basic.dummy"))}
	for user, a := range accounts {
		s.accounts[user] = basicAccount{digest: sha256.Sum256([]byte(a.Password)), roles: slices.Clone(a.Roles)}
	}
	return s
}

// Name implements rpc.Strategy.
func (s *HTTPBasic) Name() string { return rpc.StrategyHTTPBasic }

// Authenticate implements rpc.Strategy.
func (s *HTTPBasic) Authenticate(_ context.Context, req rpc.AuthRequest) (*rpc.Principal, error) {
	if req.Request == nil {
		return nil, ErrBasicCredentialsInvalid
	}
	scheme, cred, ok := strings.Cut(strings.TrimSpace(req.Request.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return nil, ErrBasicCredentialsInvalid
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return nil, ErrBasicCredentialsInvalid
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok || user == "" {
		return nil, ErrBasicCredentialsInvalid
	}
	got := sha256.Sum256([]byte(pass))
	a, known := s.accounts[user]
	want := s.dummy
	if known {
		want = a.digest
	}
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 || !known {
		return nil, ErrBasicCredentialsInvalid
	}
	roles := slices.Clone(a.roles)
	if roles == nil {
		roles = []string{}
	}
	return &rpc.Principal{Type: rpc.PrincipalExternalApp, ID: "http_basic:" + user, Name: user, Roles: roles}, nil
}
