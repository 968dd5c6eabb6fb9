// Package memory is the in-process storage backend: objects and multipart sessions live in maps
// and are lost when the process ends. It is the default provider (svc.storage.provider omitted
// or "memory"), meant for development and tests; the storage module logs a warning when it is
// selected.
package memory

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
)

// PartSize is the part size of the memory backend (wire-core §7.1: 64 KiB).
const PartSize = 64 << 10

// Bucket is the bucket name reported for memory objects (wire-core §7.4).
const Bucket = "memory"

var _ backend.Backend = (*Memory)(nil)

// Memory is a backend.Backend in process memory. The zero value is not usable; call New.
type Memory struct {
	clock func() time.Time

	mu        sync.RWMutex
	objects   map[string]*object
	sessions  map[string]*session // by upload id
	transfers backend.Transfers   // the open transfer of each part: the newest wins
}

type object struct {
	data        []byte // never modified after it is stored
	etag        string
	contentType string
	modified    time.Time
}

type session struct {
	key         string
	contentType string
	parts       map[int]*object
}

// New returns an empty memory backend. clock stamps LastModified; nil means time.Now.
func New(clock func() time.Time) *Memory {
	if clock == nil {
		clock = time.Now
	}
	return &Memory{clock: clock, objects: map[string]*object{}, sessions: map[string]*session{}}
}

// Info implements backend.Backend.
func (m *Memory) Info() backend.Info {
	return backend.Info{Name: "memory", Bucket: Bucket, Multipart: true, PartSize: PartSize}
}

// Put implements backend.Backend.
func (m *Memory) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (backend.Object, error) {
	if err := backend.CheckKey(key); err != nil {
		return backend.Object{}, err
	}
	o, err := m.read(r, size)
	if err != nil {
		return backend.Object{}, err
	}
	o.contentType = contentType
	m.mu.Lock()
	m.objects[key] = o
	m.mu.Unlock()
	return o.info(key), nil
}

// read consumes r (exactly size bytes when size >= 0) into a new object.
func (m *Memory) read(r io.Reader, size int64) (*object, error) {
	if size >= 0 {
		r = backend.ExactReader(r, size)
	}
	var buf bytes.Buffer
	if size > 0 {
		buf.Grow(int(size))
	}
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, err
	}
	sum := md5.Sum(buf.Bytes())
	return &object{data: buf.Bytes(), etag: hex.EncodeToString(sum[:]), modified: m.clock().UTC()}, nil
}

func (o *object) info(key string) backend.Object {
	return backend.Object{
		Key: key, Size: int64(len(o.data)), ETag: o.etag,
		ContentType: o.contentType, LastModified: o.modified,
	}
}

// Get implements backend.Backend.
func (m *Memory) Get(ctx context.Context, key string, rng *backend.Range) (io.ReadCloser, backend.Object, error) {
	if err := backend.CheckKey(key); err != nil {
		return nil, backend.Object{}, err
	}
	m.mu.RLock()
	o, ok := m.objects[key]
	m.mu.RUnlock()
	if !ok {
		return nil, backend.Object{}, fmt.Errorf("%w: %s", backend.ErrNotFound, key)
	}
	data := o.data
	if rng != nil {
		if rng.Offset < 0 || rng.Length < 1 || rng.Offset+rng.Length > int64(len(data)) {
			return nil, backend.Object{}, fmt.Errorf("memory: range %d+%d outside object of %d bytes", rng.Offset, rng.Length, len(data))
		}
		data = data[rng.Offset : rng.Offset+rng.Length]
	}
	return io.NopCloser(bytes.NewReader(data)), o.info(key), nil
}

// Stat implements backend.Backend.
func (m *Memory) Stat(ctx context.Context, key string) (backend.Object, error) {
	if err := backend.CheckKey(key); err != nil {
		return backend.Object{}, err
	}
	m.mu.RLock()
	o, ok := m.objects[key]
	m.mu.RUnlock()
	if !ok {
		return backend.Object{}, fmt.Errorf("%w: %s", backend.ErrNotFound, key)
	}
	return o.info(key), nil
}

// Delete implements backend.Backend.
func (m *Memory) Delete(ctx context.Context, key string) error {
	if err := backend.CheckKey(key); err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.objects, key)
	m.mu.Unlock()
	return nil
}

// Copy implements backend.Backend. Objects are immutable, so the copy shares the bytes.
func (m *Memory) Copy(ctx context.Context, src, dst string) (backend.Object, error) {
	if err := backend.CheckKey(src); err != nil {
		return backend.Object{}, err
	}
	if err := backend.CheckKey(dst); err != nil {
		return backend.Object{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[src]
	if !ok {
		return backend.Object{}, fmt.Errorf("%w: %s", backend.ErrNotFound, src)
	}
	c := *o
	c.modified = m.clock().UTC()
	m.objects[dst] = &c
	return c.info(dst), nil
}

// InitMultipart implements backend.Backend.
func (m *Memory) InitMultipart(ctx context.Context, key, contentType string) (string, error) {
	if err := backend.CheckKey(key); err != nil {
		return "", err
	}
	id := rpc.NewID()
	m.mu.Lock()
	m.sessions[id] = &session{key: key, contentType: contentType, parts: map[int]*object{}}
	m.mu.Unlock()
	return id, nil
}

// PutPart implements backend.Backend. The part is read whole before the session is touched, so
// a failed read leaves the previous part in place. A part sent again while an earlier transfer of
// it is still being read supersedes that transfer (backend.Transfers): the earlier one answers
// backend.ErrSuperseded and cannot replace the newer part when its body finally ends.
func (m *Memory) PutPart(ctx context.Context, key, uploadID string, number int, r io.Reader, size int64) (backend.Part, error) {
	if err := backend.CheckKey(key); err != nil {
		return backend.Part{}, err
	}
	if number < 1 {
		return backend.Part{}, fmt.Errorf("memory: part number %d below 1", number)
	}
	if _, err := m.session(key, uploadID); err != nil {
		return backend.Part{}, err
	}
	ctx, t := m.transfers.Begin(ctx, uploadID, number)
	defer t.End()
	o, err := m.read(backend.ContextReader(ctx, r), size)
	if err != nil {
		return backend.Part{}, t.Err(err)
	}
	err = t.Write(func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		s, ok := m.sessions[uploadID]
		if !ok || s.key != key {
			return fmt.Errorf("%w: %s", backend.ErrSessionNotFound, uploadID)
		}
		s.parts[number] = o
		return nil
	})
	if err != nil {
		return backend.Part{}, err
	}
	return backend.Part{Number: number, ETag: o.etag, Size: int64(len(o.data))}, nil
}

func (m *Memory) session(key, uploadID string) (*session, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.sessions[uploadID]
	if !ok || s.key != key {
		return nil, fmt.Errorf("%w: %s", backend.ErrSessionNotFound, uploadID)
	}
	return s, nil
}

// CompleteMultipart implements backend.Backend.
func (m *Memory) CompleteMultipart(ctx context.Context, key, uploadID string, parts []backend.Part) (backend.Object, error) {
	if err := backend.CheckKey(key); err != nil {
		return backend.Object{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[uploadID]
	if !ok || s.key != key {
		return backend.Object{}, fmt.Errorf("%w: %s", backend.ErrSessionNotFound, uploadID)
	}
	var total int
	for _, p := range parts {
		held, ok := s.parts[p.Number]
		if !ok || held.etag != p.ETag {
			return backend.Object{}, fmt.Errorf("%w: part %d", backend.ErrInvalidPart, p.Number)
		}
		total += len(held.data)
	}
	data := make([]byte, 0, total)
	for _, p := range parts {
		data = append(data, s.parts[p.Number].data...)
	}
	sum := md5.Sum(data)
	o := &object{data: data, etag: hex.EncodeToString(sum[:]), contentType: s.contentType, modified: m.clock().UTC()}
	m.objects[key] = o
	delete(m.sessions, uploadID)
	return o.info(key), nil
}

// AbortMultipart implements backend.Backend.
func (m *Memory) AbortMultipart(ctx context.Context, key, uploadID string) error {
	if err := backend.CheckKey(key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if uploadID != "" {
		if s, ok := m.sessions[uploadID]; ok && s.key == key {
			delete(m.sessions, uploadID)
		}
		return nil
	}
	for id, s := range m.sessions {
		if s.key == key {
			delete(m.sessions, id)
		}
	}
	return nil
}

// Sessions returns the number of open multipart sessions (tests check that none leak).
func (m *Memory) Sessions() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.sessions)
}
