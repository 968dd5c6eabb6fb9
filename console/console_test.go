package console_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/console"
	"github.com/svc-framework/svc/svctest"
)

// build is a small console build: index.html with the base placeholder, a hashed script with a
// precompressed brotli variant, a large stylesheet the module gzips itself, and a favicon.
func build() fstest.MapFS {
	css := strings.Repeat("body{margin:0}\n", 200)
	return fstest.MapFS{
		"index.html": {Data: []byte(`<!doctype html><script type="module" src="%SVC_CONSOLE_BASE%assets/index-abc.js"></script>` +
			`<link rel="stylesheet" href="%SVC_CONSOLE_BASE%assets/index-def.css">`)},
		"assets/index-abc.js":    {Data: []byte(`console.log("hi")`)},
		"assets/index-abc.js.br": {Data: []byte("brotli bytes")},
		"assets/index-def.css":   {Data: []byte(css)},
		"favicon.svg":            {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)},
	}
}

// serve builds the console for cfg and assets and returns a handler with its routes and a
// fallback that answers 418, standing for the server's own 404 envelope.
func serve(t *testing.T, c config.Console, assets fstest.MapFS) http.Handler {
	t.Helper()
	cfg := config.Default()
	cfg.Console = c
	con, err := console.New(app.Platform{Config: cfg}, console.Options{Assets: assets})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for _, rt := range con.Module().Routes {
		mux.Handle(rt.Pattern, rt.Handler)
	}
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	return mux
}

// get sends a request and returns the response with its body read.
func get(t *testing.T, h http.Handler, method, target string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

// TestServing covers the routes and headers of docs/console.md: cache policy by kind of file,
// the SPA fallback (but not under assets/), the security headers on every answer, the base
// placeholder, the encodings and 304.
func TestServing(t *testing.T) {
	h := serve(t, config.Console{Enabled: true, Path: "/console"}, build())
	wantCSP := "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
		"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; connect-src 'self' ws://example.com wss://example.com"
	tests := []struct {
		name, target string
		header       map[string]string
		status       int
		cache, ctype string
		encoding     string
		body         string // substring
	}{
		{name: "index", target: "/console/", status: 200, cache: "no-cache", ctype: "text/html; charset=utf-8",
			body: `src="/console/assets/index-abc.js"`},
		{name: "index by name", target: "/console/index.html", status: 200, cache: "no-cache", body: `href="/console/assets/index-def.css"`},
		{name: "fallback for a page route", target: "/console/users/42?tab=sessions", status: 200, cache: "no-cache",
			ctype: "text/html; charset=utf-8", body: "<!doctype html>"},
		{name: "fallback for a directory path", target: "/console/cron/", status: 200, cache: "no-cache", body: "<!doctype html>"},
		{name: "hashed asset", target: "/console/assets/index-abc.js", status: 200, cache: "public, max-age=31536000, immutable",
			ctype: "text/javascript; charset=utf-8", body: `console.log("hi")`},
		{name: "brotli variant", target: "/console/assets/index-abc.js", header: map[string]string{"Accept-Encoding": "gzip, br"},
			status: 200, cache: "public, max-age=31536000, immutable", encoding: "br", body: "brotli bytes"},
		{name: "brotli refused with q=0", target: "/console/assets/index-abc.js", header: map[string]string{"Accept-Encoding": "br;q=0"},
			status: 200, body: `console.log("hi")`},
		{name: "unknown asset is 404", target: "/console/assets/index-old.js", status: 404},
		{name: "a variant is not served by name", target: "/console/assets/index-abc.js.br", status: 404},
		{name: "other file", target: "/console/favicon.svg", status: 200, cache: "no-cache", ctype: "image/svg+xml"},
		{name: "HEAD", target: "/console/", status: 200, cache: "no-cache"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodGet
			if tt.name == "HEAD" {
				method = http.MethodHead
			}
			res, body := get(t, h, method, "http://example.com"+tt.target, tt.header)
			if res.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d", res.StatusCode, tt.status)
			}
			if got := res.Header.Get("Content-Security-Policy"); got != wantCSP {
				t.Errorf("CSP = %q\nwant %q", got, wantCSP)
			}
			for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"} {
				if got := res.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if tt.status != 200 {
				return
			}
			if tt.cache != "" && res.Header.Get("Cache-Control") != tt.cache {
				t.Errorf("Cache-Control = %q, want %q", res.Header.Get("Cache-Control"), tt.cache)
			}
			if tt.ctype != "" && res.Header.Get("Content-Type") != tt.ctype {
				t.Errorf("Content-Type = %q, want %q", res.Header.Get("Content-Type"), tt.ctype)
			}
			if res.Header.Get("Content-Encoding") != tt.encoding {
				t.Errorf("Content-Encoding = %q, want %q", res.Header.Get("Content-Encoding"), tt.encoding)
			}
			if method == http.MethodHead {
				if len(body) != 0 || res.Header.Get("Content-Length") == "" {
					t.Errorf("HEAD: body %d bytes, Content-Length %q", len(body), res.Header.Get("Content-Length"))
				}
				return
			}
			if !strings.Contains(string(body), tt.body) {
				t.Errorf("body = %q, want it to contain %q", body, tt.body)
			}
			if strings.Contains(string(body), console.BasePlaceholder) {
				t.Errorf("body still has the placeholder: %q", body)
			}
		})
	}
}

// TestGzipAndRevalidation: a large text file is gzipped by the module, each encoding has its own
// ETag, and If-None-Match answers 304 without a body.
func TestGzipAndRevalidation(t *testing.T) {
	h := serve(t, config.Console{Enabled: true, Path: "/console"}, build())
	res, body := get(t, h, http.MethodGet, "/console/assets/index-def.css", map[string]string{"Accept-Encoding": "gzip"})
	if res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
		t.Fatalf("headers = %v", res.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if string(plain) != string(build()["assets/index-def.css"].Data) {
		t.Errorf("gunzipped body differs from the file")
	}
	gzTag := res.Header.Get("ETag")
	res, _ = get(t, h, http.MethodGet, "/console/assets/index-def.css", nil)
	plainTag := res.Header.Get("ETag")
	if gzTag == "" || plainTag == "" || gzTag == plainTag {
		t.Errorf("ETags gzip %q, plain %q: want two different ones", gzTag, plainTag)
	}
	res, body = get(t, h, http.MethodGet, "/console/assets/index-def.css", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": gzTag})
	if res.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Errorf("revalidation = %d with %d bytes, want 304 without a body", res.StatusCode, len(body))
	}
	res, _ = get(t, h, http.MethodGet, "/console/assets/index-def.css", map[string]string{"If-None-Match": gzTag})
	if res.StatusCode != http.StatusOK {
		t.Errorf("plain request with the gzip ETag = %d, want 200", res.StatusCode)
	}
}

// TestPathAndDisabled: another path moves every route and the placeholder; the bare path
// redirects with its query; disabled registers nothing.
func TestPathAndDisabled(t *testing.T) {
	h := serve(t, config.Console{Enabled: true, Path: "/ops/ui/"}, build())
	res, body := get(t, h, http.MethodGet, "/ops/ui/schema", nil)
	if res.StatusCode != 200 || !strings.Contains(string(body), `src="/ops/ui/assets/index-abc.js"`) {
		t.Errorf("moved console = %d %q", res.StatusCode, body)
	}
	res, _ = get(t, h, http.MethodGet, "/ops/ui?lang=zh-CN", nil)
	if res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != "/ops/ui/?lang=zh-CN" {
		t.Errorf("bare path = %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ := get(t, h, http.MethodGet, "/console/", nil); res.StatusCode != http.StatusTeapot {
		t.Errorf("old path = %d, want the server's fallback", res.StatusCode)
	}
	off := serve(t, config.Console{Enabled: false, Path: "/console"}, build())
	for _, p := range []string{"/console", "/console/", "/console/assets/index-abc.js"} {
		if res, _ := get(t, off, http.MethodGet, p, nil); res.StatusCode != http.StatusTeapot {
			t.Errorf("disabled %s = %d, want the server's fallback", p, res.StatusCode)
		}
	}
	cfg := config.Default()
	if _, err := console.New(app.Platform{Config: cfg}, console.Options{Assets: fstest.MapFS{"a.js": {Data: []byte("x")}}}); err == nil {
		t.Error("assets without index.html accepted")
	}
}

// TestServer runs the console in the real boot chain with the embedded build: enabled by
// default at /console/ with its headers, moved by svc.console.path, off with
// svc.console.enabled = false (the server's 404 envelope), and /api untouched.
func TestServer(t *testing.T) {
	srv := svctest.New(t)
	res, body := srv.Do(t, httptest.NewRequest(http.MethodGet, "/console/", nil))
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/html; charset=utf-8" || res.Header.Get("Cache-Control") != "no-cache" ||
		!strings.HasPrefix(res.Header.Get("Content-Security-Policy"), "default-src 'self'") || !strings.Contains(string(body), "<html") {
		t.Errorf("default console = %d %v %q", res.StatusCode, res.Header, body)
	}
	if r := srv.Call(t, "security/auth", "get_user_info", nil); r.Status != 401 {
		t.Errorf("/api next to the console = %d", r.Status)
	}
	moved := svctest.New(t, svctest.WithConfig(func(c *config.Config) { c.Console.Path = "/admin" }))
	if res, _ := moved.Do(t, httptest.NewRequest(http.MethodGet, "/admin/users", nil)); res.StatusCode != 200 {
		t.Errorf("moved console = %d", res.StatusCode)
	}
	if res, _ := moved.Do(t, httptest.NewRequest(http.MethodGet, "/console/", nil)); res.StatusCode != 404 {
		t.Errorf("old path on the moved console = %d, want 404", res.StatusCode)
	}
	off := svctest.New(t, svctest.WithConfig(func(c *config.Config) { c.Console.Enabled = false }))
	res, body = off.Do(t, httptest.NewRequest(http.MethodGet, "/console/", nil))
	if res.StatusCode != 404 || !strings.Contains(string(body), `"code"`) {
		t.Errorf("disabled console = %d %q, want the 404 envelope", res.StatusCode, body)
	}
}

// TestMalformedPathsAre404 is the attack test of issue #42 item 9: a path that is not a plain
// page route never gets index.html. Every spelling of a dot segment ("." and "..", each dot
// literal or percent-encoded in either case), every control byte (NUL included) and a
// backslash is tried in every position of paths under assets/ and elsewhere; each must answer
// 404, never HTML — or, for literal dot segments, the mux's redirect to the cleaned path (what a
// browser would have asked for itself: a new request, judged by the same rule). Clean page
// routes of the same shapes keep their fallback.
func TestMalformedPathsAre404(t *testing.T) {
	h := serve(t, config.Console{Enabled: true, Path: "/console"}, build())
	var bad []string
	for _, n := range []int{1, 2} { // "." and ".."
		for mask := 0; mask < 1<<(2*n); mask++ { // each dot: ".", "%2e" or "%2E"
			seg, ok := "", true
			for i := 0; i < n; i++ {
				switch (mask >> (2 * i)) & 3 {
				case 0:
					seg += "."
				case 1:
					seg += "%2e"
				case 2:
					seg += "%2E"
				default:
					ok = false
				}
			}
			if ok {
				bad = append(bad, seg)
			}
		}
	}
	for c := 0; c < 0x20; c++ {
		bad = append(bad, fmt.Sprintf("%%%02x", c), fmt.Sprintf("x%%%02Xy", c))
	}
	bad = append(bad, "%7f", "%c2%85", "a%5cb", `a\b`)
	shapes := []string{"assets/%s", "assets/%s/", "assets/%s/index-abc.js", "assets/x/%s", "assets/index-abc.js%s",
		"%s/assets/index-abc.js", "users/%s", "users/%s/42", "%s", "%s/", "x/%s/assets/y.js"}
	for _, shape := range shapes {
		for _, seg := range bad {
			target := "/console/" + strings.ReplaceAll(shape, "%s", seg)
			res, body := getPath(t, h, target)
			redirect := res.StatusCode == http.StatusMovedPermanently || res.StatusCode == http.StatusTemporaryRedirect
			if bytes.Contains(body, []byte("<!doctype html>")) || (res.StatusCode != http.StatusNotFound && !redirect) {
				t.Errorf("GET %s = %d (%d bytes), want 404", target, res.StatusCode, len(body))
			}
			if redirect && strings.Contains(res.Header.Get("Location"), "/.") {
				t.Errorf("GET %s redirects to %q, not a cleaned path", target, res.Header.Get("Location"))
			}
		}
	}
	for _, target := range []string{"/console/users/42", "/console/users/42/", "/console/cron/runs", "/console/a.b/c..d"} {
		if res, body := getPath(t, h, target); res.StatusCode != 200 || !bytes.Contains(body, []byte("<!doctype html>")) {
			t.Errorf("GET %s = %d, want index.html", target, res.StatusCode)
		}
	}
}

// getPath sends GET with target as the raw request URI (no client-side cleaning).
func getPath(t *testing.T, h http.Handler, target string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "http://example.com/", nil)
	u, err := url.ParseRequestURI(target)
	if err != nil {
		u = &url.URL{Path: target}
	}
	req.URL, req.RequestURI = u, target
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return res, b
}
