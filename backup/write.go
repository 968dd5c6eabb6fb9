package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/db"
)

// Phases is where one backup's time went; it is logged when the backup succeeds ("backup
// succeeded": snapshot, refs, database, files, finish and sync in milliseconds) and
// bench/backup reads it from there.
type Phases struct {
	// Snapshot is the online snapshot of the embedded database (db.DB.Snapshot).
	Snapshot time.Duration
	// Refs is opening the snapshot and reading the objects and schema versions it references.
	Refs time.Duration
	// Database is reading the snapshot into the archive (hashed on the way).
	Database time.Duration
	// Files is reading the referenced objects into the archive (hashed on the way).
	Files time.Duration
	// Finish is the manifest, the trailer and the last buffered bytes.
	Finish time.Duration
	// Sync is making the archive durable and visible (the folder's fsync and rename, or the
	// storage backend's Put completing).
	Sync time.Duration
}

// logAttrs are the phases as log attributes, in milliseconds.
func (p Phases) logAttrs() []any {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return []any{"snapshot_ms", ms(p.Snapshot), "refs_ms", ms(p.Refs), "database_ms", ms(p.Database), "files_ms", ms(p.Files),
		"finish_ms", ms(p.Finish), "sync_ms", ms(p.Sync)}
}

// write produces the archive of b into w and answers its manifest and size. On the embedded
// database it snapshots first (SQLite's online backup API, while writes continue) and reads
// the snapshot's storage rows, so the files are those of the snapshot point: later uploads are
// not referenced, and an object deleted after the point but before it was read is listed as
// missing. On a server database it archives the objects the live rows reference. The phases'
// times are added to ph.
func (s *Service) write(ctx context.Context, b *Backup, w io.Writer, progress Progress, ph *Phases) (*Manifest, int64, error) {
	build := app.BuildInfo()
	m := &Manifest{Format: FormatVersion, ID: b.ID, SvcVersion: build.FrameworkVersion, AppVersion: build.AppVersion,
		GitCommit: build.GitCommit, Database: s.db.SystemName(), DatabaseIncluded: s.db.Embedded()}
	var snapPath string
	src := s.db
	t := time.Now()
	if s.db.Embedded() {
		dir := s.stagingDir(b.ID)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, 0, fmt.Errorf("backup: staging: %w", err)
		}
		defer os.RemoveAll(dir)
		snapPath = filepath.Join(dir, "snapshot.sqlite")
		m.SnapshotAt = s.clock().UTC()
		if err := s.db.Snapshot(ctx, snapPath); err != nil {
			return nil, 0, err
		}
		ph.Snapshot = time.Since(t)
		t = time.Now()
		snap, err := db.OpenFile(ctx, "backup-snapshot", snapPath)
		if err != nil {
			return nil, 0, err
		}
		defer snap.Close()
		src = snap
	} else {
		m.SnapshotAt = s.clock().UTC()
	}
	versions, err := schemaVersions(ctx, src)
	if err != nil {
		return nil, 0, err
	}
	m.SchemaVersions = versions
	refs, err := referencedObjects(ctx, src)
	if err != nil {
		return nil, 0, err
	}
	if src != s.db {
		// Close the snapshot before it is read as a file, so no -wal or -shm is left beside it.
		if err := src.Close(); err != nil {
			return nil, 0, err
		}
	}
	ph.Refs = time.Since(t)
	cw := &countWriter{w: w}
	aw, err := newArchiveWriter(cw, s.key, m.SnapshotAt)
	if err != nil {
		return nil, 0, err
	}
	p := &tracker{fn: progress}
	for _, r := range refs {
		p.total += r.Size
	}
	t = time.Now()
	if snapPath != "" {
		if err := addFile(aw, snapPath, p); err != nil {
			return nil, 0, err
		}
		// The staging copy is read: removed now, its pages need never reach the disk.
		_ = os.Remove(snapPath)
	}
	ph.Database = time.Since(t)
	if len(refs) > 0 && s.opts.Objects == nil {
		return nil, 0, errors.New("backup: the database references uploaded files but the server has no storage backend")
	}
	t = time.Now()
	for _, r := range refs {
		if err := s.addObject(ctx, aw, m, r, p); err != nil {
			return nil, 0, err
		}
	}
	ph.Files = time.Since(t)
	t = time.Now()
	if err := aw.finish(m); err != nil {
		return nil, 0, err
	}
	ph.Finish = time.Since(t)
	return m, cw.n, nil
}

func addFile(aw *archiveWriter, path string, p *tracker) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	p.total += fi.Size()
	return aw.add(entryDatabase, KindDatabase, "", p.reader(f), fi.Size())
}

func (s *Service) addObject(ctx context.Context, aw *archiveWriter, m *Manifest, r objectRef, p *tracker) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rc, size, err := s.opts.Objects.Open(ctx, r.Key)
	if errors.Is(err, ErrObjectNotFound) {
		m.Missing = append(m.Missing, r.Key)
		p.total -= r.Size
		return nil
	}
	if err != nil {
		return fmt.Errorf("backup: object %s: %w", r.Key, err)
	}
	defer rc.Close()
	p.total += size - r.Size
	return aw.add(entryFiles+r.Key, KindFile, r.Key, p.reader(rc), size)
}

// countWriter counts the bytes of the archive.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// tracker reports progress at most every 100 ms.
type tracker struct {
	fn    Progress
	done  int64
	total int64
	last  time.Time
}

func (t *tracker) reader(r io.Reader) io.Reader {
	if t.fn == nil {
		return r
	}
	return &progressReader{r: r, t: t}
}

type progressReader struct {
	r io.Reader
	t *tracker
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.t.done += int64(n)
	if now := time.Now(); now.Sub(p.t.last) > 100*time.Millisecond || err == io.EOF {
		p.t.last = now
		p.t.fn(p.t.done, p.t.total)
	}
	return n, err
}
