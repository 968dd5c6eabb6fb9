// Package filesystem is the storage backend that keeps objects as files under one root
// directory (svc.storage.filesystem.root, default ./storage).
//
// Layout under the root:
//
//	<key>                                   objects, e.g. priv/2026/07/10/<uuid>.pdf
//	.svc-tmp/<random>                       files being written by Put and Copy
//	.svc-multipart/<keyhash>-<uuid>/data    the object of an open multipart session, its parts
//	                                        streamed in place at (N-1)·PartSize
//	.svc-multipart/<keyhash>-<uuid>/part-N  the record (ETag, size) of part N
//
// Every object appears by an atomic rename, so readers see either nothing or the whole object.
// A multipart upload is assembled while it arrives: each part streams from the request straight
// to its place in the session's data file, and completion only checks the records, cuts the file
// to size and renames it to the key. No byte is copied twice: an earlier design that wrote
// part files and concatenated them at completion spent as long concatenating as `cp` takes to
// copy the object (see docs/modules/storage.md, "Benchmark").
//
// Durability: objects survive a crash of the process at any point (every step is a rename).
// They survive a power loss only with Options.Sync (svc.storage.filesystem.sync), which syncs
// each part before its record is written and each object and the directories above it before it
// becomes visible, at the cost of waiting for the disk (0.3 s per 256 MiB on the benchmark
// machine, three times the upload itself). It is off by default, like a plain `cp`.
//
// All access goes through an os.Root, so no key, upload id or symbolic link can reach outside
// the root; keys are also checked with backend.ValidKey, and keys whose first segment starts with
// ".svc" are refused because that namespace is the backend's own.
package filesystem

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"

	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
)

// PartSize is the part size of the filesystem backend (wire-core §7.1: 4 MiB).
const PartSize = 4 << 20

// Bucket is the bucket name reported for filesystem objects (wire-core §7.4).
const Bucket = "filesystem"

const (
	tmpDir       = ".svc-tmp"
	multipartDir = ".svc-multipart"
	reserved     = ".svc"
	keyHashLen   = 16 // hex characters of sha256(key) that prefix a session id
	dirPerm      = 0o750
	filePerm     = 0o640
)

var (
	_ backend.Backend = (*Filesystem)(nil)
	_ backend.Starter = (*Filesystem)(nil)
)

// Options configure a Filesystem.
type Options struct {
	// PartSize overrides the part size (default PartSize).
	PartSize int64
	// Sync makes every part durable before it is acknowledged and every object durable before
	// it becomes visible: the data, then the record or the rename's directories, are synced.
	// Without it (the default) objects survive a crash of the process but not a power loss, like
	// files written by cp.
	Sync bool
}

// Filesystem is a backend.Backend over a directory. Build it with New (no I/O) and call Start
// before use, or use Open.
type Filesystem struct {
	dir  string
	opts Options

	once      sync.Once
	root      *os.Root
	err       error
	transfers backend.Transfers // the open transfer of each part: the newest wins
}

// New returns a backend rooted at dir. It does no I/O: Start creates the directory.
func New(dir string, opts Options) *Filesystem {
	if opts.PartSize <= 0 {
		opts.PartSize = PartSize
	}
	return &Filesystem{dir: dir, opts: opts}
}

// Open is New followed by Start.
func Open(ctx context.Context, dir string, opts Options) (*Filesystem, error) {
	f := New(dir, opts)
	if err := f.Start(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// Start creates the root with its temporary and multipart areas and opens it. It is safe to
// call more than once.
func (f *Filesystem) Start(ctx context.Context) error {
	f.once.Do(func() {
		if err := os.MkdirAll(f.dir, dirPerm); err != nil {
			f.err = fmt.Errorf("filesystem: create root %s: %w", f.dir, err)
			return
		}
		root, err := os.OpenRoot(f.dir)
		if err != nil {
			f.err = fmt.Errorf("filesystem: open root %s: %w", f.dir, err)
			return
		}
		for _, d := range []string{tmpDir, multipartDir} {
			if err := root.MkdirAll(d, dirPerm); err != nil {
				_ = root.Close()
				f.err = fmt.Errorf("filesystem: create %s/%s: %w", f.dir, d, err)
				return
			}
		}
		f.root = root
	})
	return f.err
}

// Close releases the root directory handle.
func (f *Filesystem) Close() error {
	if f.root == nil {
		return nil
	}
	return f.root.Close()
}

// Info implements backend.Backend.
func (f *Filesystem) Info() backend.Info {
	return backend.Info{Name: "filesystem", Bucket: Bucket, Multipart: true, PartSize: f.opts.PartSize}
}

// checkKey validates key and makes sure the backend is started.
func (f *Filesystem) checkKey(key string) error {
	if f.root == nil {
		return errors.New("filesystem: backend not started")
	}
	if err := backend.CheckKey(key); err != nil {
		return err
	}
	if strings.HasPrefix(key, reserved) {
		return fmt.Errorf("%w: %q is in the reserved namespace %s*", backend.ErrInvalidKey, key, reserved)
	}
	return nil
}

// etag derives a version identifier from the file's size, modification time and inode: writing a
// file always goes through a new file renamed into place, so a new version gets a new inode and
// mtime (file timestamps are coarse, a few milliseconds, so the inode is what tells two quick
// writes of the same size apart). Hashing the content instead would cost a pass over every byte.
func etag(fi fs.FileInfo) string {
	return fmt.Sprintf("%x-%x-%x", fi.Size(), fi.ModTime().UnixNano(), inode(fi))
}

func object(key string, fi fs.FileInfo) backend.Object {
	return backend.Object{Key: key, Size: fi.Size(), ETag: etag(fi), LastModified: fi.ModTime().UTC()}
}

// Put implements backend.Backend. The content type is not stored: the storage module keeps it
// in its file registry.
func (f *Filesystem) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (backend.Object, error) {
	if err := f.checkKey(key); err != nil {
		return backend.Object{}, err
	}
	if size >= 0 {
		r = backend.ExactReader(r, size)
	}
	tmp, err := f.writeTemp(path.Join(tmpDir, rpc.NewID()), func(w *os.File) error {
		_, err := backend.Copy(w, backend.ContextReader(ctx, r))
		return err
	})
	if err != nil {
		return backend.Object{}, err
	}
	return f.publish(tmp, key)
}

// writeTemp creates name exclusively, fills it with fill, syncs it with Options.Sync, and removes it
// again when anything fails.
func (f *Filesystem) writeTemp(name string, fill func(*os.File) error) (string, error) {
	w, err := f.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return "", err
	}
	err = fill(w)
	if err == nil && f.opts.Sync {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = f.root.Remove(name)
		return "", err
	}
	return name, nil
}

// publish renames the finished file tmp to key, creating the key's directories.
func (f *Filesystem) publish(tmp, key string) (backend.Object, error) {
	if err := f.root.MkdirAll(path.Dir(key), dirPerm); err != nil {
		_ = f.root.Remove(tmp)
		return backend.Object{}, fmt.Errorf("filesystem: create directory of %s: %w", key, err)
	}
	if err := f.root.Rename(tmp, key); err != nil {
		_ = f.root.Remove(tmp)
		return backend.Object{}, fmt.Errorf("filesystem: publish %s: %w", key, err)
	}
	if f.opts.Sync {
		if err := f.syncDirs(path.Dir(key)); err != nil {
			return backend.Object{}, fmt.Errorf("filesystem: sync directory of %s: %w", key, err)
		}
	}
	return f.Stat(context.Background(), key)
}

// syncDirs syncs dir and each directory above it up to the root: the rename's entry is in dir,
// and MkdirAll may just have created dir and its parents, whose entries are one level up each.
func (f *Filesystem) syncDirs(dir string) error {
	for {
		if err := f.syncDir(dir); err != nil {
			return err
		}
		if dir == "." {
			return nil
		}
		dir = path.Dir(dir)
	}
}

// syncDir makes a rename into dir durable.
func (f *Filesystem) syncDir(dir string) error {
	d, err := f.root.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Get implements backend.Backend.
func (f *Filesystem) Get(ctx context.Context, key string, rng *backend.Range) (io.ReadCloser, backend.Object, error) {
	if err := f.checkKey(key); err != nil {
		return nil, backend.Object{}, err
	}
	file, err := f.root.Open(key)
	if err != nil {
		return nil, backend.Object{}, notFound(err, key)
	}
	fi, err := file.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		_ = file.Close()
		return nil, backend.Object{}, fmt.Errorf("%w: %s", backend.ErrNotFound, key)
	}
	if rng == nil {
		return file, object(key, fi), nil
	}
	if rng.Offset < 0 || rng.Length < 1 || rng.Offset+rng.Length > fi.Size() {
		_ = file.Close()
		return nil, backend.Object{}, fmt.Errorf("filesystem: range %d+%d outside object of %d bytes", rng.Offset, rng.Length, fi.Size())
	}
	return sectionReadCloser{io.NewSectionReader(file, rng.Offset, rng.Length), file}, object(key, fi), nil
}

type sectionReadCloser struct {
	io.Reader
	io.Closer
}

// Stat implements backend.Backend.
func (f *Filesystem) Stat(ctx context.Context, key string) (backend.Object, error) {
	if err := f.checkKey(key); err != nil {
		return backend.Object{}, err
	}
	fi, err := f.root.Stat(key)
	if err != nil {
		return backend.Object{}, notFound(err, key)
	}
	if !fi.Mode().IsRegular() {
		return backend.Object{}, fmt.Errorf("%w: %s", backend.ErrNotFound, key)
	}
	return object(key, fi), nil
}

// Delete implements backend.Backend. Empty directories are left in place: removing them would
// race with a concurrent Put into the same day's directory.
func (f *Filesystem) Delete(ctx context.Context, key string) error {
	if err := f.checkKey(key); err != nil {
		return err
	}
	if err := f.root.Remove(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("filesystem: delete %s: %w", key, err)
	}
	return nil
}

// Copy implements backend.Backend.
func (f *Filesystem) Copy(ctx context.Context, src, dst string) (backend.Object, error) {
	if err := f.checkKey(src); err != nil {
		return backend.Object{}, err
	}
	if err := f.checkKey(dst); err != nil {
		return backend.Object{}, err
	}
	in, err := f.root.Open(src)
	if err != nil {
		return backend.Object{}, notFound(err, src)
	}
	defer in.Close()
	tmp, err := f.writeTemp(path.Join(tmpDir, rpc.NewID()), func(w *os.File) error {
		_, err := w.ReadFrom(in) // copy_file_range on Linux
		return err
	})
	if err != nil {
		return backend.Object{}, err
	}
	return f.publish(tmp, dst)
}

// notFound maps a missing file to backend.ErrNotFound.
func notFound(err error, key string) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
		return fmt.Errorf("%w: %s", backend.ErrNotFound, key)
	}
	return fmt.Errorf("filesystem: %s: %w", key, err)
}

// keyHash is the session-id prefix of key, so every session of a key can be found again.
func keyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:keyHashLen]
}
