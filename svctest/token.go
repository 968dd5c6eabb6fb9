package svctest

import (
	"testing"

	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
)

// Token mints an access token for p that the server accepts (signed with the server's secret,
// issued at the server's current time).
func (s *Server) Token(t testing.TB, p *rpc.Principal) string {
	t.Helper()
	tok, err := security.MintAccessToken(s.cfg, p, s.now())
	if err != nil {
		t.Fatalf("svctest: mint token: %v", err)
	}
	return tok
}

// User returns a user principal with the given id and roles, for As.
func User(id string, roles ...string) *rpc.Principal {
	if roles == nil {
		roles = []string{}
	}
	return &rpc.Principal{Type: rpc.PrincipalUser, ID: id, Name: id, Roles: roles}
}
