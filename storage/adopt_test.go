package storage

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// uploaded completes a one-part upload and returns its key.
func (e *env) uploaded(p *rpc.Principal, name string) string {
	e.t.Helper()
	u := e.start(p, name, 10)
	u.sendAll()
	if _, err := u.complete(); err != nil {
		e.t.Fatalf("complete_upload: %v", err)
	}
	return u.init.Key
}

// tx runs fn in a transaction and returns its error (the transaction is rolled back on error).
func (e *env) tx(fn func(tx bun.IDB) error) error {
	return e.db.InTx(e.ctx, func(_ context.Context, tx bun.Tx) error { return fn(tx) })
}

// TestAdoption covers the adoption API: adopt, replace and delete inside a host transaction.
func TestAdoption(t *testing.T) {
	eachEnv(t, nil, func(t *testing.T, e *env) {
		owner := user("u1")
		t.Run("adopt uploaded claims", func(t *testing.T) {
			a, b := e.uploaded(owner, "a.pdf"), e.uploaded(owner, "b.pdf")
			wantErr(t, "Adopt", e.tx(func(tx bun.IDB) error { return e.svc.Adopt(e.ctx, tx, owner, a, b, a) }), nil)
			for _, k := range []string{a, b} {
				f, _, _ := e.svc.files.lookup(e.ctx, e.db, k)
				if f.Status != FileStatusClaimed || f.ClaimedAt.IsZero() {
					t.Errorf("registry of %s = %+v, want claimed", k, f)
				}
			}
			err := e.tx(func(tx bun.IDB) error { return e.svc.Adopt(e.ctx, tx, owner, a) })
			wantErr(t, "adopting twice", err, ErrClaimNotFound)
		})
		t.Run("a failed adoption rolls back with the host transaction", func(t *testing.T) {
			good := e.uploaded(owner, "a.pdf")
			pending := e.start(owner, "p.pdf", 10).init.Key
			foreign := e.uploaded(user("u2"), "f.pdf")
			for _, bad := range []string{pending, foreign, "priv/unknown.pdf"} {
				err := e.tx(func(tx bun.IDB) error { return e.svc.Adopt(e.ctx, tx, owner, good, bad) })
				wantErr(t, "Adopt with "+bad, err, ErrClaimNotFound)
			}
			// wire-core §7.8: a nil or anonymous principal gets the plain storage.ErrAccessDenied,
			// which carries no code (not rpc.ErrAccessDenied, 403/1100).
			for _, tt := range []struct {
				name string
				p    *rpc.Principal
			}{{"anonymous", rpc.Anonymous()}, {"nil", nil}} {
				err := e.tx(func(tx bun.IDB) error { return e.svc.Adopt(e.ctx, tx, tt.p, good) })
				wantErr(t, tt.name+" Adopt", err, ErrAccessDenied)
				if _, coded := rpc.AsError(err); coded || errors.Is(err, rpc.ErrAccessDenied) {
					t.Errorf("%s Adopt error %v carries a code, want a plain error", tt.name, err)
				}
				err = e.tx(func(tx bun.IDB) error { return e.svc.Replace(e.ctx, tx, tt.p, nil, []string{good}) })
				wantErr(t, tt.name+" Replace", err, ErrAccessDenied)
			}
			wantErr(t, "Adopt after the failures", e.tx(func(tx bun.IDB) error { return e.svc.Adopt(e.ctx, tx, owner, good) }), nil)
		})
		t.Run("replace adopts the new keys and queues the old", func(t *testing.T) {
			old1, keep, new1 := e.uploaded(owner, "o.pdf"), e.uploaded(owner, "k.pdf"), e.uploaded(owner, "n.pdf")
			wantErr(t, "Adopt", e.tx(func(tx bun.IDB) error { return e.svc.Adopt(e.ctx, tx, owner, old1, keep) }), nil)
			before := len(e.queued())
			err := e.tx(func(tx bun.IDB) error {
				return e.svc.Replace(e.ctx, tx, owner, []string{old1, keep}, []string{keep, new1})
			})
			wantErr(t, "Replace", err, nil)
			q := e.queued()
			if len(q) != before+1 || q[len(q)-1] != old1+":"+ReasonReplaced {
				t.Errorf("queue = %v, want %s queued as replaced", q, old1)
			}
			if f, _, _ := e.svc.files.lookup(e.ctx, e.db, new1); f.Status != FileStatusClaimed {
				t.Errorf("new key status = %s, want claimed", f.Status)
			}
		})
		t.Run("delete queues the keys; a rollback queues nothing", func(t *testing.T) {
			k := e.uploaded(owner, "d.pdf")
			before := e.queued()
			rollback := errors.New("host rolled back")
			err := e.tx(func(tx bun.IDB) error {
				if err := e.svc.Delete(e.ctx, tx, k); err != nil {
					return err
				}
				return rollback
			})
			wantErr(t, "rolled-back Delete", err, rollback)
			if got := e.queued(); !equal(got, before) {
				t.Errorf("queue after a rollback = %v, want %v", got, before)
			}
			wantErr(t, "Delete", e.tx(func(tx bun.IDB) error { return e.svc.Delete(e.ctx, tx, k, k) }), nil)
			wantErr(t, "Delete again", e.tx(func(tx bun.IDB) error { return e.svc.Delete(e.ctx, tx, k) }), nil)
			wantErr(t, "delete worker", e.svc.ProcessDeletes(e.ctx), nil)
			f, _, _ := e.svc.files.lookup(e.ctx, e.db, k)
			if f.Status != FileStatusDeleted || f.DeleteReason != ReasonDeleted || f.DeletedAt.IsZero() {
				t.Errorf("registry after deletion = %+v, want deleted with reason deleted", f)
			}
			if _, err := e.be.Stat(e.ctx, k); !isNotFound(err) {
				t.Errorf("object after deletion: Stat error = %v, want not found", err)
			}
		})
		t.Run("events", func(t *testing.T) {
			names := map[string]bool{}
			for _, n := range e.events.names() {
				names[n] = true
			}
			for _, want := range []string{EventFileUploaded, EventFileClaimed, EventFileDeleted} {
				if !names[want] {
					t.Errorf("no %s event among %v", want, e.events.names())
				}
			}
		})
	})
}

// TestResolve covers sys/storage/file resolve: request order, duplicates, omission of unknown and
// unreadable keys, the DateTime form and ACL failures (2202).
func TestResolve(t *testing.T) {
	eachEnv(t, func(c *config.Storage) { c.AllowPublicUploads = true }, func(t *testing.T, e *env) {
		owner := user("u1")
		mine, theirs := e.uploaded(owner, "mine.pdf"), e.uploaded(user("u2"), "theirs.pdf")
		pu := e.startWith(user("u2"), InitUploadParams{Filename: "pub.png", Size: 10, Public: true})
		pu.sendAll()
		if _, err := pu.complete(); err != nil {
			t.Fatal(err)
		}
		res, err := e.svc.Resolve(e.ctx, owner, []string{theirs, "priv/none.pdf", pu.init.Key, mine, mine})
		wantErr(t, "resolve", err, nil)
		var got []string
		for _, f := range res.Files {
			got = append(got, f.Key)
		}
		if diff := cmp.Diff([]string{pu.init.Key, mine}, got); diff != "" {
			t.Errorf("resolved keys (-want +got):\n%s", diff)
		}
		body, _ := json.Marshal(res.Files[1])
		if !regexp.MustCompile(`^\{"key":"priv/[^"]+","originalFilename":"mine.pdf","contentType":"application/pdf","size":10,"status":"uploaded","uploadedAt":"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d","uploadedBy":"u1"\}$`).Match(body) {
			t.Errorf("resolved file = %s", body)
		}
		if res, err := e.svc.Resolve(e.ctx, owner, []string{"priv/none"}); err != nil || res.Files == nil || len(res.Files) != 0 {
			t.Errorf("resolve of unknown keys = %+v, %v; want an empty list", res, err)
		}
		failing := e.with(shaped{})
		failing.svc.acl = aclFunc(func(context.Context, *rpc.Principal, File) (bool, error) { return false, errors.New("acl down") })
		_, err = failing.svc.Resolve(e.ctx, owner, []string{mine})
		wantErr(t, "resolve with a failing ACL", err, ErrFailedToGetFile)
		if _, err := failing.svc.Resolve(e.ctx, owner, []string{pu.init.Key}); err != nil {
			t.Errorf("resolve of a pub/ key with a failing ACL = %v, want pub/ to bypass the ACL", err)
		}
	})
}

type aclFunc func(context.Context, *rpc.Principal, File) (bool, error)

func (f aclFunc) CanRead(ctx context.Context, p *rpc.Principal, file File) (bool, error) {
	return f(ctx, p, file)
}

// TestDefaultACL covers the default file ACL.
func TestDefaultACL(t *testing.T) {
	t.Parallel()
	checker := permFunc(func(_ context.Context, p *rpc.Principal, token string) error {
		if p.ID == "auditor" && token == ReadPermission {
			return nil
		}
		return rpc.ErrAccessDenied
	})
	acl := DefaultACL{Checker: checker}
	f := File{Key: "priv/x.pdf", UploadedBy: "u1"}
	rows := []struct {
		name string
		p    *rpc.Principal
		f    File
		want bool
	}{
		{"uploader", user("u1"), f, true},
		{"stranger", user("u2"), f, false},
		{"permission holder", user("auditor"), f, true},
		{"system", rpc.System(), f, true},
		{"no principal", nil, f, false},
		{"anonymous", rpc.Anonymous(), f, false},
		{"pub/ key", nil, File{Key: "pub/x.png"}, true},
		{"unregistered key, stranger", user("u2"), File{Key: "priv/y"}, false},
	}
	for _, tt := range rows {
		if got, err := acl.CanRead(context.Background(), tt.p, tt.f); err != nil || got != tt.want {
			t.Errorf("%s: CanRead = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	if ok, _ := (DefaultACL{}).CanRead(context.Background(), user("auditor"), f); ok {
		t.Errorf("without a checker a permission holder may read: want only uploaders")
	}
}

type permFunc func(context.Context, *rpc.Principal, string) error

func (f permFunc) CheckPermission(ctx context.Context, p *rpc.Principal, token string) error {
	return f(ctx, p, token)
}
