package storage

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
	"github.com/svc-framework/svc/storage/memory"
)

// TestCompleteUpload covers spec §3 rows "pending → complete_upload → uploaded", "pending →
// complete_upload with a size mismatch → unchanged" and "uploaded → complete_upload → uploaded",
// and the complete_upload failures of wire-core §7.2.
func TestCompleteUpload(t *testing.T) {
	eachEnv(t, nil, func(t *testing.T, e *env) {
		ps := e.be.Info().PartSize
		size := 2*ps + 100
		owner := user("u1")
		t.Run("complete assembles, registers and clears the parts", func(t *testing.T) {
			u := e.start(owner, "report.pdf", size)
			u.sendAll()
			res, err := u.complete()
			wantErr(t, "complete_upload", err, nil)
			info := e.be.Info()
			if res.Bucket != info.Bucket || res.Key != u.init.Key || res.ETag == "" || res.Size != size ||
				res.ContentType != "application/pdf" || res.LastModified.IsZero() || res.OriginalFilename != "report.pdf" {
				t.Errorf("complete_upload = %+v", res)
			}
			if !bytes.Equal(e.objectBytes(u.init.Key), u.data) {
				t.Errorf("assembled object differs from the data sent")
			}
			if c := e.claim(u.init.ClaimID); c == nil || c.Status != StatusUploaded {
				t.Errorf("claim = %+v, want uploaded", c)
			}
			if parts, _ := e.svc.parts.list(e.ctx, e.db, u.init.ClaimID); len(parts) != 0 {
				t.Errorf("recorded parts after completion = %v, want none", parts)
			}
			f, ok, err := e.svc.files.lookup(e.ctx, e.db, u.init.Key)
			if err != nil || !ok || f.Status != FileStatusUploaded || f.UploadedBy != "u1" || f.Size != size || f.ID != u.init.ClaimID {
				t.Errorf("registry = %+v, %v, %v; want an uploaded record", f, ok, err)
			}
			t.Run("repeating it is idempotent", func(t *testing.T) {
				again, err := u.complete()
				wantErr(t, "second complete_upload", err, nil)
				if again.Key != res.Key || again.ETag != res.ETag || again.Size != res.Size {
					t.Errorf("second complete_upload = %+v, want %+v", again, res)
				}
				n := 0
				for _, name := range e.events.names() {
					if name == EventFileUploaded {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%d uploaded events after two completions, want 1", n)
				}
			})
		})
		t.Run("a size mismatch changes nothing", func(t *testing.T) {
			u := e.start(owner, "a.pdf", size)
			for n := 1; n <= 2; n++ {
				if _, err := u.send(n, u.part(n)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := u.send(3, u.part(3)[:60]); err != nil { // the last part may be smaller
				t.Fatal(err)
			}
			_, err := u.complete()
			wantErr(t, "complete with 40 bytes missing", err, ErrUploadSizeMismatch)
			if c := e.claim(u.init.ClaimID); c == nil || c.Status != StatusPending {
				t.Errorf("claim after a mismatch = %+v, want pending", c)
			}
			if got := u.listed(); len(got) != 3 {
				t.Errorf("parts after a mismatch = %v, want all 3", got)
			}
			if _, err := e.be.Stat(e.ctx, u.init.Key); !errors.Is(err, backend.ErrNotFound) {
				t.Errorf("object after a mismatch: Stat error = %v, want ErrNotFound", err)
			}
			if _, err := u.send(3, u.part(3)); err != nil {
				t.Fatal(err)
			}
			_, err = u.complete()
			wantErr(t, "complete after fixing the last part", err, nil)
		})
		t.Run("missing parts", func(t *testing.T) {
			u := e.start(owner, "a.pdf", size)
			if _, err := u.send(1, u.part(1)); err != nil {
				t.Fatal(err)
			}
			if _, err := u.send(3, u.part(3)); err != nil {
				t.Fatal(err)
			}
			_, err := u.complete()
			wantErr(t, "complete without part 2", err, ErrUploadPartsIncomplete)
		})
		t.Run("a part changed behind the records", func(t *testing.T) {
			u := e.start(owner, "a.pdf", size)
			u.sendAll()
			c := e.claim(u.init.ClaimID)
			if _, err := e.be.PutPart(e.ctx, c.Key, c.UploadID, 2, bytes.NewReader(make([]byte, ps)), ps); err != nil {
				t.Fatal(err)
			}
			_, err := u.complete()
			wantErr(t, "complete with a stale part record", err, ErrUploadPartsIncomplete)
		})
		t.Run("session gone and no object", func(t *testing.T) {
			u := e.start(owner, "a.pdf", size)
			u.sendAll()
			c := e.claim(u.init.ClaimID)
			if err := e.be.AbortMultipart(e.ctx, c.Key, c.UploadID); err != nil {
				t.Fatal(err)
			}
			_, err := u.complete()
			wantErr(t, "complete after the session vanished", err, ErrUploadObjectNotFound)
		})
		t.Run("session assembled by a call that did not record it", func(t *testing.T) {
			u := e.start(owner, "a.pdf", size)
			u.sendAll()
			c := e.claim(u.init.ClaimID)
			parts, _ := e.svc.parts.list(e.ctx, e.db, c.ID)
			if _, err := e.be.CompleteMultipart(e.ctx, c.Key, c.UploadID, parts); err != nil {
				t.Fatal(err)
			}
			res, err := u.complete()
			wantErr(t, "complete after a crash", err, nil)
			if res.Size != size || !bytes.Equal(e.objectBytes(u.init.Key), u.data) {
				t.Errorf("complete after a crash = %+v", res)
			}
		})
		t.Run("claim checks in order", func(t *testing.T) {
			u := e.start(owner, "a.pdf", size)
			u.sendAll()
			_, err := e.svc.completeUpload(e.ctx, user("intruder"), u.init.ClaimID)
			wantErr(t, "another principal", err, rpc.ErrAccessDenied)
			_, err = e.svc.completeUpload(e.ctx, owner, newID())
			wantErr(t, "unknown claim", err, rpc.ErrAccessDenied)
			limit := e.svc.cfg.MaxUploadSize
			e.svc.cfg.MaxUploadSize = 10
			_, err = u.complete()
			e.svc.cfg.MaxUploadSize = limit
			wantErr(t, "over the current size limit", err, ErrUploadSizeExceedsLimit)
			_, err = e.with(shaped{noMultipart: true}).svc.completeUpload(e.ctx, owner, u.init.ClaimID)
			wantErr(t, "backend without multipart", err, ErrMultipartNotSupported)
			noSession := e.start(owner, "b.pdf", 5)
			if _, err := e.svc.claims.setUploadID(e.ctx, e.db, noSession.init.ClaimID, ""); err != nil {
				t.Fatal(err)
			}
			_, err = noSession.complete()
			wantErr(t, "claim without a session", err, ErrClaimNotMultipart)
			e.clock.Advance(25 * time.Hour)
			_, err = u.complete()
			wantErr(t, "expired claim", err, ErrClaimExpired)
		})
	})
}

// TestAbortUpload covers the abort rows of spec §3.
func TestAbortUpload(t *testing.T) {
	eachEnv(t, nil, func(t *testing.T, e *env) {
		owner := user("u1")
		size := e.be.Info().PartSize + 10
		t.Run("pending, same owner: released and queued", func(t *testing.T) {
			u := e.start(owner, "a.pdf", size)
			if _, err := u.send(1, u.part(1)); err != nil {
				t.Fatal(err)
			}
			c := e.claim(u.init.ClaimID)
			wantErr(t, "abort_upload", e.svc.abortUpload(e.ctx, owner, u.init.ClaimID), nil)
			if e.claim(u.init.ClaimID) != nil {
				t.Errorf("claim still exists after abort")
			}
			if got := e.queued(); !equal(got, []string{u.init.Key + ":" + ReasonAborted}) {
				t.Errorf("queue = %v, want the key with reason aborted", got)
			}
			wantErr(t, "repeated abort_upload", e.svc.abortUpload(e.ctx, owner, u.init.ClaimID), nil)
			_, err := u.send(2, u.part(2))
			wantErr(t, "upload_part after abort", err, rpc.ErrAccessDenied)
			wantErr(t, "delete worker", e.svc.ProcessDeletes(e.ctx), nil)
			if _, err := e.be.PutPart(e.ctx, c.Key, c.UploadID, 1, bytes.NewReader([]byte("x")), 1); !errors.Is(err, backend.ErrSessionNotFound) {
				t.Errorf("backend session after the delete worker ran: PutPart error = %v, want ErrSessionNotFound", err)
			}
			if got := e.queued(); len(got) != 0 {
				t.Errorf("queue after the delete worker = %v, want empty", got)
			}
		})
		t.Run("missing claim succeeds", func(t *testing.T) {
			wantErr(t, "abort_upload", e.svc.abortUpload(e.ctx, owner, newID()), nil)
		})
		t.Run("another owner is rejected", func(t *testing.T) {
			u := e.start(owner, "a.pdf", 5)
			wantErr(t, "abort_upload", e.svc.abortUpload(e.ctx, user("intruder"), u.init.ClaimID), rpc.ErrAccessDenied)
			if c := e.claim(u.init.ClaimID); c == nil || c.Status != StatusPending {
				t.Errorf("claim = %+v, want it pending", c)
			}
		})
		t.Run("uploaded claim is left alone", func(t *testing.T) {
			u := e.start(owner, "a.pdf", 5)
			u.sendAll()
			if _, err := u.complete(); err != nil {
				t.Fatal(err)
			}
			before := e.queued()
			wantErr(t, "abort_upload", e.svc.abortUpload(e.ctx, owner, u.init.ClaimID), nil)
			if c := e.claim(u.init.ClaimID); c == nil || c.Status != StatusUploaded {
				t.Errorf("claim = %+v, want uploaded", c)
			}
			if got := e.queued(); !equal(got, before) {
				t.Errorf("queue = %v, want %v", got, before)
			}
		})
		t.Run("a failing backend never fails abort (no 2219)", func(t *testing.T) {
			broken := e.with(shaped{failCleanup: backend.ErrAccessDenied})
			u := broken.start(owner, "a.pdf", 5)
			wantErr(t, "abort_upload", broken.svc.abortUpload(e.ctx, owner, u.init.ClaimID), nil)
			if err := broken.svc.ProcessDeletes(e.ctx); err != nil {
				t.Errorf("delete worker = %v, want failures kept in the queue", err)
			}
			rows, _ := e.svc.queue.pending(e.ctx, e.db)
			if len(rows) != 1 || rows[0].Attempts != 1 || rows[0].LastError != deleteErrAccessDenied {
				t.Errorf("queue = %+v, want one row with 1 attempt and access_denied", rows)
			}
		})
	})
}

// sizeLiar is a backend whose completions make an object of the wrong size; it records the
// context its Delete got.
type sizeLiar struct {
	backend.Backend
	deleteCtx context.Context
	deleteErr error // deleteCtx.Err() when Delete was called
}

func (b *sizeLiar) CompleteMultipart(_ context.Context, key, _ string, _ []backend.Part) (backend.Object, error) {
	return backend.Object{Key: key, Size: 1}, nil
}

func (b *sizeLiar) Delete(ctx context.Context, _ string) error {
	b.deleteCtx, b.deleteErr = ctx, ctx.Err()
	return nil
}

// TestMismatchCleanupIsBounded: the object of a mismatched completion is deleted even when the
// request was cancelled, under a deadline of cleanupTimeout (not unbounded).
func TestMismatchCleanupIsBounded(t *testing.T) {
	liar := &sizeLiar{Backend: memory.New(nil)}
	s := newService(serviceDeps{cfg: config.Default().Storage, db: migrated(t, config.SQLite), backend: liar})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := time.Now()
	_, err := s.assemble(ctx, &Claim{ID: "c1", Key: "priv/x", Size: 2}, nil)
	if !errors.Is(err, ErrUploadSizeMismatch) {
		t.Fatalf("assemble = %v, want ErrUploadSizeMismatch", err)
	}
	if liar.deleteCtx == nil {
		t.Fatal("the mismatched object was not deleted")
	}
	if liar.deleteErr != nil {
		t.Errorf("the clean-up ran on a done context: %v", liar.deleteErr)
	}
	deadline, ok := liar.deleteCtx.Deadline()
	if !ok {
		t.Fatal("the clean-up ran without a deadline")
	}
	if d := deadline.Sub(before); d <= 0 || d > cleanupTimeout+time.Second {
		t.Errorf("clean-up deadline in %s, want within %s", d, cleanupTimeout)
	}
}
