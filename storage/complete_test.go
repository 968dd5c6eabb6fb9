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

// midCompletion is a backend whose CompleteMultipart runs before, then asks the backend to
// assemble, then runs after: what another node does while a completion is in flight.
type midCompletion struct {
	backend.Backend
	before, after func()
}

func (b *midCompletion) CompleteMultipart(ctx context.Context, key, uploadID string, parts []backend.Part) (backend.Object, error) {
	if b.before != nil {
		b.before()
	}
	obj, err := b.Backend.CompleteMultipart(ctx, key, uploadID, parts)
	if b.after != nil {
		b.after()
	}
	return obj, err
}

// TestCompletionRacingTheSweep: a completion that started just before its claim expired and is
// still assembling when another node sweeps it — that node's clock 2 s ahead, as node2's in
// bench/faults (MariaDB seed 4547, where a completed upload then downloaded as 2201). Whatever
// the order, the client is answered the upload only when its object stays: a claim released
// before the object existed answers 2204 and leaves neither object nor record; a sweep that
// finds the assembled object recovers it, and the completion answers it.
func TestCompletionRacingTheSweep(t *testing.T) {
	const skew = 2 * time.Second
	mutate := func(c *config.Storage) { c.ClaimTTL, c.SweepInterval = 20*time.Second, 5*time.Second }
	eachEnv(t, mutate, func(t *testing.T, e *env) {
		owner := user("u1")
		// node2: the same database and store, its clock ahead; it sweeps and deletes.
		node2 := newService(serviceDeps{cfg: e.svc.cfg, db: e.db, backend: e.be,
			clock: func() time.Time { return e.clock.Now().Add(skew) }, opts: Options{Events: e.events}, errs: e.svc.errs})
		sweep := func() {
			// The completion has been running 4.5 s: node2 sees the claim expired for 5.5 s.
			e.clock.Advance(4500 * time.Millisecond)
			if err := node2.Sweep(e.ctx); err != nil {
				t.Errorf("node2 sweep: %v", err)
			}
		}
		tests := []struct {
			name        string
			hooks       midCompletion
			wantErr     error
			wantUploads bool
		}{
			{"swept before the object exists", midCompletion{before: sweep}, ErrClaimExpired, false},
			{"swept after the object exists", midCompletion{after: sweep}, nil, true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				u := e.start(owner, "race.pdf", e.be.Info().PartSize+7)
				u.sendAll()
				e.clock.Advance(e.svc.cfg.ClaimTTL - time.Second) // the completing node: 1 s left
				hooks := tt.hooks
				hooks.Backend = e.be
				node0 := newService(serviceDeps{cfg: e.svc.cfg, db: e.db, backend: &hooks, clock: e.clock.Now,
					opts: Options{Events: e.events}, errs: e.svc.errs})
				res, err := node0.completeUpload(e.ctx, owner, u.init.ClaimID)
				if tt.wantErr == nil && err != nil {
					t.Fatalf("complete_upload: %v, want the upload", err)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("complete_upload = %+v, %v; want error %v", res, err, tt.wantErr)
				}
				if err := node2.ProcessDeletes(e.ctx); err != nil {
					t.Fatalf("node2 delete worker: %v", err)
				}
				obj, serr := e.be.Stat(e.ctx, u.init.Key)
				f, known, lerr := e.svc.files.lookup(e.ctx, e.db, u.init.Key)
				if lerr != nil {
					t.Fatal(lerr)
				}
				if !tt.wantUploads {
					if !errors.Is(serr, backend.ErrNotFound) || known {
						t.Errorf("after the delete worker: object %+v (%v), record %+v (%v); want neither", obj, serr, f, known)
					}
					return
				}
				if err == nil && (serr != nil || !bytes.Equal(e.objectBytes(u.init.Key), u.data)) {
					t.Errorf("complete_upload answered the upload, but after the delete worker its object is %v", serr)
				}
				if c := e.claim(u.init.ClaimID); c == nil || c.Status != StatusUploaded || !known || f.Status != FileStatusUploaded {
					t.Errorf("claim %+v, record %+v (%v); want both uploaded", c, f, known)
				}
			})
		}
	})
}
