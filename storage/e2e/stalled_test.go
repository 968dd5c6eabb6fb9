package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/storage"
	"github.com/svc-framework/svc/storage/backend"
	"github.com/svc-framework/svc/storage/backend/backendtest"
	"github.com/svc-framework/svc/svctest"
)

// failBound bounds waits that must end far sooner; it only turns a hang into a failure.
const failBound = 20 * time.Second

// stalledPart sends upload_part of claimID with a file part whose first head bytes arrive and
// whose rest never does, until the returned release is called. The call runs over a real TCP
// connection; its outcome (the HTTP status, or -1 for a closed connection) arrives on the
// channel.
func stalledPart(t *testing.T, srv *svctest.Server, token, claimID string, head []byte) (<-chan int, func()) {
	t.Helper()
	stall, release := io.Pipe()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		params, _ := json.Marshal(map[string]any{"claimId": claimID, "partNumber": 1})
		for _, kv := range [][2]string{{"resource", "sys/storage"}, {"action", "upload_part"}, {"version", "v1"}, {"params", string(params)}} {
			_ = mw.WriteField(kv[0], kv[1])
		}
		w, _ := mw.CreateFormFile("file", "blob")
		_, _ = w.Write(head)
		_, err := io.Copy(w, stall) // blocks: the client stalls mid-part
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	outcome := make(chan int, 1)
	go func() {
		resp, err := srv.HTTP.Client().Do(req)
		if err != nil {
			outcome <- -1
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		outcome <- resp.StatusCode
	}()
	var once sync.Once
	done := func() { once.Do(func() { release.CloseWithError(io.ErrUnexpectedEOF) }) }
	t.Cleanup(done)
	return outcome, done
}

// initOnePart opens an upload of size bytes (one part on every backend) for alice.
func initOnePart(t *testing.T, srv *svctest.Server, size int) storage.InitUploadResult {
	t.Helper()
	var plan storage.InitUploadResult
	r := srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "a.bin", "size": size}, svctest.As(svctest.User("alice")))
	expect(t, "init_upload", r, http.StatusOK, 0)
	r.DataAs(t, &plan)
	if plan.PartCount != 1 {
		t.Fatalf("plan = %+v, want one part", plan)
	}
	return plan
}

// TestStalledBodyIsClosed is issue #11's slow client: an upload_part whose body stops arriving
// mid-part is ended by svc.app.body_read_idle_timeout (200 ms here) instead of being held open,
// and the same part sent again afterwards is stored.
func TestStalledBodyIsClosed(t *testing.T) {
	srv := svctest.New(t, svctest.WithConfig(useProvider(t, config.StorageFilesystem)), svctest.WithConfig(func(c *config.Config) {
		c.App.BodyReadIdleTimeout = 200 * time.Millisecond
	}))
	plan := initOnePart(t, srv, 1000)
	data := backendtest.Data(7, 1000)
	start := time.Now()
	outcome, _ := stalledPart(t, srv, srv.Token(t, svctest.User("alice")), plan.ClaimID, data[:300])
	select {
	case status := <-outcome:
		if status == http.StatusOK {
			t.Errorf("stalled upload_part answered 200")
		}
		t.Logf("stalled upload_part ended after %s (status %d, -1 = connection closed)", time.Since(start).Round(time.Millisecond), status)
	case <-time.After(failBound):
		t.Fatalf("stalled upload_part still open after %s with a 200ms read-idle timeout", failBound)
	}
	r := srv.CallMultipart(t, "sys/storage", "upload_part", map[string]any{"claimId": plan.ClaimID, "partNumber": 1},
		[]svctest.FilePart{{Field: "file", Filename: "blob", Content: bytes.NewReader(data)}}, svctest.As(svctest.User("alice")))
	expect(t, "upload_part after the stalled one", r, http.StatusOK, 0)
	expect(t, "complete_upload", srv.Call(t, "sys/storage", "complete_upload", map[string]any{"claimId": plan.ClaimID}, svctest.As(svctest.User("alice"))), http.StatusOK, 0)
}

// readingBackend signals when a PutPart first reads its body, which every backend does only
// after its transfer has begun (backend.Transfers.Begin).
type readingBackend struct {
	backend.Backend
	once    sync.Once
	reading chan struct{}
}

// Start starts the wrapped backend.
func (b *readingBackend) Start(ctx context.Context) error {
	if st, ok := b.Backend.(backend.Starter); ok {
		return st.Start(ctx)
	}
	return nil
}

// PutPart signals the first read of the part's body.
func (b *readingBackend) PutPart(ctx context.Context, key, uploadID string, number int, r io.Reader, size int64) (backend.Part, error) {
	return b.Backend.PutPart(ctx, key, uploadID, number, &signalReader{r: r, b: b}, size)
}

type signalReader struct {
	r io.Reader
	b *readingBackend
}

func (s *signalReader) Read(p []byte) (int, error) {
	s.b.once.Do(func() { close(s.b.reading) })
	return s.r.Read(p)
}

// TestResentPartSupersedesStalled: while a transfer of part 1 is stalled mid-part (a read-idle
// timeout of a minute keeps it open), the uploader's re-send of part 1 completes at once, and the
// stored object is the re-sent part, on every backend and database.
func TestResentPartSupersedesStalled(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		for _, p := range providers {
			t.Run(string(p), func(t *testing.T) {
				provider := useProvider(t, p)
				cfg := config.Default()
				provider(cfg)
				inner, err := storage.NewBackend(cfg.Storage, time.Now)
				if err != nil {
					t.Fatal(err)
				}
				wrapped := &readingBackend{Backend: inner, reading: make(chan struct{})}
				srv := svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(provider),
					svctest.WithConfig(func(c *config.Config) { c.App.BodyReadIdleTimeout = time.Minute }),
					svctest.WithOptions(svc.WithStorage(storage.Options{Backend: wrapped})))
				alice := svctest.As(svctest.User("alice"))
				plan := initOnePart(t, srv, 1000)
				stale, fresh := backendtest.Data(8, 1000), backendtest.Data(9, 1000)
				outcome, release := stalledPart(t, srv, srv.Token(t, svctest.User("alice")), plan.ClaimID, stale[:300])
				select {
				case <-wrapped.reading:
				case <-time.After(failBound):
					t.Fatal("the stalled upload_part never reached the backend")
				}

				resent := make(chan svctest.Response, 1)
				go func() {
					resent <- srv.CallMultipart(t, "sys/storage", "upload_part", map[string]any{"claimId": plan.ClaimID, "partNumber": 1},
						[]svctest.FilePart{{Field: "file", Filename: "blob", Content: bytes.NewReader(fresh)}}, alice)
				}()
				select {
				case r := <-resent:
					expect(t, "re-sent upload_part", r, http.StatusOK, 0)
				case <-time.After(failBound):
					t.Fatal("the re-sent part waited behind the stalled transfer")
				}
				release() // the stalled client's connection dies
				if status := <-outcome; status == http.StatusOK {
					t.Errorf("superseded upload_part answered 200")
				}
				expect(t, "complete_upload", srv.Call(t, "sys/storage", "complete_upload", map[string]any{"claimId": plan.ClaimID}, alice), http.StatusOK, 0)
				req, _ := http.NewRequest(http.MethodGet, "/storage/files/"+plan.Key, nil)
				req.Header.Set("Authorization", "Bearer "+srv.Token(t, svctest.User("alice")))
				if resp, body := srv.Do(t, req); resp.StatusCode != http.StatusOK || !bytes.Equal(body, fresh) {
					t.Errorf("download = %d, %d bytes; want 200 and the re-sent part", resp.StatusCode, len(body))
				}
			})
		}
	})
}
