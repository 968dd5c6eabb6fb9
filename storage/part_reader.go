package storage

import (
	"errors"
	"io"
)

// Errors a partReader returns to the backend to stop a write; the service answers them with
// ErrUploadPartTooLarge and ErrUploadPartTooSmall.
var (
	errPartTooLarge = errors.New("storage: part larger than the part size")
	errPartTooSmall = errors.New("storage: part smaller than the part size")
)

// partReader streams one part from the request body to the backend and enforces its size
// without buffering it (spec §3: size equals partSize, the last part may be smaller):
//
//   - it never yields more than max bytes; once max bytes are through it reads one byte more,
//     and finding one fails the read with errPartTooLarge;
//   - when exact (every part but the last) an early end fails with errPartTooSmall; an empty
//     part fails so too.
//
// A backend that stops reading at the size it was told (a Content-Length) never asks for that
// extra byte, so check runs the same probe after the backend has written the part.
type partReader struct {
	r        io.Reader
	max      int64
	exact    bool
	n        int64
	probed   bool
	tooLarge bool
	tooSmall bool
}

func newPartReader(r io.Reader, max int64, exact bool) *partReader {
	return &partReader{r: r, max: max, exact: exact}
}

// Read implements io.Reader.
func (p *partReader) Read(b []byte) (int, error) {
	if p.tooLarge || p.tooSmall {
		return 0, p.violation()
	}
	if p.n >= p.max {
		return 0, p.probe()
	}
	if left := p.max - p.n; int64(len(b)) > left {
		b = b[:left]
	}
	k, err := p.r.Read(b)
	p.n += int64(k)
	if err == io.EOF {
		p.probed = true
		if p.n == 0 || (p.exact && p.n < p.max) {
			p.tooSmall = true
			return k, errPartTooSmall
		}
	}
	return k, err
}

// probe reads past max: any byte there makes the part too large.
func (p *partReader) probe() error {
	if p.probed {
		return io.EOF
	}
	p.probed = true
	var one [1]byte
	k, err := io.ReadFull(p.r, one[:])
	if k > 0 {
		p.tooLarge = true
		return errPartTooLarge
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return io.EOF
	}
	return err
}

func (p *partReader) violation() error {
	if p.tooLarge {
		return errPartTooLarge
	}
	return errPartTooSmall
}

// check runs after the backend returned and reports a size violation, or nil. When the backend
// wrote the part (written), the body must end where the backend stopped reading: check reads
// what is left to find out. When the backend failed, only what the reads already saw counts (the
// unread rest of the body says nothing about the part's size).
func (p *partReader) check(written bool) error {
	if written && !p.probed && !p.tooLarge && !p.tooSmall {
		p.probed = true
		var one [1]byte
		if k, _ := io.ReadFull(p.r, one[:]); k > 0 {
			p.tooLarge = true
		}
	}
	switch {
	case p.tooLarge:
		return ErrUploadPartTooLarge
	case p.tooSmall:
		return ErrUploadPartTooSmall
	}
	return nil
}
