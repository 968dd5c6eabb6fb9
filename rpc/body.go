package rpc

import (
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/netip"
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
// whole into memory paid from the body budget and its X-Body-Encoding undone while it streams in
// (decodeBody); a multipart body is only wrapped in a limit, to be streamed by step 2; other
// bodies are left for step 2 to refuse.
func (e *Engine) readBody(q *request) error {
	q.kind = classify(q.r.Header.Get("Content-Type"))
	if q.r.ContentLength > e.cfg.BodyLimit {
		return ErrBodyTooLarge
	}
	switch q.kind {
	case kindMultipart:
		q.limited = &limitBody{r: q.r.Body, n: e.cfg.BodyLimit}
		return nil
	case kindJSON:
		var err error
		q.mem.holding(bodyHolder(q.r))
		q.body, err = e.decodeBody(q, strings.TrimSpace(q.r.Header.Get(HeaderBodyEncoding)))
		q.mem.holding(nil)
		return err
	}
	return nil
}

// bodyFailed adds the headers of a body refusal to h: past the limit or out of budget the rest
// of the body is not worth reading, so the connection closes; a busy server asks for a retry in
// 1s.
func bodyFailed(h http.Header, err error) {
	switch {
	case errors.Is(err, ErrServiceBusy):
		h["Retry-After"] = retryAfterOne
		h["Connection"] = connectionClose
	case errors.Is(err, ErrBodyTooLarge):
		h["Connection"] = connectionClose
	}
}

var (
	connectionClose = []string{"close"}
	retryAfterOne   = []string{"1"}
)

// gzipState is what the budget is charged for a gzip body's inflater, once its header arrived.
const gzipState = 64 << 10

// readAll reads a plain JSON body of declared length n (-1 when unknown), at most limit bytes,
// into the request's budgeted memory (bodyMemory.readAll).
func (e *Engine) readAll(q *request, r io.Reader, n, limit int64) ([]byte, error) {
	return q.mem.readAll(q.ctx, r, n, limit, 0, e.cfg.BodyMemoryWait)
}

// bodyHolder is r's body as a BodyHolder, or nil.
func bodyHolder(r *http.Request) BodyHolder {
	h, _ := r.Body.(BodyHolder)
	return h
}

// requestClientIP is the client address of r: RequestInfo's (the outer middleware's, behind
// trusted proxies), else the peer's.
func requestClientIP(r *http.Request) string {
	if ip := RequestInfoFrom(r.Context()).ClientIP; ip != "" {
		return ip
	}
	return peerIP(r.RemoteAddr)
}

// clientKey is the key a client address is charged under in the body memory budget: an IPv4
// address as it is, an IPv6 address by its /64 (one host usually has a whole /64 to pick
// addresses from), anything unparsable as it is.
func clientKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap()
	if a.Is4() {
		return ip
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// ReadBody reads r's body whole into memory paid from the engine's body memory budget
// (svc.app.body_memory_budget), the one budget /api's bodies are read under, so a route outside
// /api that needs its body in memory (the integration gateway) shares the process's bound
// instead of adding its own. copies is how many more times the body's size the caller will
// hold in other forms while it is referenced (a script's string of it): they are reserved with
// the body, so the budget bounds them too. At most limit bytes (BodyLimit when limit is not
// positive or larger): a declared length over it answers ErrBodyTooLarge before anything is
// read or reserved, more bytes arriving answer it too; no room in the budget within
// BodyMemoryWait answers ErrServiceBusy; a failed read ErrInvalidRequestBody. On a refusal the
// headers of /api's refusals are set on w (Connection: close, and Retry-After: 1 when busy) and
// the caller renders the error. release returns the memory to the budget: call it once the
// body and its copies are no longer referenced (it is never nil, also after an error).
func (e *Engine) ReadBody(w http.ResponseWriter, r *http.Request, limit int64, copies int) (body []byte, release func(), err error) {
	if limit <= 0 || limit > e.cfg.BodyLimit {
		limit = e.cfg.BodyLimit
	}
	mem := &bodyMemory{budget: e.budget, client: clientKey(requestClientIP(r))}
	if r.ContentLength > limit {
		err = ErrBodyTooLarge
	} else {
		mem.holding(bodyHolder(r))
		body, err = mem.readAll(r.Context(), r.Body, r.ContentLength, limit, int64(max(copies, 0)), e.cfg.BodyMemoryWait)
		mem.holding(nil)
	}
	if err != nil {
		mem.release()
		bodyFailed(w.Header(), err)
		return nil, func() {}, err
	}
	return body, mem.release, nil
}

// fillResult maps the outcome of fill: more than the limit is 413, a full budget stays 503, and
// other failures are mapped by other.
func fillResult(buf []byte, err error, other func(error) error) ([]byte, error) {
	switch {
	case err == nil:
		return buf, nil
	case err == errOverflow:
		return nil, ErrBodyTooLarge
	case errors.Is(err, ErrServiceBusy):
		return nil, err
	}
	return nil, other(err)
}

// estimate is a declared length, or fallback when the length is unknown.
func estimate(n, fallback int64) int64 {
	if n < 0 {
		return fallback
	}
	return n
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

// decodeBody reads a JSON body and undoes its transport encoding (wire-core §6). With the
// protected transport on, a non-empty body must carry exactly the configured cipher marker;
// otherwise base64 and gzip+base64 are accepted and no header means a plain body.
func (e *Engine) decodeBody(q *request, encoding string) ([]byte, error) {
	body, n := q.r.Body, q.r.ContentLength
	if e.protect != nil {
		raw, err := e.readAll(q, body, n, e.cfg.BodyLimit)
		if err != nil || len(raw) == 0 {
			return raw, err
		}
		return e.openProtected(q, raw, encoding)
	}
	switch encoding {
	case "":
		return e.readAll(q, body, n, e.cfg.BodyLimit)
	case EncodingBase64, EncodingGzipBase64:
		return e.decodeStream(q, encoding == EncodingGzipBase64)
	}
	return nil, ErrUnsupportedBodyEncoding
}

// openProtected checks the cipher marker and decrypts a protected body (wire-core §6.2).
func (e *Engine) openProtected(q *request, raw []byte, encoding string) ([]byte, error) {
	switch encoding {
	case "":
		return nil, ErrBodyEncodingRequired
	case e.protect.Encoding():
	default:
		return nil, ErrUnsupportedBodyEncoding
	}
	if err := q.mem.take(int64(base64.StdEncoding.DecodedLen(len(raw)))); err != nil {
		return nil, err
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

// decodeStream decodes a base64 (and then gzip) body while it arrives: only the decoded bytes
// are held, and decoding stops with ErrBodyTooLarge as soon as they cross BodyLimit, so a gzip
// bomb costs at most the limit (and only while the budget has room for it), never its inflated
// size. The encoded body obeys BodyLimit too. ASCII whitespace anywhere in the base64 text is
// ignored (the original tolerated surrounding whitespace and line breaks).
func (e *Engine) decodeStream(q *request, gzipped bool) ([]byte, error) {
	n := q.r.ContentLength
	raw := &limitBody{r: q.r.Body, n: e.cfg.BodyLimit}
	src := &readErr{r: raw}
	var dec io.Reader = base64.NewDecoder(base64.StdEncoding, skipSpace64{src})
	first := min(estimate(n, firstBodyChunk)*3/4+1, firstBodyChunk)
	if err := q.mem.admit(q.ctx, first, max(n, 0)*3/4, e.cfg.BodyMemoryWait); err != nil {
		return nil, err
	}
	wait := e.cfg.BodyMemoryWait
	grow := func(k int64) error { return q.mem.grow(q.ctx, k, wait) }
	if gzipped {
		zr, err := gzip.NewReader(dec) // reads the gzip header: the client has sent something
		if err != nil {
			return nil, decodeError(raw, src, err)
		}
		defer zr.Close()
		if err := grow(gzipState); err != nil {
			return nil, err
		}
		dec = zr
	}
	out, err := fill(dec, first, e.cfg.BodyLimit, grow, q.mem.give)
	return fillResult(out, err, func(err error) error { return decodeError(raw, src, err) })
}

// decodeError tells a failure of the body itself (too large, the client went away) from a
// malformed encoding.
func decodeError(raw *limitBody, src *readErr, err error) error {
	switch {
	case raw.exceeded:
		return ErrBodyTooLarge
	case src.err != nil:
		return bodyReadError(src.err)
	}
	return ErrBodyDecodeFailed.Wrap(err)
}

// readErr remembers the first error of r other than io.EOF.
type readErr struct {
	r   io.Reader
	err error
}

// Read implements io.Reader.
func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// skipSpace64 drops ASCII whitespace from a base64 text (the decoder itself skips only line
// breaks).
type skipSpace64 struct{ r io.Reader }

// Read implements io.Reader.
func (s skipSpace64) Read(p []byte) (int, error) {
	for {
		n, err := s.r.Read(p)
		k := 0
		for _, c := range p[:n] {
			switch c {
			case ' ', '\t', '\n', '\r', '\v', '\f':
			default:
				p[k] = c
				k++
			}
		}
		if k > 0 || err != nil {
			return k, err
		}
	}
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
