package backup

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
)

// The encrypted envelope (doc.go, "Archive format"): a 24-byte header — the magic "SVCBAKE1", 8
// bytes of key id (the first 8 bytes of SHA-256 of the key, so a wrong key is named as such) and
// a random 8-byte nonce prefix — then chunks. A chunk is a 4-byte big-endian word (bit 31: last
// chunk; bits 0–30: plaintext length, at most chunkSize) followed by the AES-256-GCM sealing of
// that plaintext under the nonce prefix ‖ the 4-byte chunk counter, with the header and the
// word as additional data. The last chunk (possibly empty) is flagged, so a truncated stream,
// reordered, dropped or altered chunks all fail authentication.
const (
	cryptMagic   = "SVCBAKE1"
	cryptHeader  = 24
	chunkSize    = 1 << 20
	lastChunkBit = 1 << 31
)

// keyID is the key's public fingerprint stored in the header.
func keyID(key []byte) []byte {
	sum := sha256.Sum256(key)
	return sum[:8]
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// sealWriter encrypts what is written to it into w, chunk by chunk.
type sealWriter struct {
	w      io.Writer
	aead   cipher.AEAD
	header []byte
	buf    []byte
	out    []byte
	n      uint32
}

// newSealWriter writes the header to w and returns the chunk writer; Close seals the last chunk.
func newSealWriter(w io.Writer, key []byte) (*sealWriter, error) {
	aead, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	h := make([]byte, cryptHeader)
	copy(h, cryptMagic)
	copy(h[8:], keyID(key))
	if _, err := rand.Read(h[16:]); err != nil {
		return nil, err
	}
	if _, err := w.Write(h); err != nil {
		return nil, err
	}
	return &sealWriter{w: w, aead: aead, header: h, buf: make([]byte, 0, chunkSize),
		out: make([]byte, 4, 4+chunkSize+aead.Overhead())}, nil
}

func (s *sealWriter) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		n := min(len(p), chunkSize-len(s.buf))
		s.buf = append(s.buf, p[:n]...)
		p = p[n:]
		if len(s.buf) == chunkSize {
			if err := s.flush(false); err != nil {
				return total - len(p), err
			}
		}
	}
	return total, nil
}

func (s *sealWriter) flush(last bool) error {
	word := uint32(len(s.buf))
	if last {
		word |= lastChunkBit
	}
	binary.BigEndian.PutUint32(s.out[:4], word)
	sealed := s.aead.Seal(s.out[:4], s.nonce(), s.buf, s.aad(s.out[:4]))
	s.n++
	s.buf = s.buf[:0]
	_, err := s.w.Write(sealed)
	return err
}

func (s *sealWriter) nonce() []byte {
	n := make([]byte, 12)
	copy(n, s.header[16:24])
	binary.BigEndian.PutUint32(n[8:], s.n)
	return n
}

func (s *sealWriter) aad(word []byte) []byte {
	return append(append(make([]byte, 0, cryptHeader+4), s.header...), word...)
}

// Close seals the buffered bytes as the last chunk; it does not close the underlying writer.
func (s *sealWriter) Close() error { return s.flush(true) }

// openReader decrypts a sealWriter stream. It answers ErrArchiveCorrupt for any failed
// authentication and for a stream that ends before its last chunk.
type openReader struct {
	r      io.Reader
	aead   cipher.AEAD
	header []byte
	plain  []byte
	in     []byte
	n      uint32
	done   bool
}

// newOpenReader reads the header from r (its magic already checked by the caller, who passes
// the header bytes read so far in head).
func newOpenReader(r io.Reader, key []byte) (*openReader, error) {
	h := make([]byte, cryptHeader)
	if _, err := io.ReadFull(r, h); err != nil {
		return nil, fmt.Errorf("%w: short encryption header", ErrArchiveCorrupt)
	}
	if string(h[:8]) != cryptMagic {
		return nil, fmt.Errorf("%w: not an encrypted archive", ErrArchiveCorrupt)
	}
	if len(key) == 0 {
		return nil, ErrKeyRequired
	}
	if string(h[8:16]) != string(keyID(key)) {
		return nil, ErrWrongKey
	}
	aead, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	return &openReader{r: r, aead: aead, header: h, in: make([]byte, 4+chunkSize+aead.Overhead())}, nil
}

func (o *openReader) Read(p []byte) (int, error) {
	for len(o.plain) == 0 {
		if o.done {
			return 0, io.EOF
		}
		if err := o.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, o.plain)
	o.plain = o.plain[n:]
	return n, nil
}

func (o *openReader) next() error {
	if _, err := io.ReadFull(o.r, o.in[:4]); err != nil {
		return fmt.Errorf("%w: the encrypted stream ends before its last chunk", ErrArchiveCorrupt)
	}
	word := binary.BigEndian.Uint32(o.in[:4])
	size := int(word &^ lastChunkBit)
	if size > chunkSize {
		return fmt.Errorf("%w: chunk %d too large", ErrArchiveCorrupt, o.n)
	}
	sealed := o.in[4 : 4+size+o.aead.Overhead()]
	if _, err := io.ReadFull(o.r, sealed); err != nil {
		return fmt.Errorf("%w: the encrypted stream ends inside chunk %d", ErrArchiveCorrupt, o.n)
	}
	nonce := make([]byte, 12)
	copy(nonce, o.header[16:24])
	binary.BigEndian.PutUint32(nonce[8:], o.n)
	aad := append(append(make([]byte, 0, cryptHeader+4), o.header...), o.in[:4]...)
	plain, err := o.aead.Open(sealed[:0], nonce, sealed, aad)
	if err != nil {
		return fmt.Errorf("%w: chunk %d fails authentication", ErrArchiveCorrupt, o.n)
	}
	o.n++
	o.plain = plain
	if word&lastChunkBit != 0 {
		o.done = true
		var extra [1]byte
		if n, _ := o.r.Read(extra[:]); n > 0 {
			return fmt.Errorf("%w: bytes after the last chunk", ErrArchiveCorrupt)
		}
	}
	return nil
}
