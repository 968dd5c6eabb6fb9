package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"unicode"
)

// Cache policies: hashed names under assets/ never change, everything else is revalidated.
const (
	cacheImmutable = "public, max-age=31536000, immutable"
	cacheRevalid   = "no-cache"
)

// assetsDir holds the build's content-hashed files.
const assetsDir = "assets/"

// gzipMinSize: smaller files are sent as they are (the encoding would not pay).
const gzipMinSize = 1024

// securityHeaders are set on every console response. The policy allows only the server's own
// origin: no inline script or style, images also as data: URLs (the TOTP QR code), fetches to
// /api and the push WebSocket (connect-src gets the request's ws:// and wss:// origin added).
var securityHeaders = map[string]string{
	"X-Content-Type-Options":       "nosniff",
	"Referrer-Policy":              "no-referrer",
	"X-Frame-Options":              "DENY",
	"Cross-Origin-Opener-Policy":   "same-origin",
	"Cross-Origin-Resource-Policy": "same-origin",
}

// cspBase is the Content-Security-Policy before connect-src.
const cspBase = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; connect-src 'self'"

// file is one servable file of the build with its encodings.
type file struct {
	contentType string
	cache       string
	etag        string
	plain       []byte
	gzip        []byte // nil: none
	br          []byte // nil: none (only from a precompressed .br in the build)
}

// handler serves the build under prefix.
type handler struct {
	prefix string
	files  map[string]*file // by path relative to the build's root
	index  *file
}

// newHandler reads every file of assets once. index.html gets BasePlaceholder replaced by
// prefix + "/"; x.gz and x.br beside a file x are its precompressed variants (not served on
// their own); other compressible files are gzipped here once.
func newHandler(assets fs.FS, prefix string) (*handler, error) {
	raw := map[string][]byte{}
	err := fs.WalkDir(assets, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(assets, p)
		raw[p] = b
		return err
	})
	if err != nil {
		return nil, err
	}
	if _, ok := raw["index.html"]; !ok {
		return nil, ErrNoIndex
	}
	raw["index.html"] = bytes.ReplaceAll(raw["index.html"], []byte(BasePlaceholder), []byte(prefix+"/"))
	h := &handler{prefix: prefix, files: map[string]*file{}}
	for p, b := range raw {
		if base, ok := strings.CutSuffix(p, ".gz"); ok && raw[base] != nil {
			continue
		}
		if base, ok := strings.CutSuffix(p, ".br"); ok && raw[base] != nil {
			continue
		}
		f := &file{contentType: contentType(p), cache: cacheRevalid, plain: b, br: raw[p+".br"], gzip: raw[p+".gz"]}
		if strings.HasPrefix(p, assetsDir) {
			f.cache = cacheImmutable
		}
		if p == "index.html" { // the precompressed variants predate the replacement
			f.br, f.gzip = nil, nil
		}
		if f.gzip == nil && compressible(f.contentType) && len(b) >= gzipMinSize {
			if f.gzip, err = gzipped(b); err != nil {
				return nil, err
			}
		}
		sum := sha256.Sum256(b)
		f.etag = `"` + hex.EncodeToString(sum[:12]) + `"`
		h.files[p] = f
	}
	h.index = h.files["index.html"]
	return h, nil
}

// ServeHTTP serves GET and HEAD under the prefix: a file of the build, or index.html for a
// page route of the single-page application; anything else is a real 404 (a stale page asking
// for an old hash must not get HTML as script). See pageRoute for what a page route is.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header(), r)
	rel, ok := strings.CutPrefix(r.URL.Path, h.prefix+"/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	f := h.files[rel]
	if f == nil && pageRoute(rel) {
		f = h.index
	}
	if f == nil {
		http.NotFound(w, r)
		return
	}
	f.serve(w, r)
}

// pageRoute reports whether rel (the decoded path below the prefix, with no file of the build
// by that name) is a route of the single-page application, answered with index.html. The rule
// is on the path's segments, so it holds however the client encoded them: "" (the root) is;
// otherwise every segment must be a plain name — not empty (one trailing slash aside), not "."
// or "..", no control character (NUL included), no backslash — and the first must not be
// assets (the build's own files: an unknown name there is 404) and the last not index.html.
// A path that fails is never the console's page, so it answers 404 rather than HTML.
func pageRoute(rel string) bool {
	if rel == "" {
		return true
	}
	segs := strings.Split(strings.TrimSuffix(rel, "/"), "/")
	if segs[0]+"/" == assetsDir || segs[len(segs)-1] == "index.html" {
		return false
	}
	for _, s := range segs {
		if s == "" || s == "." || s == ".." || strings.ContainsFunc(s, badPathRune) {
			return false
		}
	}
	return true
}

// badPathRune: a control character (C0, DEL, C1) or a backslash (a Windows separator) in a path
// segment.
func badPathRune(r rune) bool { return unicode.IsControl(r) || r == '\\' }

// serve writes f, or 304 when the client holds its current version, in the best encoding the
// client accepts.
func (f *file) serve(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Type", f.contentType)
	hd.Set("Cache-Control", f.cache)
	body, encoding := f.plain, ""
	if f.gzip != nil || f.br != nil {
		hd.Add("Vary", "Accept-Encoding")
		ae := r.Header.Get("Accept-Encoding")
		switch {
		case f.br != nil && accepts(ae, "br"):
			body, encoding = f.br, "br"
		case f.gzip != nil && accepts(ae, "gzip"):
			body, encoding = f.gzip, "gzip"
		}
	}
	etag := f.etag
	if encoding != "" {
		etag = strings.TrimSuffix(etag, `"`) + "-" + encoding + `"`
		hd.Set("Content-Encoding", encoding)
	}
	hd.Set("ETag", etag)
	if matchETag(r.Header.Get("If-None-Match"), etag) {
		hd.Del("Content-Type")
		hd.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// setSecurityHeaders sets the headers of every console response. connect-src names the
// request's own host for ws:// and wss:// (push), when the Host header is a plain host[:port].
func setSecurityHeaders(hd http.Header, r *http.Request) {
	for k, v := range securityHeaders {
		hd.Set(k, v)
	}
	csp := cspBase
	if plainHost(r.Host) {
		csp += " ws://" + r.Host + " wss://" + r.Host
	}
	hd.Set("Content-Security-Policy", csp)
}

// plainHost reports whether h is a host name, IPv4 or bracketed IPv6 address with an optional
// port: nothing that could add a directive to the policy.
func plainHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for _, c := range h {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == ':', c == '[', c == ']':
		default:
			return false
		}
	}
	return true
}

// accepts reports whether an Accept-Encoding value admits coding (named, or "*"), with q > 0.
func accepts(header, coding string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.TrimSpace(name)
		if !strings.EqualFold(name, coding) && name != "*" {
			continue
		}
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
		}
		return q > 0
	}
	return false
}

// matchETag reports whether an If-None-Match value names etag (or is "*"); weak tags compare by
// their opaque part.
func matchETag(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

func gzipped(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// contentTypes is a built-in table, so a file's type is the same on every host (mime's table
// reads the system's mime.types).
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8", ".json": "application/json", ".svg": "image/svg+xml", ".png": "image/png",
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp", ".ico": "image/x-icon",
	".woff2": "font/woff2", ".woff": "font/woff", ".txt": "text/plain; charset=utf-8", ".wasm": "application/wasm",
	".webmanifest": "application/manifest+json",
}

func contentType(p string) string {
	if t, ok := contentTypes[strings.ToLower(path.Ext(p))]; ok {
		return t
	}
	return "application/octet-stream"
}

// compressible reports whether gzip shrinks files of the type.
func compressible(t string) bool {
	return strings.HasPrefix(t, "text/") || strings.HasPrefix(t, "application/json") || t == "image/svg+xml" ||
		t == "application/wasm" || t == "application/manifest+json"
}
