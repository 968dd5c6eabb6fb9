package app

import (
	"compress/gzip"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Response compression (wire-core §1.6): a response is gzipped when the client accepts gzip and
// does not read an event stream, and the response is worth it and safe to transform:
//
//   - at least compressMinSize bytes (a smaller body is sent as it is: the handler's writes are
//     held until that many arrive or it returns);
//   - a compressible Content-Type (text/*, JSON, JavaScript, XML, SVG);
//   - no Content-Encoding of its own, no range semantics (Accept-Ranges, Content-Range) and no
//     ETag, so the download proxy's validators and byte ranges keep meaning the stored bytes;
//   - a status with a body (not 1xx, 204, 206 or 304), not HEAD, not an upgrade.
//
// Every response carries Vary: Accept-Encoding, as the original's does.
const compressMinSize = 1024

var (
	varyAcceptEncoding = []string{"Accept-Encoding"} // shared; see the note on nosniff
	gzipWriters        = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // BestSpeed is a valid level: no error
		return w
	}}
)

// acceptsGzip reports whether r accepts a gzip response: Accept-Encoding names gzip or * with a
// non-zero q, the client does not ask for an event stream, and the request is not HEAD or an
// upgrade (WebSocket).
func acceptsGzip(r *http.Request) bool {
	encodings := r.Header["Accept-Encoding"]
	if len(encodings) == 0 || r.Method == http.MethodHead || len(r.Header["Upgrade"]) > 0 {
		return false
	}
	for _, accept := range r.Header["Accept"] {
		if strings.Contains(accept, "text/event-stream") {
			return false
		}
	}
	for _, v := range encodings {
		for part := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.TrimSpace(name)
			if (strings.EqualFold(name, "gzip") || name == "*") && qValue(params) > 0 {
				return true
			}
		}
	}
	return false
}

// qValue is the q parameter of an Accept-Encoding entry (1 when absent, 0 when malformed).
func qValue(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0
			}
			return q
		}
	}
	return 1
}

// compressibleType reports whether a Content-Type is text that gzip shrinks.
func compressibleType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/javascript", "application/xml", "image/svg+xml":
		return true
	}
	return false
}

// compressor sits between a handler and the recorder when the client accepts gzip. It holds the
// status and the first writes until it can decide, then either gzips the rest or passes
// everything through unchanged. It lives inside the pooled recorder, so it costs no allocation;
// its buffer is kept across requests.
type compressor struct {
	w       http.ResponseWriter // the recorder
	status  int
	buf     []byte
	gz      *gzip.Writer
	decided bool
}

func (c *compressor) reset(w http.ResponseWriter) {
	*c = compressor{w: w, buf: c.buf[:0]}
}

// Header implements http.ResponseWriter.
func (c *compressor) Header() http.Header { return c.w.Header() }

// WriteHeader implements http.ResponseWriter; the status is sent once the decision is made
// (informational statuses go out at once).
func (c *compressor) WriteHeader(code int) {
	if code < 200 && code != http.StatusSwitchingProtocols {
		c.w.WriteHeader(code)
		return
	}
	if c.status == 0 {
		c.status = code
	}
}

// Write implements http.ResponseWriter.
func (c *compressor) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if c.decided {
		if c.gz != nil {
			return c.gz.Write(p)
		}
		return c.w.Write(p)
	}
	if !c.eligible() {
		if err := c.passThrough(); err != nil {
			return 0, err
		}
		return c.w.Write(p)
	}
	c.buf = append(c.buf, p...)
	if len(c.buf) >= compressMinSize {
		if err := c.startGzip(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// eligible decides from the status and the headers set so far whether the body may be gzipped.
func (c *compressor) eligible() bool {
	switch c.status {
	case http.StatusNoContent, http.StatusPartialContent, http.StatusNotModified, http.StatusSwitchingProtocols:
		return false
	}
	h := c.w.Header()
	if len(h["Content-Encoding"]) > 0 || len(h["Content-Range"]) > 0 || len(h["Accept-Ranges"]) > 0 ||
		len(h["Etag"]) > 0 || !compressibleType(h.Get("Content-Type")) {
		return false
	}
	if cl := h.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n < compressMinSize {
			return false
		}
	}
	return true
}

// passThrough sends the status and whatever was held, uncompressed, and writes through from
// then on.
func (c *compressor) passThrough() error {
	c.decided = true
	c.w.WriteHeader(c.status)
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.w.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

// startGzip switches the response to gzip and compresses what was held.
func (c *compressor) startGzip() error {
	c.decided = true
	h := c.w.Header()
	delete(h, "Content-Length")
	h["Content-Encoding"] = []string{"gzip"}
	c.w.WriteHeader(c.status)
	c.gz = gzipWriters.Get().(*gzip.Writer)
	c.gz.Reset(c.w)
	_, err := c.gz.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

// Flush implements http.Flusher: the handler wants its bytes out now, so the decision is made
// with what is held (a streamed body is gzipped even below compressMinSize).
func (c *compressor) Flush() {
	if !c.decided {
		if c.status == 0 {
			c.status = http.StatusOK
		}
		if c.eligible() {
			_ = c.startGzip()
		} else {
			_ = c.passThrough()
		}
	}
	if c.gz != nil {
		_ = c.gz.Flush()
	}
	if f, ok := c.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the recorder.
func (c *compressor) Unwrap() http.ResponseWriter { return c.w }

// finish completes the response when the handler returns: a held body below compressMinSize
// goes out as it is, a gzip stream is closed. A handler that wrote nothing leaves the status
// to the recorder's default. After a panic (completed false) what was held is dropped: the
// error envelope has gone to the recorder directly.
func (c *compressor) finish(completed bool) {
	if completed && !c.decided && (c.status != 0 || len(c.buf) > 0) {
		_ = c.passThrough()
	}
	if c.gz != nil {
		_ = c.gz.Close()
		c.gz.Reset(nil)
		gzipWriters.Put(c.gz)
		c.gz = nil
	}
	if cap(c.buf) > 64<<10 { // do not keep a huge buffer in the pool
		c.buf = nil
	}
}
