package token_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/security/token"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestRevocationFailMode (issue #45 item 7): with the change log unreadable (renamed away, as a
// database that stopped answering), a token verified after max_feed_age is refused with 503 in
// closed mode and accepted in open mode; once the log reads again, the token is accepted at the
// next request (no wait for the poll worker) and refused after its logout.
func TestRevocationFailMode(t *testing.T) {
	for _, mode := range []config.RevocationFailMode{config.RevocationFailClosed, config.RevocationFailOpen} {
		t.Run(string(mode), func(t *testing.T) {
			testservice.EachDB(t, func(t *testing.T, d *db.DB) {
				ctx := context.Background()
				if err := db.Migrate(ctx, d, *security.Migrations()); err != nil {
					t.Fatal(err)
				}
				clk := &clock{t: time.Now().UTC().Truncate(time.Second)}
				cfg := &config.Config{}
				cfg.App.Name = "app"
				cfg.Security.TokenExpires = time.Hour
				cfg.Security.Revocation = config.Revocation{FailMode: mode, MaxFeedAge: 10 * time.Second}
				logger := slog.New(slog.DiscardHandler)
				keys := &token.Keys{}
				keys.Store(bytes.Repeat([]byte{9}, 32))
				feed := token.NewFeed(d, nil, "app", clk.now, logger)
				jt := token.NewJWT(token.JWTOptions{Config: cfg, DB: d, Keys: keys, Now: clk.now, Logger: logger,
					State: token.NewState(nil, false, cfg.Security.Revocation, clk.now, logger), Feed: feed})
				if err := feed.Start(ctx); err != nil {
					t.Fatal(err)
				}
				if err := jt.Start(ctx); err != nil {
					t.Fatal(err)
				}
				pair, err := jt.Issue(ctx, &rpc.Principal{ID: "u1", Name: "ann"})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := jt.Verify(ctx, pair.AccessToken); err != nil {
					t.Fatalf("Verify with a fresh feed = %v", err)
				}
				// the outage: the change log cannot be read, and the feed ages past max_feed_age
				if _, err := d.ExecContext(ctx, "ALTER TABLE sys_security_change RENAME TO sys_security_change_away"); err != nil {
					t.Fatal(err)
				}
				clk.add(11 * time.Second)
				_, err = jt.Verify(ctx, pair.AccessToken)
				if mode == config.RevocationFailClosed {
					if !errors.Is(err, token.ErrRevocationUnavailable) {
						t.Errorf("closed, feed unreadable: Verify = %v, want ErrRevocationUnavailable", err)
					}
					var re *rpc.Error
					if !errors.As(err, &re) || re.Status != 503 {
						t.Errorf("closed: error %v is not a 503", err)
					}
				} else if err != nil {
					t.Errorf("open, feed unreadable: Verify = %v, want the token accepted", err)
				}
				// the database answers again: closed mode reads the log on the next request
				if _, err := d.ExecContext(ctx, "ALTER TABLE sys_security_change_away RENAME TO sys_security_change"); err != nil {
					t.Fatal(err)
				}
				clk.add(2 * time.Second) // past the back-off after the failed read
				if _, err := jt.Verify(ctx, pair.AccessToken); err != nil {
					t.Errorf("after the outage: Verify = %v, want the token accepted", err)
				}
				if err := jt.Revoke(ctx, pair.AccessToken); err != nil {
					t.Fatal(err)
				}
				if _, err := jt.Verify(ctx, pair.AccessToken); !errors.Is(err, token.ErrTokenInvalid) {
					t.Errorf("after logout: Verify = %v, want ErrTokenInvalid", err)
				}
			})
		})
	}
}
