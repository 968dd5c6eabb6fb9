package storage

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
)

// Routes of the download proxy (spec §4.2, wire-core §7.7). HEAD is registered explicitly so it
// is served by the same handler whatever the mux does with GET patterns.
const (
	ProxyGetPattern  = "GET /storage/files/{key...}"
	ProxyHeadPattern = "HEAD /storage/files/{key...}"
)

// Cache-Control of proxied files (wire-core §7.7).
const (
	publicCacheControl  = "public, max-age=3600, immutable"
	privateCacheControl = "private, no-store"
)

// Authenticator resolves the principal of a request outside /api (the rpc engine's
// Authenticate). A request without credentials answers an error matching rpc.ErrUnauthenticated.
type Authenticator interface {
	Authenticate(ctx context.Context, r *http.Request, strategy string, args ...string) (*rpc.Principal, error)
}

// ErrorWriter renders an error as the {code, message, data} envelope (the rpc engine's
// WriteError).
type ErrorWriter interface {
	WriteError(w http.ResponseWriter, r *http.Request, err error)
}

// ServeFile is the download proxy, GET and HEAD /storage/files/<key>:
//
//  1. the key is checked before anything else (2200 for an empty or absolute key, ".." anywhere,
//     "." or empty segments, backslashes or control characters: backend.ValidKey); literal "//"
//     and dot segments never get here, the router redirects them (307) to the cleaned path;
//  2. keys under pub/ are served to anyone, any token ignored; other keys authenticate the
//     Bearer token (Authorization header or __accessToken query): no token means no principal,
//     a bad token is refused (401);
//  3. the file ACL decides (403/1100 when it refuses, 2202 when it fails);
//  4. the object is sent with the registry's content type (sanitised), X-Content-Type-Options:
//     nosniff, Content-Disposition with the original filename, ETag, Last-Modified and
//     Accept-Ranges; If-None-Match / If-Modified-Since answer 304 and a single byte Range
//     answers 206 (or 416). A missing object is 2201, a backend failure 2202.
func (s *Service) ServeFile(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	if !backend.ValidKey(key) {
		s.writeError(w, r, ErrInvalidFileKey)
		return
	}
	ctx := r.Context()
	public := strings.HasPrefix(key, PublicPrefix)
	var p *rpc.Principal
	if !public {
		var err error
		if p, err = s.principal(ctx, r); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	f, known, err := s.files.lookup(ctx, s.db, key)
	if err != nil {
		s.writeError(w, r, ErrFailedToGetFile.Wrap(err))
		return
	}
	if !known {
		f = File{Key: key}
	}
	if ok, err := s.canRead(ctx, p, f); err != nil {
		s.writeError(w, r, ErrFailedToGetFile.Wrap(err))
		return
	} else if !ok {
		s.writeError(w, r, rpc.ErrAccessDenied)
		return
	}
	obj, err := s.backend.Stat(ctx, key)
	if err != nil {
		s.writeError(w, r, s.fetchError(err))
		return
	}
	s.serveObject(w, r, f, known, obj)
}

// principal authenticates a private download. Missing credentials are not an error: the ACL
// decides what an unauthenticated caller may read.
func (s *Service) principal(ctx context.Context, r *http.Request) (*rpc.Principal, error) {
	if s.auth == nil {
		return nil, nil
	}
	p, err := s.auth.Authenticate(ctx, r, rpc.StrategyBearer)
	if errors.Is(err, rpc.ErrUnauthenticated) {
		return nil, nil
	}
	return p, err
}

func (s *Service) fetchError(err error) error {
	if isNotFound(err) {
		return ErrFileNotFound
	}
	return ErrFailedToGetFile.Wrap(err)
}

// serveObject writes the headers, answers conditional and range requests, and streams the body.
func (s *Service) serveObject(w http.ResponseWriter, r *http.Request, f File, known bool, obj backend.Object) {
	h := w.Header()
	contentType := f.ContentType
	if !known || contentType == "" {
		contentType = TypeByExtension(obj.Key)
	}
	contentType = SanitizeContentType(contentType, obj.Key)
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Accept-Ranges", "bytes")
	if known && f.OriginalFilename != "" {
		h.Set("Content-Disposition", contentDisposition(contentType, f.OriginalFilename))
	}
	if strings.HasPrefix(obj.Key, PublicPrefix) {
		h.Set("Cache-Control", publicCacheControl)
	} else {
		h.Set("Cache-Control", privateCacheControl)
	}
	etag := quoteETag(obj.ETag)
	if etag != "" {
		h.Set("ETag", etag)
	}
	if !obj.LastModified.IsZero() {
		h.Set("Last-Modified", obj.LastModified.UTC().Format(http.TimeFormat))
	}
	if notModified(r, etag, obj.LastModified) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	rng, status := requestedRange(r, etag, obj)
	if status == http.StatusRequestedRangeNotSatisfiable {
		h.Set("Content-Range", "bytes */"+strconv.FormatInt(obj.Size, 10))
		w.WriteHeader(status)
		return
	}
	length := obj.Size
	if rng != nil {
		length = rng.Length
		h.Set("Content-Range", "bytes "+strconv.FormatInt(rng.Offset, 10)+"-"+
			strconv.FormatInt(rng.Offset+rng.Length-1, 10)+"/"+strconv.FormatInt(obj.Size, 10))
	}
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	if r.Method == http.MethodHead {
		w.WriteHeader(status)
		return
	}
	s.streamBody(w, r, obj.Key, rng, status)
}

// streamBody opens the object (or its range) and copies it to the client.
func (s *Service) streamBody(w http.ResponseWriter, r *http.Request, key string, rng *backend.Range, status int) {
	body, _, err := s.backend.Get(r.Context(), key, rng)
	if err != nil {
		for _, k := range []string{"Content-Length", "Content-Range", "Content-Disposition", "ETag", "Last-Modified", "Accept-Ranges"} {
			w.Header().Del(k)
		}
		s.writeError(w, r, s.fetchError(err))
		return
	}
	defer body.Close()
	w.WriteHeader(status)
	if _, err := backend.Copy(w, body); err != nil && r.Context().Err() == nil {
		s.log.WarnContext(r.Context(), "download interrupted", slog.String("key", rpc.LogText(key)), slog.Any("error", err))
	}
}

// contentDisposition is inline for types a browser shows and attachment for the rest, with the
// original filename encoded per RFC 6266 / RFC 2231 (filename*=utf-8”… for non-ASCII names).
func contentDisposition(contentType, filename string) string {
	kind := "attachment"
	if inlineType(contentType) {
		kind = "inline"
	}
	if v := mime.FormatMediaType(kind, map[string]string{"filename": filename}); v != "" {
		return v
	}
	return kind
}

// quoteETag returns the backend ETag as an HTTP entity tag.
func quoteETag(tag string) string {
	if tag == "" || strings.HasPrefix(tag, `"`) || strings.HasPrefix(tag, `W/"`) {
		return tag
	}
	return `"` + tag + `"`
}

// writeError renders err through the configured writer.
func (s *Service) writeError(w http.ResponseWriter, r *http.Request, err error) {
	s.errs.WriteError(w, r, err)
}
