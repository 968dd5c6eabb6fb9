package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/svc-framework/svc/storage/backend"
)

// CompleteMultipart implements backend.Backend. The parts are already in place in the session's
// data file, so completion checks the manifest against the part records (numbers 1..n, ETags,
// every part but the last exactly PartSize), cuts the file to the manifest's total (a last part
// re-sent shorter leaves stale bytes behind it), syncs it when Options.Sync is set, renames it to
// the key and removes the session. A crash before the rename leaves the session to complete
// again; after it, the object exists and the session answers ErrSessionNotFound, so the caller
// finds the object with Stat.
func (f *Filesystem) CompleteMultipart(ctx context.Context, key, uploadID string, parts []backend.Part) (backend.Object, error) {
	if err := f.checkKey(key); err != nil {
		return backend.Object{}, err
	}
	dir, err := f.sessionDir(key, uploadID)
	if err != nil {
		return backend.Object{}, err
	}
	data := path.Join(dir, dataName)
	if _, err := f.root.Stat(data); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Completed before, but the session directory outlived it: tidy up.
			_ = f.removeSession(dir)
		}
		return backend.Object{}, sessionGone(err, uploadID)
	}
	total, err := f.checkManifest(dir, parts)
	if err != nil {
		return backend.Object{}, err
	}
	if err := ctx.Err(); err != nil {
		return backend.Object{}, err
	}
	if err := f.finish(data, total); err != nil {
		return backend.Object{}, sessionGone(err, uploadID)
	}
	obj, err := f.publish(data, key)
	if err != nil {
		return backend.Object{}, sessionGone(err, uploadID)
	}
	if err := f.removeSession(dir); err != nil {
		return backend.Object{}, err
	}
	return obj, nil
}

// checkManifest compares parts with the session's records and returns the object size.
func (f *Filesystem) checkManifest(dir string, parts []backend.Part) (int64, error) {
	if len(parts) == 0 {
		return 0, fmt.Errorf("%w: empty manifest", backend.ErrInvalidPart)
	}
	var total int64
	for i, p := range parts {
		held, ok, err := f.readRecord(dir, p.Number)
		if err != nil {
			return 0, err
		}
		last := i == len(parts)-1
		switch {
		case p.Number != i+1:
			return 0, fmt.Errorf("%w: part %d out of sequence", backend.ErrInvalidPart, p.Number)
		case !ok || held.ETag != p.ETag:
			return 0, fmt.Errorf("%w: part %d missing or replaced", backend.ErrInvalidPart, p.Number)
		case !last && held.Size != f.opts.PartSize:
			return 0, fmt.Errorf("%w: part %d has %d bytes, not the part size", backend.ErrInvalidPart, p.Number, held.Size)
		}
		total += held.Size
	}
	return total, nil
}

// finish cuts the data file to size and syncs it when asked to.
func (f *Filesystem) finish(name string, size int64) error {
	file, err := f.root.OpenFile(name, os.O_RDWR, filePerm)
	if err != nil {
		return err
	}
	err = file.Truncate(size)
	if err == nil && f.opts.Sync {
		err = file.Sync()
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

// AbortMultipart implements backend.Backend. With an empty uploadID every session of key is
// removed.
func (f *Filesystem) AbortMultipart(ctx context.Context, key, uploadID string) error {
	if err := f.checkKey(key); err != nil {
		return err
	}
	if uploadID != "" {
		dir, err := f.sessionDir(key, uploadID)
		if err != nil {
			return nil // not an id of this key: nothing of ours to remove
		}
		return f.removeSession(dir)
	}
	entries, err := fs.ReadDir(f.root.FS(), multipartDir)
	if err != nil {
		return fmt.Errorf("filesystem: list sessions: %w", err)
	}
	prefix := keyHash(key) + "-"
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
			if err := f.removeSession(path.Join(multipartDir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *Filesystem) removeSession(dir string) error {
	if err := f.root.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("filesystem: remove session %s: %w", path.Base(dir), err)
	}
	return nil
}

// Sessions returns the number of open multipart sessions (tests check that none leak).
func (f *Filesystem) Sessions() (int, error) {
	entries, err := fs.ReadDir(f.root.FS(), multipartDir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() {
			n++
		}
	}
	return n, nil
}
