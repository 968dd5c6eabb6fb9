package storage

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
)

// tokenAuth authenticates "Bearer <user id>" or ?__accessToken=<user id>; the token "bad" is
// refused, no token is ErrUnauthenticated.
type tokenAuth struct{}

func (tokenAuth) Authenticate(_ context.Context, r *http.Request, strategy string, _ ...string) (*rpc.Principal, error) {
	if strategy != rpc.StrategyBearer {
		return nil, errors.New("unexpected strategy " + strategy)
	}
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if tok == "" {
		tok = r.URL.Query().Get("__accessToken")
	}
	switch tok {
	case "":
		return nil, rpc.ErrUnauthenticated
	case "bad":
		return nil, rpc.NewError(rpc.CodeTokenInvalid, http.StatusUnauthorized, "security_token_invalid")
	}
	return user(tok), nil
}

// untouchable fails every call: malformed keys must be refused before the backend is asked.
type untouchable struct{ backend.Backend }

func (untouchable) Stat(context.Context, string) (backend.Object, error) {
	panic("backend called")
}

func (untouchable) Get(context.Context, string, *backend.Range) (io.ReadCloser, backend.Object, error) {
	panic("backend called")
}

// fetch runs the proxy for key with the given method and headers.
func (e *env) fetch(method, key string, header map[string]string) *httptest.ResponseRecorder {
	query := ""
	if i := strings.Index(key, "?"); i >= 0 {
		key, query = key[:i], key[i:]
	}
	r := httptest.NewRequest(method, "http://svc/storage/files/k"+query, nil)
	r.SetPathValue("key", key) // as the mux decodes it
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	e.svc.ServeFile(w, r)
	return w
}

func envelopeCode(t *testing.T, w *httptest.ResponseRecorder) int {
	t.Helper()
	var env struct {
		Code *int            `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.Code == nil || env.Data == nil {
		t.Fatalf("response %d is not an envelope: %s", w.Code, w.Body)
	}
	return *env.Code
}

// TestProxy covers the download proxy of wire-core §7.7 and svc's additions (Range, ETag,
// Last-Modified and the conditional requests).
func TestProxy(t *testing.T) {
	eachEnv(t, func(c *config.Storage) { c.AllowPublicUploads = true }, func(t *testing.T, e *env) {
		e.svc.auth = tokenAuth{}
		owner := user("u1")
		pub := e.startWith(owner, InitUploadParams{Filename: "照片.png", Size: 1000, ContentType: "image/png", Public: true})
		pub.sendAll()
		if _, err := pub.complete(); err != nil {
			t.Fatal(err)
		}
		priv := e.startWith(owner, InitUploadParams{Filename: "data.zip", Size: 300, ContentType: "application/zip"})
		priv.sendAll()
		if _, err := priv.complete(); err != nil {
			t.Fatal(err)
		}

		t.Run("malformed keys are refused before the backend", func(t *testing.T) {
			guarded := e.with(shaped{})
			guarded.svc.backend = untouchable{e.be}
			for _, k := range []string{"", "/etc/passwd", "pub/../priv/x", "pub/a..b", "pub/x..pdf", "pub/..x", "pub//x", "pub/x/", `pub\x`, "pub/a\x00b", "pub/a\nb", "./pub/x", "pub/."} {
				w := guarded.fetch(http.MethodGet, k, nil)
				if w.Code != http.StatusOK || envelopeCode(t, w) != ErrCodeInvalidFileKey {
					t.Errorf("key %q: %d %s, want 200 with code 2200", k, w.Code, w.Body)
				}
			}
		})
		t.Run("pub/ keys are anonymous and cacheable", func(t *testing.T) {
			w := e.fetch(http.MethodGet, pub.init.Key, map[string]string{"Authorization": "Bearer bad"})
			h := w.Header()
			if w.Code != http.StatusOK || w.Body.String() != string(pub.data) {
				t.Fatalf("GET %s = %d (%d bytes), want 200 with the object", pub.init.Key, w.Code, w.Body.Len())
			}
			checks := map[string]string{
				"Content-Type":           "image/png",
				"X-Content-Type-Options": "nosniff",
				"Cache-Control":          "public, max-age=3600, immutable",
				"Content-Length":         "1000",
				"Accept-Ranges":          "bytes",
				"Content-Disposition":    "inline; filename*=utf-8''%E7%85%A7%E7%89%87.png",
			}
			for k, want := range checks {
				if got := h.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if h.Get("ETag") == "" || h.Get("Last-Modified") == "" {
				t.Errorf("ETag %q, Last-Modified %q: want both", h.Get("ETag"), h.Get("Last-Modified"))
			}
		})
		t.Run("private keys follow the ACL", func(t *testing.T) {
			rows := []struct {
				name       string
				key        string
				header     map[string]string
				wantStatus int
				wantCode   int
			}{
				{"owner by header", priv.init.Key, map[string]string{"Authorization": "Bearer u1"}, 200, 0},
				{"owner by query", priv.init.Key + "?__accessToken=u1", nil, 200, 0},
				{"no credentials", priv.init.Key, nil, 403, rpc.CodeAccessDenied},
				{"another user", priv.init.Key, map[string]string{"Authorization": "Bearer u2"}, 403, rpc.CodeAccessDenied},
				{"invalid token", priv.init.Key, map[string]string{"Authorization": "Bearer bad"}, 401, rpc.CodeTokenInvalid},
				{"unknown private key", "priv/2026/01/01/none.bin", map[string]string{"Authorization": "Bearer u1"}, 403, rpc.CodeAccessDenied},
				{"missing public object", "pub/2026/01/01/none.bin", nil, 200, ErrCodeFileNotFound},
			}
			for _, tt := range rows {
				w := e.fetch(http.MethodGet, tt.key, tt.header)
				if w.Code != tt.wantStatus {
					t.Errorf("%s: status %d, want %d (%s)", tt.name, w.Code, tt.wantStatus, w.Body)
					continue
				}
				if tt.wantCode != 0 && envelopeCode(t, w) != tt.wantCode {
					t.Errorf("%s: %s, want code %d", tt.name, w.Body, tt.wantCode)
				}
				if tt.wantStatus == 200 && tt.wantCode == 0 {
					h := w.Header()
					if h.Get("Cache-Control") != "private, no-store" || h.Get("Content-Type") != "application/zip" ||
						h.Get("Content-Disposition") != `attachment; filename=data.zip` || w.Body.String() != string(priv.data) {
						t.Errorf("%s: headers %v", tt.name, h)
					}
				}
			}
		})
		t.Run("ACL and backend failures are 2202, a deleted object 2201", func(t *testing.T) {
			failing := e.with(shaped{})
			failing.svc.auth = tokenAuth{}
			failing.svc.acl = aclFunc(func(context.Context, *rpc.Principal, File) (bool, error) { return false, errors.New("down") })
			if w := failing.fetch(http.MethodGet, priv.init.Key, nil); envelopeCode(t, w) != ErrCodeFailedToGetFile {
				t.Errorf("failing ACL: %s, want 2202", w.Body)
			}
			failing.svc.acl = e.svc.acl
			failing.svc.backend = statFails{e.be}
			if w := failing.fetch(http.MethodGet, pub.init.Key, nil); envelopeCode(t, w) != ErrCodeFailedToGetFile {
				t.Errorf("failing backend: %s, want 2202", w.Body)
			}
			gone := e.uploaded(owner, "gone.pdf")
			if err := e.be.Delete(e.ctx, gone); err != nil {
				t.Fatal(err)
			}
			if w := e.fetch(http.MethodGet, gone, map[string]string{"Authorization": "Bearer u1"}); envelopeCode(t, w) != ErrCodeFileNotFound {
				t.Errorf("deleted object: %s, want 2201", w.Body)
			}
		})
		t.Run("HEAD sends the headers only", func(t *testing.T) {
			w := e.fetch(http.MethodHead, pub.init.Key, nil)
			if w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Length") != "1000" {
				t.Errorf("HEAD = %d, %d body bytes, Content-Length %q", w.Code, w.Body.Len(), w.Header().Get("Content-Length"))
			}
		})
		t.Run("ranges", func(t *testing.T) {
			etag := e.fetch(http.MethodHead, pub.init.Key, nil).Header().Get("ETag")
			rows := []struct {
				rng, ifRange string
				status       int
				body         string
				contentRange string
			}{
				{"bytes=0-9", "", 206, string(pub.data[:10]), "bytes 0-9/1000"},
				{"bytes=990-", "", 206, string(pub.data[990:]), "bytes 990-999/1000"},
				{"bytes=-5", "", 206, string(pub.data[995:]), "bytes 995-999/1000"},
				{"bytes=500-5000", "", 206, string(pub.data[500:]), "bytes 500-999/1000"},
				{"bytes=1000-", "", 416, "", "bytes */1000"},
				{"bytes=0-1,5-6", "", 200, string(pub.data), ""},
				{"items=0-1", "", 200, string(pub.data), ""},
				{"bytes=0-9", etag, 206, string(pub.data[:10]), "bytes 0-9/1000"},
				{"bytes=0-9", `"other"`, 200, string(pub.data), ""},
			}
			for _, tt := range rows {
				w := e.fetch(http.MethodGet, pub.init.Key, map[string]string{"Range": tt.rng, "If-Range": tt.ifRange})
				if w.Code != tt.status || w.Body.String() != tt.body || w.Header().Get("Content-Range") != tt.contentRange {
					t.Errorf("Range %q If-Range %q: %d, %d bytes, Content-Range %q; want %d, %d bytes, %q",
						tt.rng, tt.ifRange, w.Code, w.Body.Len(), w.Header().Get("Content-Range"), tt.status, len(tt.body), tt.contentRange)
				}
			}
		})
		t.Run("conditional requests", func(t *testing.T) {
			first := e.fetch(http.MethodGet, priv.init.Key, map[string]string{"Authorization": "Bearer u1"})
			etag, modified := first.Header().Get("ETag"), first.Header().Get("Last-Modified")
			lm, _ := http.ParseTime(modified)
			rows := []struct {
				name   string
				header map[string]string
				status int
			}{
				{"matching ETag", map[string]string{"If-None-Match": etag}, 304},
				{"weak matching ETag in a list", map[string]string{"If-None-Match": `"x", W/` + etag}, 304},
				{"other ETag", map[string]string{"If-None-Match": `"x"`}, 200},
				{"not modified since", map[string]string{"If-Modified-Since": modified}, 304},
				{"modified since", map[string]string{"If-Modified-Since": lm.Add(-time.Hour).Format(http.TimeFormat)}, 200},
				{"If-None-Match wins over the date", map[string]string{"If-None-Match": `"x"`, "If-Modified-Since": modified}, 200},
			}
			for _, tt := range rows {
				tt.header["Authorization"] = "Bearer u1"
				w := e.fetch(http.MethodGet, priv.init.Key, tt.header)
				if w.Code != tt.status {
					t.Errorf("%s: %d, want %d", tt.name, w.Code, tt.status)
				}
				if tt.status == 304 && w.Body.Len() != 0 {
					t.Errorf("%s: 304 with a body", tt.name)
				}
			}
		})
	})
}

type statFails struct{ backend.Backend }

func (statFails) Stat(context.Context, string) (backend.Object, error) {
	return backend.Object{}, errors.New("backend down")
}
