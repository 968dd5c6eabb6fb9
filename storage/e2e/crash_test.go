package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/storage"
	"github.com/svc-framework/svc/storage/backend/backendtest"
	"github.com/svc-framework/svc/svctest"
)

// crashSetup is one database and backend the crash test runs on.
type crashSetup struct {
	provider config.StorageProvider
	ds       config.DataSource
	st       config.Storage
	db       *db.DB
}

// TestCrash kills the server with SIGKILL in the middle of an upload and in the middle of
// complete_upload (after the backend assembled the object, before the server recorded it), then
// restarts it and finishes: the object is byte-identical, complete_upload is idempotent, there is
// exactly one object per upload and, once the sweeper and the delete worker have run, no
// multipart session, part record or pending claim is left.
func TestCrash(t *testing.T) {
	bin := buildServer(t)
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		for _, p := range []config.StorageProvider{config.StorageFilesystem, config.StorageObjStore} {
			t.Run(string(p), func(t *testing.T) { runCrash(t, bin, kind, p) })
		}
	})
}

func newCrashSetup(t *testing.T, kind config.DBKind, p config.StorageProvider) *crashSetup {
	cs := &crashSetup{provider: p, ds: svctest.DataSource(t, kind)}
	cs.st = config.Storage{Provider: p, ClaimTTL: time.Hour, SweepInterval: time.Hour, DeleteWorkerInterval: time.Hour}
	cs.st.Filesystem.Root = filepath.Join(t.TempDir(), "files")
	if p == config.StorageObjStore {
		s3 := svctest.S3(t)
		cs.st.ObjStore = s3.ObjStore()
		t.Cleanup(func() { svctest.RemoveBucket(t, s3) })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := db.Open(ctx, "inspect", cs.ds)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	cs.db = d
	return cs
}

func runCrash(t *testing.T, bin string, kind config.DBKind, p config.StorageProvider) {
	cs := newCrashSetup(t, kind, p)
	dir := t.TempDir()
	port := freePort(t)
	long := writeConfig(t, dir, port, cs.ds, cs.st, "long.toml")
	short := cs.st
	// The claim of phase 3 must live through its first one and a half parts, which can take
	// seconds on a loaded machine (objstore on MariaDB with the rest of the suite running), and
	// expire soon after for the sweeper.
	short.ClaimTTL, short.SweepInterval, short.DeleteWorkerInterval = 5*time.Second, time.Second, time.Second
	sweeping := writeConfig(t, dir, port, cs.ds, short, "sweeping.toml")
	srv := newChild(t, bin, port)

	// 1. SIGKILL while a part streams; resume with list_parts; complete.
	srv.start(long)
	var plan storage.InitUploadResult
	probe := srv.call("init_upload", map[string]any{"filename": "probe.bin", "size": 1}, "alice", &plan)
	srv.call("abort_upload", map[string]any{"claimId": plan.ClaimID}, "alice", nil)
	partSize := plan.PartSize
	size := 2*partSize + partSize/2
	data := backendtest.Data(7, int(size))
	if env := srv.call("init_upload", map[string]any{"filename": "video.mp4", "size": size}, "alice", &plan); env.Code != 0 || probe.Code != 0 {
		t.Fatalf("init_upload: %+v", env)
	}
	if env, err := srv.part(plan.ClaimID, 1, bytes.NewReader(data[:partSize]), "alice"); err != nil || env.Code != 0 {
		t.Fatalf("part 1: %+v %v", env, err)
	}
	killMidPart(t, srv, plan.ClaimID, 2, data[partSize:2*partSize], "alice")
	srv.start(long)
	var listed storage.ListPartsResult
	srv.call("list_parts", map[string]any{"claimId": plan.ClaimID}, "alice", &listed)
	if len(listed.Parts) != 1 || listed.Parts[0].PartNumber != 1 || listed.Parts[0].Size != partSize {
		t.Fatalf("list_parts after the crash = %+v, want part 1 only", listed.Parts)
	}
	for n := 2; n <= 3; n++ {
		chunk := data[int64(n-1)*partSize : min(int64(n)*partSize, size)]
		if env, err := srv.part(plan.ClaimID, n, bytes.NewReader(chunk), "alice"); err != nil || env.Code != 0 {
			t.Fatalf("part %d after restart: %+v %v", n, env, err)
		}
	}
	if env := srv.call("complete_upload", map[string]any{"claimId": plan.ClaimID}, "alice", nil); env.Code != 0 {
		t.Fatalf("complete_upload: %+v", env)
	}
	if got := srv.download(plan.Key, "alice"); !bytes.Equal(got, data) {
		t.Fatalf("object after a crash mid-part: %d bytes that differ from the %d sent", len(got), len(data))
	}
	srv.kill()

	// 2. SIGKILL inside complete_upload, after the backend assembled the object.
	marker := filepath.Join(dir, "completed")
	srv.start(long, "SVC_CRASH_AT=after_complete", "SVC_CRASH_MARKER="+marker)
	var second storage.InitUploadResult
	srv.call("init_upload", map[string]any{"filename": "second.bin", "size": size}, "alice", &second)
	for n := 1; n <= 3; n++ {
		chunk := data[int64(n-1)*partSize : min(int64(n)*partSize, size)]
		if env, err := srv.part(second.ClaimID, n, bytes.NewReader(chunk), "alice"); err != nil || env.Code != 0 {
			t.Fatalf("part %d: %+v %v", n, env, err)
		}
	}
	req := completeRequest(srv, second.ClaimID, "alice")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil { // the server dies before it answers
			resp.Body.Close()
		}
	}()
	svctest.Eventually(t, time.Minute, func() bool { _, err := os.Stat(marker); return err == nil }, "the backend never completed")
	srv.kill()
	<-done
	srv.start(long)
	var first, again storage.CompleteUploadResult
	if env := srv.call("complete_upload", map[string]any{"claimId": second.ClaimID}, "alice", &first); env.Code != 0 {
		t.Fatalf("complete_upload after the crash: %+v", env)
	}
	if env := srv.call("complete_upload", map[string]any{"claimId": second.ClaimID}, "alice", &again); env.Code != 0 || again.ETag != first.ETag || again.Size != size {
		t.Fatalf("repeated complete_upload = %+v (%+v), want %+v", again, env, first)
	}
	if got := srv.download(second.Key, "alice"); !bytes.Equal(got, data) {
		t.Fatalf("object after a crash in complete_upload differs")
	}
	srv.kill()

	// 3. An upload abandoned by a crash is swept; nothing is left behind.
	srv.start(sweeping)
	var lost storage.InitUploadResult
	srv.call("init_upload", map[string]any{"filename": "lost.bin", "size": size}, "bob", &lost)
	if env, err := srv.part(lost.ClaimID, 1, bytes.NewReader(data[:partSize]), "bob"); err != nil || env.Code != 0 {
		t.Fatalf("part 1 of the abandoned upload: %+v %v", env, err)
	}
	killMidPart(t, srv, lost.ClaimID, 2, data[partSize:2*partSize], "bob")
	srv.start(sweeping)
	last := ""
	svctest.Eventually(t, 90*time.Second, func() bool {
		state := fmt.Sprintf("%d sessions, %d parts, %d pending claims, %d queued deletes", cs.sessions(t),
			cs.count(t, "sys_storage_upload_part"), cs.count(t, "sys_storage_upload_claim WHERE status = 'pending'"),
			cs.count(t, "sys_storage_pending_delete"))
		if state != last {
			t.Logf("after the crash: %s", state)
			last = state
		}
		return strings.HasPrefix(state, "0 sessions, 0 parts, 0 pending claims, 0 queued")
	}, "sessions, parts, pending claims or queued deletes remain after the sweeper and the delete worker ran")
	if objs := cs.objects(t); len(objs) != 2 { // video and second: one object each
		t.Errorf("objects = %v, want exactly the 2 completed uploads", objs)
	}
}

// killMidPart starts streaming part n as the user as and kills the server once half the part
// has been sent, before the part is complete.
func killMidPart(t *testing.T, srv *child, claimID string, n int, chunk []byte, as string) {
	t.Helper()
	pr, pw := io.Pipe()
	var (
		env envelope
		err error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		env, err = srv.part(claimID, n, pr, as)
		pr.CloseWithError(io.ErrClosedPipe) // unblock the writer if the server answered early
	}()
	if _, werr := pw.Write(chunk[:len(chunk)/2]); werr != nil { // returns once the client sent it
		<-done
		t.Fatalf("the server answered before the part was sent: %+v %v", env, err)
	}
	srv.kill()
	pw.CloseWithError(io.ErrUnexpectedEOF)
	<-done
}

// completeRequest is a complete_upload request as the user as.
func completeRequest(c *child, claimID, as string) *http.Request {
	body := `{"resource":"sys/storage","action":"complete_upload","version":"v1","params":{"claimId":"` + claimID + `"}}`
	req, _ := http.NewRequest(http.MethodPost, c.url+"/api", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token(as))
	return req
}

// count returns the number of rows of "table [WHERE …]".
func (cs *crashSetup) count(t *testing.T, from string) int {
	var n int
	if err := cs.db.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+from).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", from, err)
	}
	return n
}

// sessions counts the backend's open multipart sessions.
func (cs *crashSetup) sessions(t *testing.T) int {
	if cs.provider == config.StorageFilesystem {
		entries, err := os.ReadDir(filepath.Join(cs.st.Filesystem.Root, ".svc-multipart"))
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	n := 0
	c := s3Client(t, cs.st.ObjStore)
	for up := range c.Client.ListIncompleteUploads(context.Background(), cs.st.ObjStore.Bucket, "", true) {
		if up.Err == nil {
			n++
		}
	}
	return n
}

// objects lists the stored objects' keys.
func (cs *crashSetup) objects(t *testing.T) []string {
	var keys []string
	if cs.provider == config.StorageFilesystem {
		root := cs.st.Filesystem.Root
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if d.IsDir() && strings.HasPrefix(rel, ".svc") {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				keys = append(keys, filepath.ToSlash(rel))
			}
			return nil
		})
		return keys
	}
	c := s3Client(t, cs.st.ObjStore)
	for obj := range c.Client.ListObjects(context.Background(), cs.st.ObjStore.Bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err == nil {
			keys = append(keys, obj.Key)
		}
	}
	return keys
}

func s3Client(t *testing.T, o config.ObjStore) *minio.Core {
	c, err := minio.NewCore(o.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(o.AccessKey, o.SecretKey, ""), Region: o.Region})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
