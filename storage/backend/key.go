package backend

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// MaxKeyLength is the longest key accepted, in bytes (the object_key column is 512 characters;
// keys are ASCII in practice, so bytes bound both).
const MaxKeyLength = 512

// ValidKey reports whether key is a safe object key: not empty, at most MaxKeyLength bytes,
// relative (no leading "/"), no empty segment ("a//b", trailing "/"), no "." segment, no ".."
// anywhere (also inside a segment, "a..b": wire-core §7.7 rejects any key containing ".."), no
// backslash, and no control character (below 0x20, or 0x7F). Such a key can be joined to a
// directory without escaping it and means the same thing on every backend. Keys the storage
// module plans never contain "..": a UUID and an extension of one dot and letters or digits.
func ValidKey(key string) bool {
	if key == "" || len(key) > MaxKeyLength || strings.Contains(key, "..") {
		return false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return false
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" || seg == "." {
			return false
		}
	}
	return true
}

// CheckKey returns nil for a valid key and ErrInvalidKey naming the key otherwise.
func CheckKey(key string) error {
	if ValidKey(key) {
		return nil
	}
	return fmt.Errorf("%w: %q", ErrInvalidKey, key)
}

// ExactReader returns a reader that yields exactly size bytes of r: when r ends early its Read
// returns ErrShortBody instead of io.EOF. Backends use it to honour a declared size.
func ExactReader(r io.Reader, size int64) io.Reader {
	return &exactReader{r: r, left: size}
}

type exactReader struct {
	r    io.Reader
	left int64
}

// Read implements io.Reader.
func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF {
		if e.left > 0 {
			return n, fmt.Errorf("%w: %d bytes missing", ErrShortBody, e.left)
		}
		return n, io.EOF
	}
	if err == nil && e.left == 0 {
		return n, io.EOF
	}
	return n, err
}

// CopyBufferSize is the buffer Copy fills before each write: large enough that a stream arriving
// in small reads (an HTTP multipart body) reaches the disk in few system calls, small enough to
// bound the memory of each in-flight part.
const CopyBufferSize = 256 << 10

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, CopyBufferSize); return &b }}

// Copy copies src to dst like io.Copy, but always through a pooled CopyBufferSize buffer that is
// filled before each write (io.Copy would hand the small reads of src straight to dst). It is
// the only copy loop of the backends, so the memory of an in-flight part is one buffer.
func Copy(dst io.Writer, src io.Reader) (int64, error) {
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	buf := *bp
	var total int64
	for {
		n, rerr := io.ReadFull(src, buf)
		if n > 0 {
			w, werr := dst.Write(buf[:n])
			total += int64(w)
			if werr != nil {
				return total, werr
			}
		}
		switch rerr {
		case nil:
			continue
		case io.EOF, io.ErrUnexpectedEOF:
			return total, nil
		default:
			return total, rerr
		}
	}
}
