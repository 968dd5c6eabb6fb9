package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/svc-framework/svc/db"
)

// Verify reads a whole archive and checks it as a restore would, writing nothing: every
// entry's checksum and size, the manifest against the trailer, the format, and each module's
// schema version against known (the newest migration of every module this binary has; a
// module known is refused when the archive's version is higher, one unknown is accepted).
func Verify(r io.Reader, key []byte, known map[string]int) (*Manifest, error) {
	m, err := readArchive(r, key, nil)
	if err != nil {
		return nil, err
	}
	return m, checkVersions(m, known)
}

func checkVersions(m *Manifest, known map[string]int) error {
	modules := make([]string, 0, len(m.SchemaVersions))
	for mod := range m.SchemaVersions {
		modules = append(modules, mod)
	}
	sort.Strings(modules)
	for _, mod := range modules {
		if have, ok := known[mod]; ok && m.SchemaVersions[mod] > have {
			return fmt.Errorf("%w: module %s is at schema version %d, this binary knows up to %d (upgrade svc first)",
				ErrArchiveTooNew, mod, m.SchemaVersions[mod], have)
		}
	}
	return nil
}

// RestoreOptions say what a restore replaces.
type RestoreOptions struct {
	// Open opens the archive; it is called once, or twice when objects go to a non-filesystem
	// backend (verification first, then the writes).
	Open func(ctx context.Context) (io.ReadCloser, error)
	// Key is svc.backup.encryption_key decoded (nil: plain archives only).
	Key []byte
	// DatabasePath is the embedded database file; empty on a server database, where an
	// archive holding a database is refused.
	DatabasePath string
	// StorageRoot is the filesystem provider's root (svc.storage.filesystem.root) with
	// StageObjects; empty otherwise.
	StorageRoot  string
	StageObjects func(root string) (ObjectStore, error)
	// Objects is the storage backend, written after verification when StorageRoot is empty.
	Objects ObjectStore
	// Known is the newest migration version of every module this binary has.
	Known map[string]int
	// Now stamps the set-aside directory.
	Now func() time.Time
}

// RestoreResult says what a restore did.
type RestoreResult struct {
	Manifest *Manifest
	// Aside is the directory holding the replaced database and files (empty when nothing was
	// replaced); remove it once the restored server is healthy.
	Aside string
	// Objects is the number of files restored.
	Objects int
}

// Restore replaces the embedded database and the files with an archive's. Nothing current is
// touched until the whole archive is staged and verified (checksums, trailer, format, schema
// versions, SQLite integrity check, every file row's file present). The replaced database and
// filesystem objects are moved into "svc-replaced-<time>" beside the database. A server
// holding the database's lock file (a running svc) makes it fail with ErrServerRunning first.
func Restore(ctx context.Context, o RestoreOptions) (*RestoreResult, error) {
	// Staging and the set-aside directory go beside what is replaced; a restore that replaces
	// neither a database file nor a filesystem root (files into an object store only) stages
	// in the system's temporary directory.
	base := os.TempDir()
	if p := orDefault(o.DatabasePath, o.StorageRoot); p != "" {
		base = filepath.Dir(p)
	}
	if o.DatabasePath != "" {
		l, err := lockDir(o.DatabasePath)
		if err != nil {
			return nil, err
		}
		defer l.release()
	}
	stamp := o.Now().UTC().Format("20060102T150405Z")
	staging := filepath.Join(base, ".svc-restore-"+stamp)
	if err := os.MkdirAll(staging, 0o750); err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging)
	m, staged, err := stage(ctx, o, staging)
	if err != nil {
		return nil, err
	}
	res := &RestoreResult{Manifest: m, Objects: staged}
	if err := checkStaged(ctx, m, staging, o); err != nil {
		return nil, err
	}
	if res.Aside, err = swap(o, staging, filepath.Join(base, "svc-replaced-"+stamp), m); err != nil {
		return nil, err
	}
	if o.StorageRoot == "" && o.Objects != nil {
		if res.Objects, err = putObjects(ctx, o); err != nil {
			return res, fmt.Errorf("backup: the database is restored but writing the files failed (run the restore again): %w", err)
		}
	}
	return res, nil
}

// stage reads the archive into staging: the database file, and the objects when they go to a
// filesystem root. It answers the verified manifest.
func stage(ctx context.Context, o RestoreOptions, staging string) (*Manifest, int, error) {
	rc, err := o.Open(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer rc.Close()
	var objects ObjectStore
	if o.StorageRoot != "" && o.StageObjects != nil {
		if objects, err = o.StageObjects(filepath.Join(staging, "storage")); err != nil {
			return nil, 0, err
		}
	}
	n := 0
	m, err := readArchive(rc, o.Key, func(e Entry, r io.Reader) error {
		switch {
		case e.Kind == KindDatabase:
			return writeFile(filepath.Join(staging, "database.sqlite"), r)
		case objects != nil:
			n++
			return objects.Put(ctx, e.Key, r, e.Size)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if err := checkVersions(m, o.Known); err != nil {
		return nil, 0, err
	}
	if m.DatabaseIncluded && o.DatabasePath == "" {
		return nil, 0, fmt.Errorf("%w: the archive holds an embedded database, this server uses a database server", ErrArchiveCorrupt)
	}
	return m, n, nil
}

// checkStaged runs SQLite's integrity check on the staged database and checks that every file
// row it holds has its file in the archive (or in the manifest's missing list).
func checkStaged(ctx context.Context, m *Manifest, staging string, o RestoreOptions) error {
	if !m.DatabaseIncluded {
		return nil
	}
	d, err := db.OpenFile(ctx, "restore", filepath.Join(staging, "database.sqlite"))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.IntegrityCheck(ctx); err != nil {
		return fmt.Errorf("%w: %v", ErrArchiveCorrupt, err)
	}
	refs, err := referencedObjects(ctx, d)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, e := range m.Entries {
		have[e.Key] = e.Kind == KindFile
	}
	for _, k := range m.Missing {
		have[k] = true
	}
	for _, r := range refs {
		if !have[r.Key] {
			return fmt.Errorf("%w: file %s is referenced but not in the archive", ErrArchiveCorrupt, r.Key)
		}
	}
	return d.Close()
}

// swap moves the current database (with its -wal and -shm) and filesystem root aside and the
// staged ones in; a failure moves back what was moved.
func swap(o RestoreOptions, staging, aside string, m *Manifest) (string, error) {
	type move struct{ from, to string }
	var plan []move
	if m.DatabaseIncluded {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			plan = append(plan, move{o.DatabasePath + suffix, filepath.Join(aside, filepath.Base(o.DatabasePath)+suffix)})
		}
	}
	if o.StorageRoot != "" {
		plan = append(plan, move{o.StorageRoot, filepath.Join(aside, "storage")})
	}
	if err := os.MkdirAll(aside, 0o750); err != nil {
		return "", err
	}
	var done []move
	undo := func(err error) (string, error) {
		for i := len(done) - 1; i >= 0; i-- {
			_ = os.Rename(done[i].to, done[i].from)
		}
		_ = os.Remove(aside)
		return "", fmt.Errorf("backup: restore: %w (the current data was put back)", err)
	}
	for _, mv := range plan {
		if err := os.Rename(mv.from, mv.to); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return undo(err)
		}
		done = append(done, mv)
	}
	var in []move
	if m.DatabaseIncluded {
		in = append(in, move{filepath.Join(staging, "database.sqlite"), o.DatabasePath})
	}
	if o.StorageRoot != "" {
		if err := os.MkdirAll(filepath.Join(staging, "storage"), 0o750); err != nil {
			return undo(err)
		}
		in = append(in, move{filepath.Join(staging, "storage"), o.StorageRoot})
	}
	for _, mv := range in {
		if err := os.Rename(mv.from, mv.to); err != nil {
			return undo(err)
		}
		done = append(done, move{from: mv.to, to: mv.from})
	}
	if len(done) == len(in) {
		// Nothing existed before (a fresh machine): nothing was set aside.
		_ = os.Remove(aside)
		return "", nil
	}
	return aside, nil
}

// putObjects re-reads the (already verified) archive and writes its files to the backend.
func putObjects(ctx context.Context, o RestoreOptions) (int, error) {
	rc, err := o.Open(ctx)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	n := 0
	_, err = readArchive(rc, o.Key, func(e Entry, r io.Reader) error {
		if e.Kind != KindFile {
			return nil
		}
		n++
		return o.Objects.Put(ctx, e.Key, r, e.Size)
	})
	return n, err
}

func writeFile(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// Refusal turns a verification error into the /api error carrying its reason.
func Refusal(err error) error {
	for _, reason := range []error{ErrArchivePartial, ErrArchiveCorrupt, ErrArchiveTooNew, ErrWrongKey, ErrKeyRequired} {
		if errors.Is(err, reason) {
			return ErrArchiveInvalid.WithArgs("reason", strings.TrimPrefix(err.Error(), "backup: ")).Wrap(err)
		}
	}
	return err
}
