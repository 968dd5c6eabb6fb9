package app

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCompression: which responses are gzipped, and that a gzipped body decodes to what the
// handler wrote.
func TestCompression(t *testing.T) {
	big := strings.Repeat(`{"k":"value"},`, 200) // 2800 bytes
	small := `{"code":0}`
	write := func(contentType, body string, extra func(http.Header)) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			if extra != nil {
				extra(w.Header())
			}
			for chunk := range strings.SplitSeq(body, ",") { // many small writes
				_, _ = io.WriteString(w, chunk+",")
			}
		})
	}
	routes := []Route{
		{Pattern: "GET /big", Handler: write("application/json", big, nil)},
		{Pattern: "GET /small", Handler: write("application/json; charset=utf-8", small, nil)},
		{Pattern: "GET /binary", Handler: write("application/octet-stream", big, nil)},
		{Pattern: "GET /etag", Handler: write("text/plain", big, func(h http.Header) { h.Set("ETag", `"x"`) })},
		{Pattern: "GET /ranged", Handler: write("text/plain", big, func(h http.Header) { h.Set("Accept-Ranges", "bytes") })},
		{Pattern: "GET /encoded", Handler: write("text/plain", big, func(h http.Header) { h.Set("Content-Encoding", "br") })},
		{Pattern: "GET /stream", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "first,")
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, "second,")
		})},
		{Pattern: "GET /status", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTeapot)
			_, _ = io.WriteString(w, big)
		})},
		{Pattern: "GET /empty", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNoContent)
		})},
	}
	h := newTestHandler(t, HandlerConfig{Compress: true, Modules: []Module{{Name: "m", Routes: routes}}})
	for _, tt := range []struct {
		path, acceptEncoding, accept string
		gzipped                      bool
		status                       int
		body                         string
	}{
		{"/big", "gzip, deflate, br", "", true, 200, big + ","},
		{"/big", "", "", false, 200, big + ","},
		{"/big", "gzip;q=0", "", false, 200, big + ","},
		{"/big", "br, *;q=0.5", "", true, 200, big + ","},
		{"/big", "gzip", "text/event-stream", false, 200, big + ","},
		{"/small", "gzip", "", false, 200, small + ","},
		{"/binary", "gzip", "", false, 200, big + ","},
		{"/etag", "gzip", "", false, 200, big + ","},
		{"/ranged", "gzip", "", false, 200, big + ","},
		{"/encoded", "gzip", "", false, 200, big + ","},
		{"/stream", "gzip", "", true, 200, "first,second,"},
		{"/status", "gzip", "", true, http.StatusTeapot, big},
		{"/empty", "gzip", "", false, http.StatusNoContent, ""},
	} {
		req := httptest.NewRequest("GET", tt.path, nil)
		if tt.acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", tt.acceptEncoding)
		}
		if tt.accept != "" {
			req.Header.Set("Accept", tt.accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body := rec.Body.Bytes()
		gzipped := rec.Header().Get("Content-Encoding") == "gzip"
		if gzipped {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("%s: %v", tt.path, err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatalf("%s: %v", tt.path, err)
			}
		}
		name := tt.path + " accept-encoding=" + tt.acceptEncoding + " accept=" + tt.accept
		if gzipped != tt.gzipped || rec.Code != tt.status || string(body) != tt.body {
			t.Errorf("%s: gzipped %t, status %d, body %d bytes; want %t, %d, %d bytes", name, gzipped, rec.Code, len(body),
				tt.gzipped, tt.status, len(tt.body))
		}
		if rec.Header().Get("Vary") != "Accept-Encoding" {
			t.Errorf("%s: Vary = %q, want Accept-Encoding", name, rec.Header().Get("Vary"))
		}
		if gzipped && rec.Header().Get("Content-Length") != "" {
			t.Errorf("%s: Content-Length %q on a gzipped body", name, rec.Header().Get("Content-Length"))
		}
	}
}

// TestCompressionOffAndPanics: with Compress off nothing is gzipped and no Vary is added; a
// panic while a compressed response is held answers the plain error envelope.
func TestCompressionOffAndPanics(t *testing.T) {
	big := strings.Repeat("x", 4096)
	routes := []Route{
		{Pattern: "GET /big", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, big)
		})},
		{Pattern: "GET /boom", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "held")
			panic("boom")
		})},
	}
	off := newTestHandler(t, HandlerConfig{Modules: []Module{{Name: "m", Routes: routes}}})
	req := httptest.NewRequest("GET", "/big", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	off.ServeHTTP(rec, req)
	if rec.Header().Get("Content-Encoding") != "" || rec.Header().Get("Vary") != "" || rec.Body.String() != big {
		t.Errorf("compression off: Content-Encoding %q, Vary %q", rec.Header().Get("Content-Encoding"), rec.Header().Get("Vary"))
	}

	on := newTestHandler(t, HandlerConfig{Compress: true, Modules: []Module{{Name: "m", Routes: routes}}})
	req = httptest.NewRequest("GET", "/boom", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec = httptest.NewRecorder()
	on.ServeHTTP(rec, req)
	if rec.Code != 500 || rec.Body.String() != `{"code":1900,"message":"unknown_error","data":null}` {
		t.Errorf("panic = %d %q, want the 500 envelope alone", rec.Code, rec.Body)
	}
}
