package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/svc-framework/svc/config"
)

// destination is where archives live: a folder or the storage backend.
type destination interface {
	kind() string
	location(name string) string
	create(ctx context.Context, name string) (archiveSink, error)
	open(ctx context.Context, location string) (io.ReadCloser, int64, error)
	remove(ctx context.Context, location string) error
}

// archiveSink receives an archive's bytes; only commit makes it visible under its name.
type archiveSink interface {
	io.Writer
	commit() error
	abort()
}

func (s *Service) destination(req Request) (destination, error) {
	switch orDefault(req.Destination, s.cfg.Destination) {
	case config.BackupToFolder:
		return folder{dir: orDefault(req.Dir, s.cfg.Dir)}, nil
	case config.BackupToStorage:
		if s.opts.Objects == nil {
			return nil, errNoObjects
		}
		return bucket{objects: s.opts.Objects, prefix: s.cfg.StoragePrefix}, nil
	}
	return nil, fmt.Errorf("backup: destination %q: folder or storage", req.Destination)
}

// folder writes archives into a directory: to a hidden ".partial" name first, synced, then
// renamed, so an archive under its final name is always whole.
type folder struct{ dir string }

func (f folder) kind() string                { return config.BackupToFolder }
func (f folder) location(name string) string { return filepath.Join(f.dir, name) }

func (f folder) create(_ context.Context, name string) (archiveSink, error) {
	if err := os.MkdirAll(f.dir, 0o750); err != nil {
		return nil, fmt.Errorf("backup: folder: %w", err)
	}
	tmp := filepath.Join(f.dir, "."+name+".partial")
	file, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("backup: folder: %w", err)
	}
	return &folderSink{File: file, final: f.location(name)}, nil
}

func (f folder) open(_ context.Context, location string) (io.ReadCloser, int64, error) {
	file, err := os.Open(location)
	if err != nil {
		return nil, 0, err
	}
	fi, err := file.Stat()
	if err != nil {
		_ = file.Close()
		return nil, 0, err
	}
	return file, fi.Size(), nil
}

func (f folder) remove(_ context.Context, location string) error {
	if err := os.Remove(location); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

type folderSink struct {
	*os.File
	final string
}

func (s *folderSink) commit() error {
	if err := s.Sync(); err != nil {
		s.abort()
		return err
	}
	if err := s.Close(); err != nil {
		_ = os.Remove(s.Name())
		return err
	}
	if err := os.Rename(s.Name(), s.final); err != nil {
		_ = os.Remove(s.Name())
		return err
	}
	if d, err := os.Open(filepath.Dir(s.final)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

func (s *folderSink) abort() {
	_ = s.Close()
	_ = os.Remove(s.Name())
}

// bucket writes archives into the storage backend under a prefix; Put is atomic, and an
// aborted stream makes it fail, so no partial object appears.
type bucket struct {
	objects ObjectStore
	prefix  string
}

func (b bucket) kind() string                { return config.BackupToStorage }
func (b bucket) location(name string) string { return path.Join(b.prefix, name) }

func (b bucket) create(ctx context.Context, name string) (archiveSink, error) {
	pr, pw := io.Pipe()
	s := &bucketSink{PipeWriter: pw, done: make(chan error, 1)}
	go func() {
		err := b.objects.Put(ctx, b.location(name), pr, -1)
		_ = pr.CloseWithError(err)
		s.done <- err
	}()
	return s, nil
}

func (b bucket) open(ctx context.Context, location string) (io.ReadCloser, int64, error) {
	return b.objects.Open(ctx, location)
}

func (b bucket) remove(ctx context.Context, location string) error {
	return b.objects.Delete(ctx, location)
}

type bucketSink struct {
	*io.PipeWriter
	done chan error
}

func (s *bucketSink) commit() error {
	_ = s.Close()
	return <-s.done
}

func (s *bucketSink) abort() {
	_ = s.CloseWithError(errors.New("backup aborted"))
	<-s.done
}
