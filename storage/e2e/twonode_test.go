package e2e

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/storage"
	"github.com/svc-framework/svc/storage/backend"
	"github.com/svc-framework/svc/storage/backend/backendtest"
	"github.com/svc-framework/svc/svctest"
	"github.com/uptrace/bun"
)

// deleteCounter counts the object deletions of every node.
type deleteCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

// counting is a node's backend that reports its deletions to a shared counter.
type counting struct {
	backend.Backend
	c *deleteCounter
}

func (b *counting) Start(ctx context.Context) error {
	if st, ok := b.Backend.(backend.Starter); ok {
		return st.Start(ctx)
	}
	return nil
}

func (b *counting) Delete(ctx context.Context, key string) error {
	b.c.mu.Lock()
	b.c.counts[key]++
	b.c.mu.Unlock()
	return b.Backend.Delete(ctx, key)
}

// TestTwoNodes runs two servers on one database and one S3 bucket: the parts of one upload go
// alternately (and concurrently) to both, completion and downloads work on either, and the delete
// workers of both nodes, run at the same time, delete every queued object exactly once.
func TestTwoNodes(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		s3 := svctest.S3(t)
		obj := s3.ObjStore()
		t.Cleanup(func() { svctest.RemoveBucket(t, s3) })
		ds := svctest.DataSource(t, kind)
		counter := &deleteCounter{counts: map[string]int{}}
		node := func() *svctest.Server {
			st := config.Default().Storage
			st.Provider, st.ObjStore = config.StorageObjStore, obj
			be, err := storage.NewBackend(st, nil)
			if err != nil {
				t.Fatal(err)
			}
			return svctest.New(t, svctest.WithDB(kind),
				svctest.WithConfig(func(c *config.Config) {
					c.DataSources[config.PrimaryDataSource] = ds
					c.Storage.Provider, c.Storage.ObjStore = config.StorageObjStore, obj
				}),
				svctest.WithOptions(svc.WithStorage(storage.Options{Backend: &counting{Backend: be, c: counter}})))
		}
		nodes := []*svctest.Server{node(), node()}
		alice := svctest.As(svctest.User("alice"))

		var plan storage.InitUploadResult
		r := nodes[0].Call(t, "sys/storage", "init_upload", map[string]any{"filename": "probe.bin", "size": 1}, alice)
		r.DataAs(t, &plan) // learn the part size
		nodes[1].Call(t, "sys/storage", "abort_upload", map[string]any{"claimId": plan.ClaimID}, alice)
		size := 2*plan.PartSize + 1000
		r = nodes[0].Call(t, "sys/storage", "init_upload", map[string]any{"filename": "big.bin", "size": size}, alice)
		expect(t, "init_upload", r, http.StatusOK, 0)
		r.DataAs(t, &plan)
		data := backendtest.Data(11, int(size))
		var wg sync.WaitGroup
		for n := 1; n <= plan.PartCount; n++ {
			wg.Go(func() {
				chunk := data[int64(n-1)*plan.PartSize : min(int64(n)*plan.PartSize, size)]
				r := nodes[n%2].CallMultipart(t, "sys/storage", "upload_part", map[string]any{"claimId": plan.ClaimID, "partNumber": n},
					[]svctest.FilePart{{Field: "file", Filename: "blob", Content: bytes.NewReader(chunk)}}, alice)
				if r.Code != 0 {
					t.Errorf("part %d on node %d: %d %s", n, n%2, r.Code, r.Message)
				}
			})
		}
		wg.Wait()
		var first, second storage.CompleteUploadResult
		r = nodes[1].Call(t, "sys/storage", "complete_upload", map[string]any{"claimId": plan.ClaimID}, alice)
		expect(t, "complete_upload on node 1", r, http.StatusOK, 0)
		r.DataAs(t, &first)
		r = nodes[0].Call(t, "sys/storage", "complete_upload", map[string]any{"claimId": plan.ClaimID}, alice)
		expect(t, "complete_upload on node 0", r, http.StatusOK, 0)
		r.DataAs(t, &second)
		if first.ETag != second.ETag || first.Size != size {
			t.Errorf("completions differ: %+v and %+v", first, second)
		}
		for i, n := range nodes {
			req, _ := http.NewRequest(http.MethodGet, "/storage/files/"+plan.Key, nil)
			req.Header.Set("Authorization", "Bearer "+n.Token(t, svctest.User("alice")))
			if resp, body := n.Do(t, req); resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
				t.Errorf("download from node %d: %d, %d bytes", i, resp.StatusCode, len(body))
			}
		}

		keys := []string{plan.Key}
		for i := range 30 {
			var p storage.InitUploadResult
			n := nodes[i%2]
			n.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "s.txt", "size": 1}, alice).DataAs(t, &p)
			r := n.CallMultipart(t, "sys/storage", "upload_part", map[string]any{"claimId": p.ClaimID, "partNumber": 1},
				[]svctest.FilePart{{Field: "file", Filename: "s.txt", Content: bytes.NewReader([]byte{byte(i)})}}, alice)
			expect(t, "small part", r, http.StatusOK, 0)
			expect(t, "small complete", n.Call(t, "sys/storage", "complete_upload", map[string]any{"claimId": p.ClaimID}, alice), http.StatusOK, 0)
			keys = append(keys, p.Key)
		}
		st := nodes[0].Storage()
		err := nodes[0].DB().InTx(t.Context(), func(ctx context.Context, tx bun.Tx) error {
			if err := st.Adopt(ctx, tx, svctest.User("alice"), keys...); err != nil {
				return err
			}
			return st.Delete(ctx, tx, keys...)
		})
		if err != nil {
			t.Fatalf("adopt and delete: %v", err)
		}
		for range 5 {
			var wg sync.WaitGroup
			for _, n := range nodes {
				wg.Go(func() {
					if err := n.Storage().ProcessDeletes(t.Context()); err != nil {
						t.Errorf("ProcessDeletes: %v", err)
					}
				})
			}
			wg.Wait()
		}
		for _, k := range keys {
			if counter.counts[k] != 1 {
				t.Errorf("%s deleted %d times, want exactly once", k, counter.counts[k])
			}
		}
		r = nodes[1].Call(t, "sys/storage/file", "resolve", map[string]any{"keys": keys[:3]}, alice)
		if !bytes.Contains(r.Data, []byte(`"status":"deleted"`)) || bytes.Contains(r.Data, []byte(`"status":"claimed"`)) {
			t.Errorf("resolve after deletion = %s, want every file deleted", r.Data)
		}
	})
}
