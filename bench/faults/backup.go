package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/svc-framework/svc/backup"
)

// Backup load (issue #47): backups through sys/backup create on a random node while every
// other load and the faults run, written into the storage backend (S3) under "backups/". At the
// end one more backup runs on the settled cluster, then:
//
//   - backup.none_left_running: no sys_backup row is still "running" (a node killed in the
//     middle of a backup leaves its row running until the next backup marks it failed);
//   - backup.succeeded_archive_verifies: every archive whose row says succeeded is in the
//     bucket and verifies as a restore would (checksums, trailer, manifest), and every file it
//     lists that the upload load wrote has the upload's CRC-32C;
//   - backup.object_is_whole: every object under the prefix verifies (no partial archive, the
//     one a restore must never accept);
//   - backup.restored_file_equal: the newest archive restored through backup.Restore into a
//     fresh bucket writes every file it lists, byte-equal to what was uploaded.

const (
	backupPrefix        = "backups/"
	backupRestoreBucket = "faults-restore"
	backupEvery         = 15 * time.Second
)

type backupLoad struct {
	h       *harness
	ul      *uploadLoad
	started int
	busy    int
}

func (l *backupLoad) name() string { return "backup" }

func (l *backupLoad) setup(context.Context) error { return nil }

// run starts a backup on a random node, waits until it has ended (an archive holds every file
// the uploads wrote, so backups back to back would be the run's main I/O), then pauses about
// backupEvery, until ctx ends.
func (l *backupLoad) run(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		sleep(ctx, backupEvery/2+time.Duration(rng.Int64N(int64(backupEvery))))
		for l.anyRunning(ctx) {
			sleep(ctx, time.Second)
		}
		if ctx.Err() != nil {
			return
		}
		n := l.h.c.nodes[rng.IntN(len(l.h.c.nodes))]
		start := time.Now()
		id, busy, st, err := l.create(ctx, n)
		if ctx.Err() != nil {
			return
		}
		switch {
		case busy:
			l.busy++
			l.h.rec.op("backup.busy", n, start, st, nil)
		default:
			l.h.rec.op("backup.create", n, start, st, err)
			if id != "" {
				l.started++
			}
		}
	}
}

// anyRunning reports whether a backup holds the cluster's lease (false when the database cannot
// say). A node killed in the middle of a backup keeps it until the lease runs out (2 minutes).
func (l *backupLoad) anyRunning(ctx context.Context) bool {
	var holder string
	var expires int64
	err := l.h.db.QueryRowContext(ctx, "SELECT holder, expires_unix_ms FROM sys_backup_lease WHERE name = 'backup'").Scan(&holder, &expires)
	return err == nil && holder != "" && expires > time.Now().UnixMilli() && ctx.Err() == nil
}

// create asks n for a backup; busy when another one runs somewhere (2950).
func (l *backupLoad) create(ctx context.Context, n *node) (id string, busy bool, status int, err error) {
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var row struct {
		ID string `json:"id"`
	}
	status, err = l.h.c.call(cctx, n, l.h.admin, "sys/backup", "create", map[string]any{}, &row)
	var ae *apiError
	if errors.As(err, &ae) && ae.code == backup.ErrCodeBusy {
		return "", true, status, nil
	}
	return row.ID, false, status, err
}

// final runs one backup on the settled cluster and waits for every row to leave "running".
func (l *backupLoad) final(ctx context.Context) error {
	// A lease left by a node killed mid-backup runs out within 2 minutes.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		id, _, _, err := l.create(ctx, l.h.c.nodes[0])
		if err == nil && id != "" {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("backup: no final backup could start: %v", err)
		}
		sleep(ctx, time.Second)
	}
	for time.Now().Before(deadline) {
		var running int
		if err := l.h.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sys_backup WHERE status = 'running'").Scan(&running); err != nil {
			return err
		}
		if running == 0 {
			return nil
		}
		sleep(ctx, time.Second)
	}
	return nil // the none_left_running check reports the rows still running
}

func (l *backupLoad) check(ctx context.Context) error {
	if err := l.final(ctx); err != nil {
		return err
	}
	type row struct{ id, status, location string }
	rows, err := l.h.db.QueryContext(ctx, "SELECT id, status, location FROM sys_backup ORDER BY started_at_unix_ms")
	if err != nil {
		return err
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.status, &r.location); err != nil {
			rows.Close()
			return err
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}

	s3, err := minio.New(fmt.Sprintf("127.0.0.1:%d", l.h.c.s3Port), &minio.Options{
		Creds: credentials.NewStaticV4(s3Access, s3Secret, ""), Region: "us-east-1"})
	if err != nil {
		return err
	}
	uploaded := l.uploadedSums()
	verify := func(key string) (*backup.Manifest, error) {
		obj, err := s3.GetObject(ctx, "faults", key, minio.GetObjectOptions{})
		if err != nil {
			return nil, err
		}
		defer obj.Close()
		return backup.Verify(obj, nil, nil)
	}

	running := newCheck("backup.none_left_running", 2)
	succeeded := newCheck("backup.succeeded_archive_verifies", 1)
	var newest string
	for _, r := range all {
		running.checked++
		if r.status == backup.StatusRunning {
			running.fail("backup %s still running after the final backup", r.id)
		}
		if r.status != backup.StatusSucceeded {
			continue
		}
		succeeded.checked++
		m, err := verify(r.location)
		if err != nil {
			succeeded.fail("succeeded backup %s (%s): %v", r.id, r.location, err)
			continue
		}
		for _, e := range m.Entries {
			if want, ok := uploaded[e.Key]; ok && e.CRC32C != want.crc {
				succeeded.fail("backup %s: %s has CRC-32C %s, the upload's is %s", r.id, e.Key, e.CRC32C, want.crc)
			}
		}
		newest = r.location
	}

	whole := newCheck("backup.object_is_whole", 1)
	for obj := range s3.ListObjects(ctx, "faults", minio.ListObjectsOptions{Prefix: backupPrefix, Recursive: true}) {
		if obj.Err != nil {
			return obj.Err
		}
		whole.checked++
		if _, err := verify(obj.Key); err != nil {
			whole.fail("object %s: %v", obj.Key, err)
		}
	}

	restored := newCheck("backup.restored_file_equal", 1)
	if newest != "" {
		if err := l.restore(ctx, s3, newest, uploaded, restored); err != nil {
			return err
		}
	}
	for _, c := range []*check{running, succeeded, whole, restored} {
		l.h.rec.addCheck(*c)
	}
	l.h.log("backup: %d started under load, %d answered busy, %d rows, %d objects", l.started, l.busy, len(all), whole.checked)
	return nil
}

// restore restores the archive at key into a fresh bucket and compares every file it wrote
// with the upload load's record.
func (l *backupLoad) restore(ctx context.Context, s3 *minio.Client, key string, uploaded map[string]uploadSums, c *check) error {
	if err := s3.MakeBucket(ctx, backupRestoreBucket, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		return fmt.Errorf("backup: restore bucket: %w", err)
	}
	dst := s3Objects{c: s3, bucket: backupRestoreBucket}
	res, err := backup.Restore(ctx, backup.RestoreOptions{
		Open: func(ctx context.Context) (io.ReadCloser, error) {
			return s3.GetObject(ctx, "faults", key, minio.GetObjectOptions{})
		},
		Objects: dst,
		Now:     time.Now,
	})
	if err != nil {
		c.checked++
		c.fail("restore of %s: %v", key, err)
		return nil
	}
	for _, e := range res.Manifest.Entries {
		if e.Kind != backup.KindFile {
			continue
		}
		c.checked++
		rc, _, err := dst.Open(ctx, e.Key)
		if err != nil {
			c.fail("restored %s: %v", e.Key, err)
			continue
		}
		sha, crc := sha256.New(), crc32.New(crc32.MakeTable(crc32.Castagnoli))
		_, err = io.Copy(io.MultiWriter(sha, crc), rc)
		rc.Close()
		got := uploadSums{sha: hex.EncodeToString(sha.Sum(nil)), crc: fmt.Sprintf("%08x", crc.Sum32())}
		if want, ok := uploaded[e.Key]; err != nil || got.crc != e.CRC32C || ok && got != want {
			c.fail("restored %s: SHA-256 %s, CRC-32C %s (%v); manifest CRC-32C %s; upload %+v", e.Key, got.sha, got.crc, err, e.CRC32C, want)
		}
	}
	return nil
}

// uploadSums are an upload's SHA-256 and CRC-32C in hex.
type uploadSums struct{ sha, crc string }

// uploadedSums answers the sums of every upload the upload load completed, by key.
func (l *backupLoad) uploadedSums() map[string]uploadSums {
	l.ul.mu.Lock()
	defer l.ul.mu.Unlock()
	out := make(map[string]uploadSums, len(l.ul.completed))
	for _, u := range l.ul.completed {
		out[u.key] = uploadSums{sha: hex.EncodeToString(u.sum[:]), crc: fmt.Sprintf("%08x", u.crc)}
	}
	return out
}

// s3Objects is backup.ObjectStore over one bucket of the run's S3 server.
type s3Objects struct {
	c      *minio.Client
	bucket string
}

func (s s3Objects) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	obj, err := s.c.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, err
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		if strings.Contains(err.Error(), "does not exist") {
			return nil, 0, fmt.Errorf("%s: %w", key, backup.ErrObjectNotFound)
		}
		return nil, 0, err
	}
	return obj, st.Size, nil
}

func (s s3Objects) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	_, err := s.c.PutObject(ctx, s.bucket, key, r, size, minio.PutObjectOptions{})
	return err
}

func (s s3Objects) Delete(ctx context.Context, key string) error {
	return s.c.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{})
}
