package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Storage load: resumable uploads through /api onto the S3 server. Each upload's first part is
// cut mid-body (the connection dropped) and sent again, possibly to another node; the upload is
// completed on a random node and downloaded from another, compared by SHA-256. Some uploads are
// left unfinished on purpose: the sweeps must clean them up. Every fourth upload has two parts
// (the objstore part size is 16 MiB), the others one small part.

type upload struct {
	key, claim string
	sum        [32]byte
	crc        uint32 // CRC-32C, the checksum a backup manifest lists
	size       int
}

type uploadLoad struct {
	h         *harness
	mu        sync.Mutex
	completed []upload
	abandoned []upload
	// deleted: completed uploads deleted again through sys/storage/file delete (every third),
	// by key, with their SHA-256.
	deleted map[string][32]byte
	// undecided: completed uploads whose delete was sent but never answered (the run ended or
	// every attempt failed): the file may be deleted or not, so the final check accepts either.
	undecided map[string]bool
	// lost counts completions answered 2217 (the S3 server lost the session: start again);
	// expired those answered 2204 (the claim expired, possibly swept while its object was
	// assembled: start again).
	lost, expired int
}

// Storage codes a completion may answer that mean "start the upload again": 2217, the session is
// gone and no object was assembled; 2204, the claim expired (before or during the completion).
const (
	errUploadSessionLost = 2217
	errClaimExpired      = 2204
)

const objstorePartSize = 16 << 20

func (l *uploadLoad) name() string { return "storage" }

func (l *uploadLoad) setup(context.Context) error {
	l.deleted = map[string][32]byte{}
	l.undecided = map[string]bool{}
	return nil
}

// run uploads until ctx ends.
func (l *uploadLoad) run(ctx context.Context, rng *rand.Rand) {
	for i := 0; ctx.Err() == nil; i++ {
		size := 1 + rng.IntN(256<<10)
		if i%4 == 3 {
			size = objstorePartSize + 1 + rng.IntN(64<<10)
		}
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		l.one(ctx, rng, data, i%5 == 4, i%3 == 0)
		sleep(ctx, time.Second)
	}
}

func (l *uploadLoad) node(rng *rand.Rand) *node { return l.h.c.nodes[rng.IntN(len(l.h.c.nodes))] }

// retry calls fn on random nodes until it succeeds, ctx ends or 30 attempts fail; each attempt is
// recorded as an operation of kind.
func (l *uploadLoad) retry(ctx context.Context, rng *rand.Rand, kind string, fn func(n *node) (int, error)) error {
	var err error
	for attempt := 0; attempt < 30 && ctx.Err() == nil; attempt++ {
		start := time.Now()
		var st int
		n := l.node(rng)
		st, err = fn(n)
		if ctx.Err() == nil {
			l.h.rec.op(kind, n, start, st, err)
		}
		if err == nil {
			return nil
		}
		sleep(ctx, 500*time.Millisecond)
	}
	if err == nil {
		err = ctx.Err()
	}
	return err
}

func (l *uploadLoad) one(ctx context.Context, rng *rand.Rand, data []byte, abandon, del bool) {
	var plan struct {
		Key       string `json:"key"`
		ClaimID   string `json:"claimId"`
		PartSize  int    `json:"partSize"`
		PartCount int    `json:"partCount"`
	}
	if err := l.retry(ctx, rng, "storage.init_upload", func(n *node) (int, error) {
		return l.h.c.call(ctx, n, l.h.admin, "sys/storage", "init_upload", map[string]any{"filename": "f.bin", "size": len(data)}, &plan)
	}); err != nil {
		return
	}
	u := upload{key: plan.Key, claim: plan.ClaimID, sum: sha256.Sum256(data), crc: crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)), size: len(data)}
	// The first part is cut halfway: the client drops the connection.
	first := data[:min(plan.PartSize, len(data))]
	start := time.Now()
	n := l.node(rng)
	st, err := l.part(ctx, n, plan.ClaimID, 1, first, true)
	if ctx.Err() == nil {
		l.h.rec.op("storage.part_cut", n, start, st, nil) // failing is the point; the status still counts
	}
	_ = err
	for p := 1; p <= plan.PartCount; p++ {
		chunk := data[(p-1)*plan.PartSize : min(p*plan.PartSize, len(data))]
		if err := l.retry(ctx, rng, "storage.upload_part", func(n *node) (int, error) {
			return l.part(ctx, n, plan.ClaimID, p, chunk, false)
		}); err != nil {
			return
		}
		if abandon {
			l.mu.Lock()
			l.abandoned = append(l.abandoned, u)
			l.mu.Unlock()
			return
		}
	}
	gone := 0
	if err := l.retry(ctx, rng, "storage.complete_upload", func(n *node) (int, error) {
		st, err := l.h.c.call(ctx, n, l.h.admin, "sys/storage", "complete_upload", map[string]any{"claimId": plan.ClaimID}, nil)
		var ae *apiError
		if errors.As(err, &ae) && (ae.code == errUploadSessionLost || ae.code == errClaimExpired) {
			gone = ae.code // the documented answers: start the upload again
			return st, nil
		}
		return st, err
	}); err != nil || gone != 0 {
		l.mu.Lock()
		switch gone {
		case errUploadSessionLost:
			l.lost++
		case errClaimExpired:
			l.expired++
		}
		l.mu.Unlock()
		return
	}
	l.mu.Lock()
	l.completed = append(l.completed, u)
	l.mu.Unlock()
	_ = l.retry(ctx, rng, "storage.download", func(n *node) (int, error) {
		sum, st, err := l.download(ctx, n, u.key)
		if err == nil && sum != u.sum {
			return st, errors.New("checksum differs") // counted by the final check
		}
		return st, err
	})
	if !del {
		return
	}
	// The file is deleted again, retried until answered: 2001 after an unanswered attempt means
	// that attempt queued it.
	tried := false
	if err := l.retry(ctx, rng, "storage.delete", func(n *node) (int, error) {
		st, err := l.h.c.call(ctx, n, l.h.admin, "sys/storage/file", "delete", map[string]any{"key": u.key}, nil)
		var ae *apiError
		if tried && errors.As(err, &ae) && ae.code == errRecordNotFound {
			return st, nil
		}
		tried = true
		return st, err
	}); err == nil {
		l.mu.Lock()
		l.deleted[u.key] = u.sum
		l.mu.Unlock()
	} else if tried {
		l.mu.Lock()
		l.undecided[u.key] = true
		l.mu.Unlock()
	}
}

// errRecordNotFound is rpc's 2001: the key is unknown or already deleted; errFileNotFound is the
// download proxy's 2201: no object under the key.
const (
	errRecordNotFound = 2001
	errFileNotFound   = 2201
)

// part sends one part as a browser's FormData does; cut stops the body halfway and drops the
// connection.
func (l *uploadLoad) part(ctx context.Context, n *node, claim string, number int, chunk []byte, cut bool) (int, error) {
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	params := fmt.Sprintf(`{"claimId":%q,"partNumber":%d}`, claim, number)
	for _, kv := range [][2]string{{"resource", "sys/storage"}, {"action", "upload_part"}, {"version", "v1"}, {"params", params}} {
		_ = mw.WriteField(kv[0], kv[1])
	}
	if _, err := mw.CreateFormFile("file", "blob"); err != nil {
		return 0, err
	}
	tail := "\r\n--" + mw.Boundary() + "--\r\n"
	length := int64(head.Len() + len(chunk) + len(tail))
	var body io.Reader = io.MultiReader(bytes.NewReader(head.Bytes()), bytes.NewReader(chunk), bytes.NewReader([]byte(tail)))
	if cut {
		pr, pw := io.Pipe()
		go func() {
			_, _ = pw.Write(head.Bytes())
			_, _ = pw.Write(chunk[:len(chunk)/2])
			time.Sleep(100 * time.Millisecond)
			pw.CloseWithError(errors.New("connection cut by the harness"))
		}()
		body = pr
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, n.url()+"/api", body)
	if err != nil {
		return 0, err
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+l.h.admin)
	return l.h.c.do(req, nil)
}

// download fetches a key through the download proxy and returns its SHA-256.
func (l *uploadLoad) download(ctx context.Context, n *node, key string) ([32]byte, int, error) {
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, n.url()+"/storage/files/"+key, nil)
	if err != nil {
		return [32]byte{}, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+l.h.admin)
	resp, err := l.h.c.client.Do(req)
	if err != nil {
		return [32]byte{}, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return [32]byte{}, resp.StatusCode, &apiError{status: resp.StatusCode, msg: string(b)}
	}
	// The proxy answers its errors (2201 no object, 2202 backend failure) as an envelope with
	// HTTP 200; the load's files are application/octet-stream, never JSON.
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var env struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&env); err == nil && env.Code != 0 {
			return [32]byte{}, resp.StatusCode, &apiError{status: resp.StatusCode, code: env.Code, msg: env.Message}
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, resp.Body); err != nil {
		return [32]byte{}, resp.StatusCode, err
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, resp.StatusCode, nil
}

// Sweep bounds of the run's storage configuration (cluster.go): claims live claimTTL, the
// sweeper takes an expired one sweepInterval after expiry, the delete worker runs every
// deleteInterval.
const (
	claimTTL       = 20 * time.Second
	sweepInterval  = 5 * time.Second
	deleteInterval = 2 * time.Second
)

func (l *uploadLoad) check(ctx context.Context) error {
	return l.verify(ctx, l.h.db, rand.New(rand.NewPCG(l.h.seed, 3)))
}

// verify downloads every completed upload that was not deleted, and checks that expired claims
// were swept and every delete reached the end of the queue.
func (l *uploadLoad) verify(ctx context.Context, db *sql.DB, rng *rand.Rand) error {
	dl := newCheck("storage.completed_download_matches", 2)
	for _, u := range l.completed {
		if _, gone := l.deleted[u.key]; gone {
			continue
		}
		dl.checked++
		sum, _, err := l.download(ctx, l.node(rng), u.key)
		var ae *apiError
		switch {
		case l.undecided[u.key] && errors.As(err, &ae) && ae.code == errFileNotFound:
			// deleted by an attempt whose answer was lost
		case err != nil:
			dl.fail("%s: %v", u.key, err)
		case sum != u.sum:
			dl.fail("%s: checksum differs", u.key)
		}
	}
	l.h.rec.addCheck(*dl)
	// Expired claims: every one that expired more than two sweeps (and a delete run) ago must be
	// gone from pending.
	swept := newCheck("storage.expired_claims_swept", 1)
	bound := time.Now().UTC().Add(-2*sweepInterval - 2*deleteInterval - 5*time.Second)
	rows, err := db.Query("SELECT id, status, expires_at FROM sys_storage_upload_claim")
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, status string
		var exp time.Time
		if err := rows.Scan(&id, &status, &exp); err != nil {
			rows.Close()
			return err
		}
		if exp.Before(bound) {
			swept.checked++
			if status == "pending" {
				swept.fail("claim %s expired at %s still pending", id, exp.Format(time.TimeOnly))
			}
		}
	}
	rows.Close()
	l.h.rec.addCheck(*swept)
	if err := l.checkDeletes(ctx, db, rng); err != nil {
		return err
	}
	l.h.log("storage: %d uploads completed, %d deleted, %d abandoned, %d lost by the S3 server (2217), %d expired at completion (2204)", len(l.completed), len(l.deleted), len(l.abandoned), l.lost, l.expired)
	return nil
}

// checkDeletes waits for the delete worker to drain the queue, then checks every file the load
// deleted: its record is deleted and no queue row is left for it (storage.delete_queue_drained),
// and the download proxy no longer serves it (storage.deleted_file_not_served).
func (l *uploadLoad) checkDeletes(ctx context.Context, db *sql.DB, rng *rand.Rand) error {
	queue := newCheck("storage.delete_queue_drained", 1)
	gone := newCheck("storage.deleted_file_not_served", 1)
	deadline := time.Now().Add(30 * time.Second)
	left := 0
	for {
		cut := time.Now().UTC().Add(-10 * deleteInterval)
		if err := db.QueryRowContext(ctx, l.h.c.db.q("SELECT COUNT(*) FROM sys_storage_pending_delete WHERE created_at < ?"), cut).Scan(&left); err != nil {
			return err
		}
		if left == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if left > 0 {
		queue.fail("%d queued deletes older than %s still queued", left, 10*deleteInterval)
	}
	for key, sum := range l.deleted {
		queue.checked++
		var status string
		var queued int
		if err := db.QueryRowContext(ctx, l.h.c.db.q("SELECT status FROM sys_storage_file WHERE object_key = ?"), key).Scan(&status); err != nil {
			queue.fail("%s: file record: %v", key, err)
			continue
		}
		if err := db.QueryRowContext(ctx, l.h.c.db.q("SELECT COUNT(*) FROM sys_storage_pending_delete WHERE object_key = ?"), key).Scan(&queued); err != nil {
			return err
		}
		if status != "deleted" || queued > 0 {
			queue.fail("%s deleted by a client: record %q, %d queue rows left", key, status, queued)
		}
		gone.checked++
		// The proxy answers an error envelope (some with HTTP 200): served means its bytes came back.
		if got, _, err := l.download(ctx, l.node(rng), key); err == nil && got == sum {
			gone.fail("%s deleted by a client (record %q) still downloads", key, status)
		}
	}
	l.h.rec.addCheck(*queue)
	l.h.rec.addCheck(*gone)
	return nil
}
