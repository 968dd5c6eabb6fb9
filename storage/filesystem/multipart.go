package filesystem

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/google/uuid"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
)

// A session is a directory in the multipart area holding:
//
//	data     the object being assembled: part N is written in place at (N-1)·PartSize, so
//	         completion only truncates and renames it, never copies it;
//	part-N   a small record of part N ("<etag> <size>"), written after the part's bytes and
//	         removed before they are overwritten, so a record always describes bytes that are
//	         fully in data.
const dataName = "data"

// errNotDir is returned when a path component is a file, which for a lookup means "not found".
var errNotDir = syscall.ENOTDIR

// sessionDir returns the directory of a session after checking that the id is one this backend
// made for key: "<keyhash>-<uuid>", nothing else (so it cannot name another path).
func (f *Filesystem) sessionDir(key, uploadID string) (string, error) {
	h, id, ok := strings.Cut(uploadID, "-")
	if !ok || h != keyHash(key) || uuid.Validate(id) != nil || strings.ContainsAny(id, "/\\") {
		return "", fmt.Errorf("%w: %q", backend.ErrSessionNotFound, uploadID)
	}
	return path.Join(multipartDir, uploadID), nil
}

func partName(dir string, number int) string {
	return path.Join(dir, "part-"+strconv.Itoa(number))
}

// InitMultipart implements backend.Backend: it creates the session directory and its empty data
// file.
func (f *Filesystem) InitMultipart(ctx context.Context, key, contentType string) (string, error) {
	if err := f.checkKey(key); err != nil {
		return "", err
	}
	id := keyHash(key) + "-" + rpc.NewID()
	dir := path.Join(multipartDir, id)
	if err := f.root.Mkdir(dir, dirPerm); err != nil {
		return "", fmt.Errorf("filesystem: create session: %w", err)
	}
	if err := f.root.WriteFile(path.Join(dir, dataName), nil, filePerm); err != nil {
		_ = f.root.RemoveAll(dir)
		return "", fmt.Errorf("filesystem: create session: %w", err)
	}
	return id, nil
}

// PutPart implements backend.Backend. Parts other than the last must be exactly PartSize bytes
// (the storage module guarantees it): part N goes to offset (N-1)·PartSize of the session's data
// file. Its record is removed first and written again only once every byte is in place, so a
// failed write leaves no part under that number. With Options.Sync the data file is synced
// before the record is written, so a record that survives a power loss never stands for bytes
// that did not (a record lost instead only makes the client send the part again).
//
// A part sent again while an earlier transfer of it is still open (a client whose connection
// stalled mid-part, and the same part re-sent by its uploader) supersedes that transfer at once
// (backend.Transfers): the earlier one answers backend.ErrSuperseded, writes nothing more and
// no record, and the newer one never waits on the stalled body.
func (f *Filesystem) PutPart(ctx context.Context, key, uploadID string, number int, r io.Reader, size int64) (backend.Part, error) {
	if err := f.checkKey(key); err != nil {
		return backend.Part{}, err
	}
	if number < 1 {
		return backend.Part{}, fmt.Errorf("filesystem: part number %d below 1", number)
	}
	if size > f.opts.PartSize {
		return backend.Part{}, fmt.Errorf("filesystem: part of %d bytes above the part size %d", size, f.opts.PartSize)
	}
	dir, err := f.sessionDir(key, uploadID)
	if err != nil {
		return backend.Part{}, err
	}
	ctx, t := f.transfers.Begin(ctx, uploadID, number)
	defer t.End()
	err = t.Write(func() error {
		if err := f.root.Remove(partName(dir, number)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return sessionGone(err, uploadID)
		}
		return nil
	})
	if err != nil {
		return backend.Part{}, err
	}
	data, err := f.root.OpenFile(path.Join(dir, dataName), os.O_WRONLY, filePerm)
	if err != nil {
		return backend.Part{}, sessionGone(err, uploadID)
	}
	if size >= 0 {
		r = backend.ExactReader(r, size)
	}
	// At most PartSize bytes: more would overwrite the next part.
	limited := io.LimitReader(backend.ContextReader(ctx, r), f.opts.PartSize+1)
	w := transferWriter{t, io.NewOffsetWriter(data, int64(number-1)*f.opts.PartSize)}
	n, err := backend.Copy(w, limited)
	if err == nil && f.opts.Sync {
		err = data.Sync()
	}
	if cerr := data.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > f.opts.PartSize {
		err = fmt.Errorf("filesystem: part %d is larger than the part size %d", number, f.opts.PartSize)
	}
	if err != nil {
		return backend.Part{}, t.Err(err)
	}
	part := backend.Part{Number: number, ETag: newETag(), Size: n}
	err = t.Write(func() error { return f.writeRecord(dir, part) })
	switch {
	case errors.Is(err, backend.ErrSuperseded):
		return backend.Part{}, err
	case err != nil:
		return backend.Part{}, sessionGone(err, uploadID)
	}
	return part, nil
}

// transferWriter writes a part's bytes only while its transfer is the part's current one, one
// chunk at a time under the part's lock (backend.Transfers): the body is read outside the lock,
// so a stalled client holds nothing another transfer of the part waits for.
type transferWriter struct {
	t *backend.Transfer
	w io.Writer
}

// Write implements io.Writer.
func (tw transferWriter) Write(p []byte) (n int, err error) {
	err = tw.t.Write(func() error {
		n, err = tw.w.Write(p)
		return err
	})
	return n, err
}

// newETag identifies one write of a part.
func newETag() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// writeRecord stores the record of part p atomically (temporary file, rename).
func (f *Filesystem) writeRecord(dir string, p backend.Part) error {
	tmp := path.Join(dir, "tmp-"+rpc.NewID())
	if err := f.root.WriteFile(tmp, []byte(p.ETag+" "+strconv.FormatInt(p.Size, 10)), filePerm); err != nil {
		return err
	}
	if err := f.root.Rename(tmp, partName(dir, p.Number)); err != nil {
		_ = f.root.Remove(tmp)
		return err
	}
	return nil
}

// readRecord loads the record of part number, or reports it missing.
func (f *Filesystem) readRecord(dir string, number int) (backend.Part, bool, error) {
	b, err := f.root.ReadFile(partName(dir, number))
	if errors.Is(err, fs.ErrNotExist) {
		return backend.Part{}, false, nil
	}
	if err != nil {
		return backend.Part{}, false, err
	}
	tag, sizeText, ok := strings.Cut(string(b), " ")
	size, perr := strconv.ParseInt(sizeText, 10, 64)
	if !ok || perr != nil {
		return backend.Part{}, false, nil // a torn record counts as missing
	}
	return backend.Part{Number: number, ETag: tag, Size: size}, true, nil
}

// sessionGone maps a missing session directory to backend.ErrSessionNotFound.
func sessionGone(err error, uploadID string) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
		return fmt.Errorf("%w: %s", backend.ErrSessionNotFound, uploadID)
	}
	return fmt.Errorf("filesystem: session %s: %w", uploadID, err)
}
