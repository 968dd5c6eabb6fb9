package security_test

import (
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// racingLogins is how many logins of one user the race tests start at once.
const racingLogins = 12

// TestSessionLimitUnderRacingLogins: on one node, logins of one user racing each other keep
// max_concurrent exactly, with evict_oldest (every login succeeds, the oldest are evicted) and
// with reject (exactly max_concurrent succeed, the rest are 403/1024), on every backend.
func TestSessionLimitUnderRacingLogins(t *testing.T) {
	const limit = 3
	eachBackend(t, func(t *testing.T, b backend) {
		t.Parallel()
		for _, mode := range []config.OnExceed{config.OnExceedEvictOldest, config.OnExceedReject} {
			t.Run(string(mode), func(t *testing.T) {
				rec := &revocations{}
				e := newEnv(t, append(b.options(t), withSec(func(o *security.Options) { o.OnRevoke = rec.hook }),
					opaque(func(s *config.Session) { s.MaxConcurrent, s.OnExceed = limit, mode }))...)
				user := e.freshUser(t)
				ok, rejected := tally(t, concurrentLogins(t, []*svctest.Server{e.srv}, user, racingLogins))
				if got := e.live(t, user); got != limit {
					t.Errorf("live sessions = %d, want exactly %d", got, limit)
				}
				switch mode {
				case config.OnExceedEvictOldest:
					if ok != racingLogins || rec.count() != racingLogins-limit {
						t.Errorf("evict: %d logins succeeded, %d evicted; want %d and %d", ok, rec.count(), racingLogins, racingLogins-limit)
					}
				case config.OnExceedReject:
					if ok != limit || rejected != racingLogins-limit {
						t.Errorf("reject: %d succeeded, %d rejected; want %d and %d", ok, rejected, limit, racingLogins-limit)
					}
				}
			})
		}
	})
}

// tally counts successful logins and 403/1024 refusals; anything else fails the test.
func tally(t *testing.T, results []result) (ok, rejected int) {
	t.Helper()
	for _, r := range results {
		switch {
		case r.status == 200 && r.code == 0 && opaqueToken.MatchString(r.token):
			ok++
		case r.status == 403 && r.code == rpc.CodeTooManyConcurrentSessions:
			rejected++
		default:
			t.Errorf("login answered %d/%d", r.status, r.code)
		}
	}
	return ok, rejected
}
