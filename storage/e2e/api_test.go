package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage"
	"github.com/svc-framework/svc/storage/backend/backendtest"
	"github.com/svc-framework/svc/svctest"
	"github.com/uptrace/bun"
)

// providers are the backends the API tests boot the server with.
var providers = []config.StorageProvider{config.StorageMemory, config.StorageFilesystem, config.StorageObjStore}

// useProvider configures the server's storage provider: a fresh root for the filesystem, a
// fresh bucket on the test S3 server for objstore.
func useProvider(t *testing.T, p config.StorageProvider) func(*config.Config) {
	t.Helper()
	var s3 svctest.S3Config
	if p == config.StorageObjStore {
		s3 = svctest.S3(t)
		t.Cleanup(func() {
			svctest.RemoveBucket(t, s3)
		})
	}
	root := t.TempDir()
	return func(c *config.Config) {
		c.Storage.Provider = p
		c.Storage.Filesystem.Root = root
		c.Storage.ObjStore = s3.ObjStore()
	}
}

// eachServer boots a server per database kind and provider.
func eachServer(t *testing.T, fn func(t *testing.T, srv *svctest.Server)) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		for _, p := range providers {
			t.Run(string(p), func(t *testing.T) {
				fn(t, svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(useProvider(t, p))))
			})
		}
	})
}

func expect(t *testing.T, what string, r svctest.Response, status, code int) {
	t.Helper()
	if r.Status != status || r.Code != code {
		t.Fatalf("%s: HTTP %d code %d (%s), want HTTP %d code %d", what, r.Status, r.Code, r.Message, status, code)
	}
}

// TestAPI drives the whole upload lifecycle through /api and the download proxy, as the
// original's React uploader does: init, parts (multipart envelope, params as a JSON string),
// resume with list_parts, complete twice, resolve, download, abort.
func TestAPI(t *testing.T) {
	eachServer(t, func(t *testing.T, srv *svctest.Server) {
		alice, bob := svctest.As(svctest.User("alice")), svctest.As(svctest.User("bob"))
		var plan storage.InitUploadResult
		r := srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "report.pdf", "size": 0}, alice)
		expect(t, "init_upload size 0", r, http.StatusBadRequest, 1400)
		r = srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "report.pdf", "size": 10}, svctest.WithToken(""))
		expect(t, "init_upload without a token", r, http.StatusUnauthorized, 1000)
		r = srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "report.pdf", "size": 10, "public": true}, alice)
		expect(t, "public init_upload", r, http.StatusOK, storage.ErrCodePublicUploadsNotAllowed)

		r = srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "report.pdf", "size": 1, "contentType": "application/pdf"}, alice)
		expect(t, "init_upload", r, http.StatusOK, 0)
		r.DataAs(t, &plan)
		size := plan.PartSize + 123
		r = srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "report.pdf", "size": size, "contentType": "application/pdf"}, alice)
		expect(t, "init_upload", r, http.StatusOK, 0)
		r.DataAs(t, &plan)
		if plan.PartCount != 2 || !strings.HasPrefix(plan.Key, "priv/") || plan.ExpiresAt.IsZero() {
			t.Fatalf("plan = %+v", plan)
		}
		for _, field := range []string{`"key"`, `"claimId"`, `"originalFilename"`, `"partSize"`, `"partCount"`, `"expiresAt"`} {
			if !bytes.Contains(r.Data, []byte(field)) {
				t.Errorf("init_upload data %s lacks %s", r.Data, field)
			}
		}
		data := backendtest.Data(42, int(size))
		sendPart := func(n int, content []byte, as svctest.CallOption) svctest.Response {
			return srv.CallMultipart(t, "sys/storage", "upload_part", map[string]any{"claimId": plan.ClaimID, "partNumber": n},
				[]svctest.FilePart{{Field: "file", Filename: "blob", Content: bytes.NewReader(content)}}, as)
		}
		r = srv.Call(t, "sys/storage", "upload_part", map[string]any{"claimId": plan.ClaimID, "partNumber": 1}, alice)
		expect(t, "upload_part as JSON", r, http.StatusOK, storage.ErrCodeUploadRequiresMultipart)
		r = srv.CallMultipart(t, "sys/storage", "upload_part", map[string]any{"claimId": plan.ClaimID, "partNumber": 1}, nil, alice)
		expect(t, "upload_part without a file", r, http.StatusOK, storage.ErrCodeUploadRequiresFile)
		expect(t, "upload_part by another user", sendPart(1, data[:plan.PartSize], bob), http.StatusForbidden, 1100)
		expect(t, "upload_part 1", sendPart(1, data[:plan.PartSize], alice), http.StatusOK, 0)

		r = srv.Call(t, "sys/storage", "list_parts", map[string]any{"claimId": plan.ClaimID}, alice)
		expect(t, "list_parts", r, http.StatusOK, 0)
		if want := `{"parts":[{"partNumber":1,"size":` + jsonInt(plan.PartSize) + `}]}`; string(r.Data) != want {
			t.Errorf("list_parts data = %s, want %s", r.Data, want)
		}
		r = sendPart(2, data[plan.PartSize:], alice)
		expect(t, "upload_part 2", r, http.StatusOK, 0)
		if string(r.Data) != `{"partNumber":2,"size":123}` {
			t.Errorf("upload_part data = %s", r.Data)
		}
		var done storage.CompleteUploadResult
		r = srv.Call(t, "sys/storage", "complete_upload", map[string]any{"claimId": plan.ClaimID}, alice)
		expect(t, "complete_upload", r, http.StatusOK, 0)
		r.DataAs(t, &done)
		if done.Size != size || done.Key != plan.Key || done.ETag == "" || done.OriginalFilename != "report.pdf" || !bytes.Contains(r.Data, []byte(`"eTag"`)) {
			t.Errorf("complete_upload data = %s", r.Data)
		}
		r = srv.Call(t, "sys/storage", "complete_upload", map[string]any{"claimId": plan.ClaimID}, alice)
		expect(t, "second complete_upload", r, http.StatusOK, 0)
		r = srv.Call(t, "sys/storage", "complete_upload", map[string]any{"claimId": plan.ClaimID}, bob)
		expect(t, "complete_upload by another user", r, http.StatusForbidden, 1100)

		r = srv.Call(t, "sys/storage/file", "resolve", map[string]any{"keys": []string{plan.Key, "priv/none"}}, alice)
		expect(t, "resolve", r, http.StatusOK, 0)
		if !bytes.Contains(r.Data, []byte(`"uploadedBy":"alice"`)) || !bytes.Contains(r.Data, []byte(`"status":"uploaded"`)) {
			t.Errorf("resolve data = %s", r.Data)
		}
		r = srv.Call(t, "sys/storage/file", "resolve", map[string]any{"keys": []string{plan.Key}}, bob)
		expect(t, "resolve by another user", r, http.StatusOK, 0)
		if string(r.Data) != `{"files":[]}` {
			t.Errorf("resolve by another user = %s, want no files", r.Data)
		}

		get := func(path, token string) (*http.Response, []byte) {
			req, _ := http.NewRequest(http.MethodGet, path, nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			return srv.Do(t, req)
		}
		resp, body := get("/storage/files/"+plan.Key, srv.Token(t, svctest.User("alice")))
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) || resp.Header.Get("Content-Type") != "application/pdf" {
			t.Errorf("download = %d, %d bytes, %s", resp.StatusCode, len(body), resp.Header.Get("Content-Type"))
		}
		resp, body = get("/storage/files/"+plan.Key+"?__accessToken="+srv.Token(t, svctest.User("bob")), "")
		if resp.StatusCode != http.StatusForbidden || !bytes.Contains(body, []byte(`"code":1100`)) {
			t.Errorf("download by another user = %d %s", resp.StatusCode, body)
		}
		resp, body = get("/storage/files/priv%2F..%2Fx", "")
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"code":2200`)) {
			t.Errorf("download of a malformed key = %d %s", resp.StatusCode, body)
		}
		req, _ := http.NewRequest(http.MethodHead, "/storage/files/"+plan.Key, nil)
		req.Header.Set("Authorization", "Bearer "+srv.Token(t, svctest.User("alice")))
		if resp, body := srv.Do(t, req); resp.StatusCode != http.StatusOK || len(body) != 0 || resp.ContentLength != size {
			t.Errorf("HEAD = %d, %d body bytes, length %d", resp.StatusCode, len(body), resp.ContentLength)
		}

		var other storage.InitUploadResult
		srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "x.bin", "size": 5}, alice).DataAs(t, &other)
		expect(t, "abort by another user", srv.Call(t, "sys/storage", "abort_upload", map[string]any{"claimId": other.ClaimID}, bob), http.StatusForbidden, 1100)
		r = srv.Call(t, "sys/storage", "abort_upload", map[string]any{"claimId": other.ClaimID}, alice)
		expect(t, "abort_upload", r, http.StatusOK, 0)
		if string(r.Data) != "null" {
			t.Errorf("abort_upload data = %s, want null", r.Data)
		}
		expect(t, "abort_upload again", srv.Call(t, "sys/storage", "abort_upload", map[string]any{"claimId": other.ClaimID}, alice), http.StatusOK, 0)
		expect(t, "list_parts after abort", srv.Call(t, "sys/storage", "list_parts", map[string]any{"claimId": other.ClaimID}, alice), http.StatusForbidden, 1100)
	})
}

// TestUploadPartRateLimit: upload_part has the engine default rate limit like every storage
// action (spec §4.1, §8.1; wire-core §7.2) unless svc.storage.upload_part_rate_limit gives it
// its own maximum, counted over the engine period. Calls are sent as JSON (answered 2210): the
// limit is applied before the handler.
func TestUploadPartRateLimit(t *testing.T) {
	tests := []struct {
		name       string
		config     func(*config.Config)
		wantMax    int    // upload_part calls admitted
		wantInit   string // X-RateLimit-Limit of init_upload
		wantPeriod int    // upper bound of X-RateLimit-Reset, seconds
	}{
		{"engine default", func(*config.Config) {}, 100, "100", 300},
		{"engine default as configured", func(c *config.Config) {
			c.API.RateLimit = config.RateLimit{Max: 3, Period: time.Minute}
		}, 3, "3", 60},
		{"own maximum over the engine period", func(c *config.Config) {
			c.API.RateLimit = config.RateLimit{Max: 3, Period: time.Minute}
			c.Storage.UploadPartRateLimit = 5
		}, 5, "3", 60},
		{"negative inherits the engine default", func(c *config.Config) {
			c.API.RateLimit = config.RateLimit{Max: 3, Period: time.Minute}
			c.Storage.UploadPartRateLimit = -1
		}, 3, "3", 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := svctest.New(t, svctest.WithConfig(tt.config))
			alice := svctest.As(svctest.User("alice"))
			r := srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "a.bin", "size": 1}, alice)
			expect(t, "init_upload", r, http.StatusOK, 0)
			if got := r.Header.Get("X-RateLimit-Limit"); got != tt.wantInit {
				t.Errorf("init_upload X-RateLimit-Limit = %q, want %q", got, tt.wantInit)
			}
			var plan storage.InitUploadResult
			r.DataAs(t, &plan)
			params := map[string]any{"claimId": plan.ClaimID, "partNumber": 1}
			for i := 1; i <= tt.wantMax; i++ {
				r := srv.Call(t, "sys/storage", "upload_part", params, alice)
				expect(t, "upload_part "+strconv.Itoa(i), r, http.StatusOK, storage.ErrCodeUploadRequiresMultipart)
				if got, want := r.Header.Get("X-RateLimit-Limit"), strconv.Itoa(tt.wantMax); got != want {
					t.Fatalf("upload_part %d: X-RateLimit-Limit = %q, want %q", i, got, want)
				}
				if reset, err := strconv.Atoi(r.Header.Get("X-RateLimit-Reset")); err != nil || reset > tt.wantPeriod {
					t.Fatalf("upload_part %d: X-RateLimit-Reset = %q, want at most %d", i, r.Header.Get("X-RateLimit-Reset"), tt.wantPeriod)
				}
			}
			r = srv.Call(t, "sys/storage", "upload_part", params, alice)
			expect(t, "upload_part over the limit", r, http.StatusTooManyRequests, rpc.CodeTooManyRequests)
		})
	}
}

// TestChineseMessages compares whole zh-CN response bodies with the ones captured from the
// original (spec/wire-samples.txt).
func TestChineseMessages(t *testing.T) {
	srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) { c.I18n.Language = "zh-CN" }))
	alice := svctest.As(svctest.User("alice"))
	var plan storage.InitUploadResult
	srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "a.bin", "size": 1}, alice).DataAs(t, &plan)
	tests := []struct {
		name   string
		action string
		params map[string]any
		want   string
	}{
		{"upload_part with JSON body", "upload_part", map[string]any{"claimId": plan.ClaimID, "partNumber": 1},
			`{"code":2210,"message":"上传请求必须使用 'multipart/form-data' 格式","data":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := srv.Call(t, "sys/storage", tt.action, tt.params, alice)
			if got := strings.TrimSpace(string(r.Body)); got != tt.want {
				t.Errorf("body = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestProxyKeyPaths pins what happens to malformed keys on the way to the download proxy: the
// router redirects literal "//" and "." or ".." segments to the cleaned path with 307 before the
// proxy sees them; everything else that reaches it malformed, percent-encoded dot segments and
// slashes, a trailing slash and ".." inside a segment included, answers 2200 (wire-core §7.7).
func TestProxyKeyPaths(t *testing.T) {
	srv := svctest.New(t)
	client := *srv.HTTP.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	tests := []struct {
		name         string
		path         string
		wantStatus   int
		wantCode     int // envelope code when wantStatus is 200
		wantLocation string
	}{
		{"double slash", "pub//x.pdf", http.StatusTemporaryRedirect, 0, "/storage/files/pub/x.pdf"},
		{"dot segment", "pub/./x.pdf", http.StatusTemporaryRedirect, 0, "/storage/files/pub/x.pdf"},
		{"dot-dot segment", "pub/../priv/x.pdf", http.StatusTemporaryRedirect, 0, "/storage/files/priv/x.pdf"},
		{"dot-dot inside a segment", "pub/a..b.pdf", http.StatusOK, storage.ErrCodeInvalidFileKey, ""},
		{"dot-dot before the extension", "pub/x..pdf", http.StatusOK, storage.ErrCodeInvalidFileKey, ""},
		{"encoded dot-dot segment", "pub/%2E%2E/priv/x.pdf", http.StatusOK, storage.ErrCodeInvalidFileKey, ""},
		{"encoded slashes around dot-dot", "priv%2F..%2Fx", http.StatusOK, storage.ErrCodeInvalidFileKey, ""},
		{"encoded double slash", "pub%2F%2Fx", http.StatusOK, storage.ErrCodeInvalidFileKey, ""},
		{"trailing slash", "pub/x/", http.StatusOK, storage.ErrCodeInvalidFileKey, ""},
		{"backslash", "pub/a%5Cb", http.StatusOK, storage.ErrCodeInvalidFileKey, ""},
		{"well-formed missing key", "pub/x.pdf", http.StatusOK, storage.ErrCodeFileNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := client.Get(srv.URL + "/storage/files/" + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var env struct {
				Code int `json:"code"`
			}
			if resp.StatusCode == http.StatusOK {
				if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
					t.Fatalf("body is not an envelope: %v", err)
				}
			}
			if resp.StatusCode != tt.wantStatus || env.Code != tt.wantCode || resp.Header.Get("Location") != tt.wantLocation {
				t.Errorf("GET %s = %d code %d Location %q, want %d code %d Location %q", tt.path,
					resp.StatusCode, env.Code, resp.Header.Get("Location"), tt.wantStatus, tt.wantCode, tt.wantLocation)
			}
		})
	}
}

// TestAdoptionThroughServer uses the adoption API the server exposes to host code.
func TestAdoptionThroughServer(t *testing.T) {
	srv := svctest.New(t)
	alice := svctest.As(svctest.User("alice"))
	var plan storage.InitUploadResult
	srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "a.txt", "size": 3}, alice).DataAs(t, &plan)
	r := srv.CallMultipart(t, "sys/storage", "upload_part", map[string]any{"claimId": plan.ClaimID, "partNumber": 1},
		[]svctest.FilePart{{Field: "file", Filename: "a.txt", Content: strings.NewReader("abc")}}, alice)
	expect(t, "upload_part", r, http.StatusOK, 0)
	expect(t, "complete_upload", srv.Call(t, "sys/storage", "complete_upload", map[string]any{"claimId": plan.ClaimID}, alice), http.StatusOK, 0)
	st := srv.Storage()
	if st == nil {
		t.Fatal("the server exposes no storage service")
	}
	if err := srv.DB().InTx(t.Context(), func(ctx context.Context, tx bun.Tx) error {
		return st.Adopt(ctx, tx, svctest.User("alice"), plan.Key)
	}); err != nil {
		t.Fatalf("Adopt: %v", err)
	}
	r = srv.Call(t, "sys/storage/file", "resolve", map[string]any{"keys": []string{plan.Key}}, alice)
	if !bytes.Contains(r.Data, []byte(`"status":"claimed"`)) {
		t.Errorf("resolve after adoption = %s", r.Data)
	}
	r = srv.Call(t, "sys/storage", "complete_upload", map[string]any{"claimId": plan.ClaimID}, alice)
	expect(t, "complete_upload after adoption (claim consumed)", r, http.StatusForbidden, 1100)
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
