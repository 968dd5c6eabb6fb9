package security_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
	"github.com/uptrace/bun"
)

// userReads counts the statements that read sys_security_user.
type userReads struct{ n atomic.Int64 }

func (c *userReads) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (c *userReads) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if strings.HasPrefix(e.Query, "SELECT") && strings.Contains(e.Query, "sys_security_user") {
		c.n.Add(1)
	}
}

// TestDirectoryCache: a server's directory answers repeated ResolveUsers from its cache (unknown
// ids included), and a user's change reaches it whoever makes it — this server's directory, the
// store (a new user), or another process (the CLI's uncached directory), through the change
// feed.
func TestDirectoryCache(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		ctx := context.Background()
		reads := &userReads{}
		srv := svctest.New(t, svctest.WithDB(kind), svctest.WithQueryHook(reads))
		sec := srv.Security()
		dir, store := sec.Directory(), sec.Store()
		ann, err := store.Create(ctx, "ann", "Ann", "correct horse battery", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dir.AddDepartment(ctx, "fin", "Finance", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := dir.AddDepartment(ctx, "ops", "Operations", ""); err != nil {
			t.Fatal(err)
		}
		if err := dir.SetUserDepartment(ctx, "ann", "fin"); err != nil {
			t.Fatal(err)
		}
		resolve := func(want string) {
			t.Helper()
			users, err := dir.ResolveUsers(ctx, []string{ann.ID, "nobody"})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := users["nobody"]; ok || users[ann.ID].DepartmentName != want || users[ann.ID].Name != "Ann" {
				t.Fatalf("ResolveUsers = %+v, want Ann in %q and no one else", users, want)
			}
		}
		// the feed also brings this server its own changes back (the poll, PostgreSQL's NOTIFY),
		// each one dropping the entry once more: once they have arrived, five resolves read
		// nothing (an uncached directory reads every time)
		deadline := time.Now().Add(10 * time.Second)
		for {
			before := reads.n.Load()
			for range 5 {
				resolve("Finance")
			}
			if reads.n.Load() == before {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the directory reads the database for users it has resolved")
			}
			time.Sleep(security.ChangePollInterval)
		}

		// this server's own change: at once
		if err := dir.SetUserDepartment(ctx, ann.ID, "ops"); err != nil {
			t.Fatal(err)
		}
		resolve("Operations")

		// another process (the CLI's directory has no cache): through the change feed
		cli := security.NewDirectory(srv.DB(), nil)
		if err := cli.SetUserDepartment(ctx, "ann", "fin"); err != nil {
			t.Fatal(err)
		}
		deadline = time.Now().Add(10 * time.Second)
		for {
			users, err := dir.ResolveUsers(ctx, []string{ann.ID})
			if err != nil {
				t.Fatal(err)
			}
			if users[ann.ID].DepartmentName == "Finance" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the other process's change never reached the cache: %+v", users[ann.ID])
			}
			time.Sleep(security.ChangePollInterval / 5)
		}

		// a user created after an unknown id was cached
		if _, err := dir.ResolveUsers(ctx, []string{"later"}); err != nil {
			t.Fatal(err)
		}
		bob, err := store.Create(ctx, "bob", "", "correct horse battery", nil)
		if err != nil {
			t.Fatal(err)
		}
		users, err := dir.ResolveUsers(ctx, []string{bob.ID})
		if err != nil {
			t.Fatal(err)
		}
		if users[bob.ID].Name != "bob" {
			t.Errorf("a new user resolves as %+v, want bob", users[bob.ID])
		}
	})
}
