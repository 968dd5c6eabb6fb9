package storage

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
	"github.com/svc-framework/svc/storage/backend/backendtest"
	"github.com/svc-framework/svc/storage/filesystem"
	"github.com/svc-framework/svc/storage/memory"
	"github.com/svc-framework/svc/storage/objstore"
	"github.com/uptrace/bun"
)

// fakeClock stands still until advanced.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 7, 10, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// recorder is a Publisher that keeps the events of committed transactions in order.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) Publish(_ context.Context, _ bun.IDB, e Event) error {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	return nil
}

func (r *recorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.events))
	for i, e := range r.events {
		out[i] = e.Name
	}
	return out
}

// backendKinds are the providers the service tests run against.
var backendKinds = []config.StorageProvider{config.StorageMemory, config.StorageFilesystem, config.StorageObjStore}

// newBackend returns a started backend of kind, cleaned up when the test ends. The objstore
// backend uses the S3 minimum part size to keep test data small.
func newBackend(t *testing.T, kind config.StorageProvider, clock func() time.Time) backend.Backend {
	t.Helper()
	switch kind {
	case config.StorageMemory:
		return memory.New(clock)
	case config.StorageFilesystem:
		f, err := filesystem.Open(context.Background(), t.TempDir(), filesystem.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		return f
	case config.StorageObjStore:
		s3 := testservice.S3Server(t)
		s, err := objstore.New(objstore.Config{Endpoint: s3.Endpoint, AccessKey: s3.AccessKey, SecretKey: s3.SecretKey,
			Bucket: s3.Bucket, Region: s3.Region, PartSize: objstore.MinPartSize})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { testservice.RemoveBucket(t, s3) })
		return s
	}
	t.Fatalf("unknown backend %q", kind)
	return nil
}

// env is one service under test with everything it is built from.
type env struct {
	t      *testing.T
	svc    *Service
	db     *db.DB
	be     backend.Backend
	clock  *fakeClock
	events *recorder
	ctx    context.Context
}

// newEnv builds a migrated service on d with backend be and the default configuration changed by
// mutate.
func newEnv(t *testing.T, d *db.DB, be backend.Backend, clock *fakeClock, mutate func(*config.Storage), opts Options) *env {
	t.Helper()
	cfg := config.Default().Storage
	if mutate != nil {
		mutate(&cfg)
	}
	rec := &recorder{}
	if opts.Events == nil {
		opts.Events = rec
	}
	s := newService(serviceDeps{cfg: cfg, db: d, backend: be, clock: clock.Now, opts: opts,
		errs: envelopeWriter{msgs: i18n.MustNew(i18n.English, Messages())}})
	return &env{t: t, svc: s, db: d, be: be, clock: clock, events: rec, ctx: context.Background()}
}

// migrated opens a fresh database of kind with the storage tables.
func migrated(t *testing.T, kind config.DBKind) *db.DB {
	t.Helper()
	d := testservice.OpenDB(t, testservice.DataSource(t, kind))
	if err := db.Migrate(context.Background(), d, *Migrations()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return d
}

// eachEnv runs fn for every database kind and backend.
func eachEnv(t *testing.T, mutate func(*config.Storage), fn func(t *testing.T, e *env)) {
	t.Helper()
	for _, kind := range testservice.DBKinds {
		t.Run(string(kind), func(t *testing.T) {
			for _, bk := range backendKinds {
				t.Run(string(bk), func(t *testing.T) {
					clock := newClock()
					e := newEnv(t, migrated(t, kind), newBackend(t, bk, clock.Now), clock, mutate, Options{})
					fn(t, e)
				})
			}
		})
	}
}

func user(id string) *rpc.Principal {
	return &rpc.Principal{Type: rpc.PrincipalUser, ID: id, Name: id, Roles: []string{}}
}

// wantErr fails unless err matches want (nil for success).
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Fatalf("%s: unexpected error %v", what, err)
	case want != nil && !errors.Is(err, want):
		t.Fatalf("%s: error = %v, want %v", what, err, want)
	}
}

// upload is an upload in progress with its plan and data.
type upload struct {
	e    *env
	p    *rpc.Principal
	init *InitUploadResult
	data []byte
}

// start opens an upload of size bytes as p.
func (e *env) start(p *rpc.Principal, name string, size int64) *upload {
	e.t.Helper()
	return e.startWith(p, InitUploadParams{Filename: name, Size: size, ContentType: "application/pdf"})
}

// startWith opens an upload with the given params as p.
func (e *env) startWith(p *rpc.Principal, in InitUploadParams) *upload {
	e.t.Helper()
	res, err := e.svc.initUpload(e.ctx, p, in)
	if err != nil {
		e.t.Fatalf("init_upload(%+v): %v", in, err)
	}
	return &upload{e: e, p: p, init: res, data: backendtest.Data(uint64(in.Size), int(in.Size))}
}

// part returns the bytes of part n (1-based) of the plan.
func (u *upload) part(n int) []byte {
	ps := u.init.PartSize
	start := int64(n-1) * ps
	return u.data[start:min(start+ps, int64(len(u.data)))]
}

// send uploads part n with the given content as a stream of unknown length.
func (u *upload) send(n int, content []byte) (*UploadPartResult, error) {
	return u.e.svc.uploadPart(u.e.ctx, u.p, u.init.ClaimID, n, onlyReader{bytes.NewReader(content)}, -1)
}

// sendAll uploads every part of the plan.
func (u *upload) sendAll() {
	u.e.t.Helper()
	for n := 1; n <= u.init.PartCount; n++ {
		if _, err := u.send(n, u.part(n)); err != nil {
			u.e.t.Fatalf("upload_part(%d): %v", n, err)
		}
	}
}

func (u *upload) complete() (*CompleteUploadResult, error) {
	return u.e.svc.completeUpload(u.e.ctx, u.p, u.init.ClaimID)
}

// onlyReader hides every method but Read, as a request body part does.
type onlyReader struct{ r *bytes.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// claim reads the claim row, nil when gone.
func (e *env) claim(id string) *Claim {
	e.t.Helper()
	c, err := e.svc.claims.get(e.ctx, e.db, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// queued returns "key:reason" of every pending delete.
func (e *env) queued() []string {
	e.t.Helper()
	rows, err := e.svc.queue.pending(e.ctx, e.db)
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ObjectKey + ":" + r.Reason
	}
	return out
}

// objectBytes reads an object from the backend.
func (e *env) objectBytes(key string) []byte {
	e.t.Helper()
	rc, _, err := e.be.Get(e.ctx, key, nil)
	if err != nil {
		e.t.Fatalf("get %s: %v", key, err)
	}
	defer rc.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(rc); err != nil {
		e.t.Fatal(err)
	}
	return buf.Bytes()
}
