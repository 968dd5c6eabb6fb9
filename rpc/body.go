package rpc

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
)

// Values of the X-Body-Encoding header (wire-core §6).
const (
	// HeaderBodyEncoding names the request and response header of both body transports.
	HeaderBodyEncoding = "X-Body-Encoding"
	// EncodingBase64 is the optional request encoding: standard padded base64 of the JSON.
	EncodingBase64 = "base64"
	// EncodingGzipBase64 is the optional request encoding: base64 of the gzip of the JSON.
	EncodingGzipBase64 = "gzip+base64"
	// EncodingAESGCM is the protected transport with AES-GCM.
	EncodingAESGCM = "aes-gcm+base64"
	// EncodingSM4GCM is the protected transport with SM4-GCM.
	EncodingSM4GCM = "sm4-gcm+base64"
)

// contentKind is the request media type as far as /api cares (wire-core §1.2).
type contentKind uint8

const (
	kindOther contentKind = iota
	kindJSON
	kindMultipart
)

// classify reads the media type of a Content-Type value without allocating: parameters such as
// charset or boundary are ignored, the type is compared case-insensitively.
func classify(ct string) contentKind {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	switch {
	case strings.EqualFold(ct, "application/json"):
		return kindJSON
	case strings.EqualFold(ct, "multipart/form-data"):
		return kindMultipart
	}
	return kindOther
}

// readBody is step 1. A declared length over the limit answers 413 at once. A JSON body is read
// whole (readAll) and its X-Body-Encoding undone; a multipart body is only wrapped in a limit,
// to be streamed by step 2; other bodies are left for step 2 to refuse.
func (e *Engine) readBody(q *request) error {
	q.kind = classify(q.r.Header.Get("Content-Type"))
	if q.r.ContentLength > e.cfg.BodyLimit {
		q.w.Header()["Connection"] = connectionClose
		return ErrBodyTooLarge
	}
	switch q.kind {
	case kindMultipart:
		q.limited = &limitBody{r: q.r.Body, n: e.cfg.BodyLimit}
		return nil
	case kindJSON:
		raw, err := readAll(q.r.Body, q.r.ContentLength, e.cfg.BodyLimit)
		if err != nil {
			if errors.Is(err, ErrBodyTooLarge) {
				q.w.Header()["Connection"] = connectionClose
			}
			return err
		}
		q.body, err = e.decodeBody(raw, strings.TrimSpace(q.r.Header.Get(HeaderBodyEncoding)))
		return err
	}
	return nil
}

var connectionClose = []string{"close"}

// eagerBody: a declared length up to this is allocated at once; a larger one grows with the data
// that actually arrives, so a client cannot make the server reserve the whole limit up front.
const eagerBody = 64 << 10

// readAll reads a body of declared length n (-1 when unknown) that may not exceed limit.
func readAll(r io.Reader, n, limit int64) ([]byte, error) {
	if r == nil || n == 0 {
		return nil, nil
	}
	if n > 0 && n <= eagerBody {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, bodyReadError(err)
		}
		return buf, nil
	}
	size := 512
	if n > 0 {
		size = eagerBody
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if int64(len(buf)) > limit {
			return nil, ErrBodyTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, bodyReadError(err)
		}
	}
}

// bodyReadError maps a failed read: an outer http.MaxBytesReader means 413, anything else (the
// client went away, a truncated body) 400.
func bodyReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return ErrBodyTooLarge.Wrap(err)
	}
	return ErrInvalidRequestBody.Wrap(err)
}

// decodeBody undoes the transport encoding of a JSON body (wire-core §6). With the protected
// transport on, a non-empty body must carry exactly the configured cipher marker; otherwise
// base64 and gzip+base64 are accepted and no header means a plain body.
func (e *Engine) decodeBody(raw []byte, encoding string) ([]byte, error) {
	if e.protect != nil {
		if len(raw) == 0 {
			return raw, nil
		}
		switch encoding {
		case "":
			return nil, ErrBodyEncodingRequired
		case e.protect.Encoding():
		default:
			return nil, ErrUnsupportedBodyEncoding
		}
		plain, err := e.protect.Open(raw)
		if err != nil {
			return nil, ErrBodyDecodeFailed.Wrap(err)
		}
		if int64(len(plain)) > e.cfg.BodyLimit {
			return nil, ErrBodyTooLarge
		}
		return plain, nil
	}
	switch encoding {
	case "":
		return raw, nil
	case EncodingBase64:
		return decodeBase64(raw)
	case EncodingGzipBase64:
		zipped, err := decodeBase64(raw)
		if err != nil {
			return nil, err
		}
		return gunzip(zipped, e.cfg.BodyLimit)
	}
	return nil, ErrUnsupportedBodyEncoding
}

// decodeBase64 decodes standard padded base64; surrounding whitespace and line breaks are
// tolerated. Its output is never longer than its input, so it cannot exceed the body limit.
func decodeBase64(raw []byte) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	out := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
	n, err := base64.StdEncoding.Decode(out, raw)
	if err != nil {
		return nil, ErrBodyDecodeFailed.Wrap(err)
	}
	return out[:n], nil
}

// gunzip inflates at most limit bytes: the reader is cut one byte past the limit, so a gzip bomb
// costs limit bytes of memory and answers 413.
func gunzip(zipped []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		return nil, ErrBodyDecodeFailed.Wrap(err)
	}
	defer zr.Close()
	var out bytes.Buffer
	n, err := out.ReadFrom(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, ErrBodyDecodeFailed.Wrap(err)
	}
	if n > limit {
		return nil, ErrBodyTooLarge
	}
	return out.Bytes(), nil
}

// limitBody bounds a streamed (multipart) body. Reading past the limit fails with
// ErrBodyTooLarge and records it, so the engine answers 413 whatever the handler makes of the
// error.
type limitBody struct {
	r        io.Reader
	n        int64 // bytes still allowed
	exceeded bool
}

// Read reads within the limit; past it, it fails with ErrBodyTooLarge and records it.
func (l *limitBody) Read(p []byte) (int, error) {
	if l.exceeded {
		return 0, ErrBodyTooLarge
	}
	if l.r == nil {
		return 0, io.EOF
	}
	if l.n <= 0 {
		// Probe one byte: a body of exactly the limit ends here with EOF.
		var one [1]byte
		m, err := l.r.Read(one[:])
		if m > 0 {
			l.exceeded = true
			return 0, ErrBodyTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	m, err := l.r.Read(p)
	l.n -= int64(m)
	return m, err
}
