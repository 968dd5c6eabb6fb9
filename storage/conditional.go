package storage

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
)

// notModified applies If-None-Match (weak comparison, RFC 9110 §13.1.2) and, only when that
// header is absent, If-Modified-Since (§13.1.3).
func notModified(r *http.Request, etag string, modified time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if etag == "" {
			return false
		}
		for t := range strings.SplitSeq(inm, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || weakTag(t) == weakTag(etag) {
				return true
			}
		}
		return false
	}
	ims := r.Header.Get("If-Modified-Since")
	if ims == "" || modified.IsZero() {
		return false
	}
	since, err := http.ParseTime(ims)
	return err == nil && !modified.Truncate(time.Second).After(since)
}

func weakTag(t string) string { return strings.TrimPrefix(t, "W/") }

// requestedRange reads a single byte range (RFC 9110 §14): it returns the range and 206, nil
// and 200 when there is no usable Range header (absent, several ranges, malformed, or an
// If-Range that no longer matches), or nil and 416 when the range lies outside the object.
func requestedRange(r *http.Request, etag string, obj backend.Object) (*backend.Range, int) {
	spec := r.Header.Get("Range")
	if spec == "" || obj.Size == 0 {
		return nil, http.StatusOK
	}
	if ir := r.Header.Get("If-Range"); ir != "" && !ifRangeMatches(ir, etag, obj.LastModified) {
		return nil, http.StatusOK
	}
	spec, ok := strings.CutPrefix(spec, "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return nil, http.StatusOK
	}
	first, last, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return nil, http.StatusOK
	}
	size := obj.Size
	if first == "" { // suffix range: the last N bytes
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return nil, http.StatusOK
		}
		if n == 0 {
			return nil, http.StatusRequestedRangeNotSatisfiable
		}
		n = min(n, size)
		return &backend.Range{Offset: size - n, Length: n}, http.StatusPartialContent
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil || start < 0 {
		return nil, http.StatusOK
	}
	if start >= size {
		return nil, http.StatusRequestedRangeNotSatisfiable
	}
	end := size - 1
	if last != "" {
		e, err := strconv.ParseInt(last, 10, 64)
		if err != nil || e < start {
			return nil, http.StatusOK
		}
		end = min(e, size-1)
	}
	return &backend.Range{Offset: start, Length: end - start + 1}, http.StatusPartialContent
}

// ifRangeMatches compares If-Range strongly with the ETag, or exactly with Last-Modified.
func ifRangeMatches(v, etag string, modified time.Time) bool {
	if strings.HasPrefix(v, `"`) {
		return etag != "" && !strings.HasPrefix(etag, "W/") && v == etag
	}
	t, err := http.ParseTime(v)
	return err == nil && !modified.IsZero() && modified.Truncate(time.Second).Equal(t)
}

// envelopeWriter renders errors as the {code, message, data} envelope when the module is built
// without the engine's writer (tests, a host that serves the proxy alone).
type envelopeWriter struct {
	msgs *i18n.Catalog
	log  *slog.Logger
}

var _ ErrorWriter = envelopeWriter{}

// WriteError implements ErrorWriter.
func (e envelopeWriter) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	re, ok := rpc.AsError(err)
	if !ok {
		e.log.ErrorContext(r.Context(), "storage: internal error", slog.Any("error", err))
		re = rpc.ErrUnknown
	}
	msg := re.Message
	if msg == "" {
		msg = re.Key
		if e.msgs != nil {
			msg = e.msgs.T(re.Key, re.Args)
		}
	}
	body, _ := json.Marshal(map[string]any{"code": re.Code, "message": msg, "data": re.Data})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(re.HTTPStatus())
	_, _ = w.Write(body)
}
