package security_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// TestLoginInvalidIdentifier (issue #11 item 5): a login principal with NUL, another control
// character or invalid UTF-8, or longer than 255 characters, answers 400/1400 on every database
// (PostgreSQL refused the NUL with 500/1900), and so does a NUL in any other param.
func TestLoginInvalidIdentifier(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEnv(t, onDB(kind))
		login := func(principal string) map[string]any {
			return map[string]any{"type": "password", "principal": principal, "credentials": "x"}
		}
		tests := []struct {
			name   string
			action string
			params any
		}{
			{"principal with NUL", "login", login("alice\x00")},
			{"principal only NUL", "login", login("\x00")},
			{"principal with a tab", "login", login("al\tice")},
			{"principal with DEL", "login", login("alice\x7f")},
			{"principal with invalid UTF-8", "login", json.RawMessage("{\"type\":\"password\",\"principal\":\"al\xc3\x28ice\",\"credentials\":\"x\"}")},
			{"principal too long", "login", login(strings.Repeat("a", 256))},
			{"login type with NUL", "login", map[string]any{"type": "pass\x00word", "principal": "alice", "credentials": "x"}},
			{"NUL in the credentials", "login", map[string]any{"type": "password", "principal": "alice", "credentials": "pw\x00"}},
			{"NUL in a refresh token", "refresh", map[string]any{"refreshToken": "eyJ\x00"}},
			{"NUL in a challenge response", "resolve_challenge", map[string]any{"challengeToken": "t", "type": "totp", "response": "12\x0034"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				want(t, e.call(t, tt.action, tt.params), 400, rpc.CodeBadRequest)
			})
		}
		// a clean unknown principal is an ordinary failed login
		want(t, e.call(t, "login", login("nobody")), 401, rpc.CodeCredentialsInvalid)
	})
}
