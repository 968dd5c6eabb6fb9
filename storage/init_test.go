package storage

import (
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
)

// shaped wraps a backend and changes what it reports (no multipart, a part-count cap) or makes
// its clean-up calls fail, for rows the real providers cannot produce.
type shaped struct {
	backend.Backend
	noMultipart bool
	maxParts    int
	failCleanup error
}

func (s shaped) Info() backend.Info {
	info := s.Backend.Info()
	if s.noMultipart {
		info.Multipart = false
	}
	if s.maxParts > 0 {
		info.MaxParts = s.maxParts
	}
	return info
}

func (s shaped) AbortMultipart(ctx context.Context, key, id string) error {
	if s.failCleanup != nil {
		return s.failCleanup
	}
	return s.Backend.AbortMultipart(ctx, key, id)
}

func (s shaped) Delete(ctx context.Context, key string) error {
	if s.failCleanup != nil {
		return s.failCleanup
	}
	return s.Backend.Delete(ctx, key)
}

// with returns a second service on the same database and clock over a reshaped backend.
func (e *env) with(b shaped) *env {
	b.Backend = e.be
	c := *e
	c.svc = newService(serviceDeps{cfg: e.svc.cfg, db: e.db, backend: b, clock: e.clock.Now,
		opts: Options{Events: e.events}, errs: e.svc.errs})
	c.be = b
	return &c
}

var keyPattern = regexp.MustCompile(`^priv/2026/07/10/[0-9a-f-]{36}\.pdf$`)

// TestInitUpload covers spec §3 row "(none) → init_upload → pending" and the init failures of
// wire-core §7.2 in their order.
func TestInitUpload(t *testing.T) {
	eachEnv(t, func(c *config.Storage) { c.MaxPendingClaims = 2 }, func(t *testing.T, e *env) {
		ps := e.be.Info().PartSize
		t.Run("valid params open a pending claim with its plan", func(t *testing.T) {
			res, err := e.svc.initUpload(e.ctx, user("u1"), InitUploadParams{Filename: ` docs\2026/report.pdf `, Size: 2*ps + 1, ContentType: "application/pdf"})
			wantErr(t, "init_upload", err, nil)
			if !keyPattern.MatchString(res.Key) {
				t.Errorf("key = %q, want priv/2026/07/10/<uuid>.pdf", res.Key)
			}
			if id, err := uuid.Parse(res.ClaimID); err != nil || id.Version() != 7 {
				t.Errorf("claimId = %q, want a UUIDv7", res.ClaimID)
			}
			if res.PartSize != ps || res.PartCount != 3 || res.OriginalFilename != "report.pdf" {
				t.Errorf("plan = %d × %d, name %q; want %d × 3, report.pdf", res.PartCount, res.PartSize, res.OriginalFilename, ps)
			}
			if want := e.clock.Now().Add(24 * time.Hour); !res.ExpiresAt.Equal(want) {
				t.Errorf("expiresAt = %v, want %v", res.ExpiresAt, want)
			}
			c := e.claim(res.ClaimID)
			if c == nil || c.Status != StatusPending || c.UploadID == "" || c.CreatedBy != "u1" || c.ContentType != "application/pdf" {
				t.Errorf("claim = %+v, want pending with a session, owner u1", c)
			}
		})
		t.Run("a small file has one part", func(t *testing.T) {
			res, err := e.svc.initUpload(e.ctx, user("u2"), InitUploadParams{Filename: "a", Size: 1})
			wantErr(t, "init_upload", err, nil)
			if res.PartCount != 1 || !regexp.MustCompile(`\.bin$`).MatchString(res.Key) {
				t.Errorf("partCount = %d, key %s; want 1 and a .bin key", res.PartCount, res.Key)
			}
		})
		t.Run("an unsafe content type is replaced", func(t *testing.T) {
			res, err := e.svc.initUpload(e.ctx, user("u3"), InitUploadParams{Filename: "x.png", Size: 1, ContentType: "text/html"})
			wantErr(t, "init_upload", err, nil)
			if c := e.claim(res.ClaimID); c.ContentType != "image/png" {
				t.Errorf("content type = %q, want image/png", c.ContentType)
			}
		})
		rows := []struct {
			name string
			p    *rpc.Principal
			in   InitUploadParams
			e    *env
			want error
		}{
			{"size over max_upload_size", user("u4"), InitUploadParams{Filename: "a.pdf", Size: int64(config.GiB) + 1}, e, ErrUploadSizeExceedsLimit},
			{"size checked before public", user("u4"), InitUploadParams{Filename: "a.pdf", Size: int64(config.GiB) + 1, Public: true}, e, ErrUploadSizeExceedsLimit},
			{"backend without multipart", user("u4"), InitUploadParams{Filename: "a.pdf", Size: 1}, e.with(shaped{noMultipart: true}), ErrMultipartNotSupported},
			{"public while public uploads are off", user("u4"), InitUploadParams{Filename: "..", Size: 1, Public: true}, e, ErrPublicUploadsNotAllowed},
			{"too many parts", user("u4"), InitUploadParams{Filename: "a.pdf", Size: 2*ps + 1}, e.with(shaped{maxParts: 2}), ErrUploadTooManyParts},
			{"filename ..", user("u4"), InitUploadParams{Filename: "..", Size: 1}, e, ErrInvalidFilename},
			{"filename with a control character", user("u4"), InitUploadParams{Filename: "a\x01.pdf", Size: 1}, e, ErrInvalidFilename},
			{"filename of only a directory", user("u4"), InitUploadParams{Filename: "dir/ ", Size: 1}, e, ErrInvalidFilename},
			{"anonymous principal", rpc.Anonymous(), InitUploadParams{Filename: "a.pdf", Size: 1}, e, rpc.ErrAccessDenied},
		}
		for _, tt := range rows {
			t.Run(tt.name, func(t *testing.T) {
				_, err := tt.e.svc.initUpload(e.ctx, tt.p, tt.in)
				wantErr(t, "init_upload", err, tt.want)
			})
		}
		t.Run("public allowed puts the key under pub/", func(t *testing.T) {
			e.svc.cfg.AllowPublicUploads = true
			defer func() { e.svc.cfg.AllowPublicUploads = false }()
			res, err := e.svc.initUpload(e.ctx, user("u5"), InitUploadParams{Filename: "a.png", Size: 1, Public: true})
			wantErr(t, "init_upload", err, nil)
			if !regexp.MustCompile(`^pub/`).MatchString(res.Key) {
				t.Errorf("key = %q, want pub/…", res.Key)
			}
		})
		t.Run("pending-claim limit per principal", func(t *testing.T) {
			u := e.start(user("u6"), "a.pdf", 1)
			e.start(user("u6"), "b.pdf", 1)
			_, err := e.svc.initUpload(e.ctx, user("u6"), InitUploadParams{Filename: "c.pdf", Size: 1})
			wantErr(t, "third init_upload", err, ErrTooManyPendingUploads)
			e.start(user("u7"), "other.pdf", 1) // the limit is per principal
			wantErr(t, "abort", e.svc.abortUpload(e.ctx, user("u6"), u.init.ClaimID), nil)
			e.start(user("u6"), "c.pdf", 1) // an aborted claim frees its slot
			e.clock.Advance(25 * time.Hour)
			e.start(user("u6"), "d.pdf", 1) // expired claims do not count
		})
	})
}

// TestSanitize covers the filename and content-type rules of wire-core §7.1.
func TestSanitize(t *testing.T) {
	t.Parallel()
	names := map[string]string{"a.pdf": "a.pdf", " x/y/z.txt ": "z.txt", `C:\dir\f.doc`: "f.doc", "名字.png": "名字.png"}
	for in, want := range names {
		if got, err := SanitizeFilename(in); err != nil || got != want {
			t.Errorf("SanitizeFilename(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", " ", ".", "..", "a/..", "a\nb", "a\x7f", "\xff"} {
		if _, err := SanitizeFilename(in); !errors.Is(err, ErrInvalidFilename) {
			t.Errorf("SanitizeFilename(%q) error = %v, want ErrInvalidFilename", in, err)
		}
	}
	types := []struct{ ct, name, want string }{
		{"image/png", "a.bin", "image/png"},
		{"IMAGE/PNG; q=1", "a.bin", "image/png"},
		{"application/pdf", "a", "application/pdf"},
		{"text/html", "a.jpg", "image/jpeg"},
		{"image/svg+xml", "a.svg", "application/octet-stream"},
		{"application/javascript", "a.js", "application/octet-stream"},
		{"", "report.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		{"garbage", "noext", "application/octet-stream"},
	}
	for _, tt := range types {
		if got := SanitizeContentType(tt.ct, tt.name); got != tt.want {
			t.Errorf("SanitizeContentType(%q, %q) = %q, want %q", tt.ct, tt.name, got, tt.want)
		}
	}
	for _, tt := range []struct {
		size, ps int64
		want     int
	}{{1, 4, 1}, {4, 4, 1}, {5, 4, 2}, {8, 4, 2}, {9, 4, 3}} {
		if got := PartCount(tt.size, tt.ps); got != tt.want {
			t.Errorf("PartCount(%d, %d) = %d, want %d", tt.size, tt.ps, got, tt.want)
		}
	}
	if got := ObjectKey(false, "x.tar.gz", time.Date(2026, 1, 2, 23, 0, 0, 0, time.UTC)); !regexp.MustCompile(`^priv/2026/01/02/[0-9a-f-]{36}\.gz$`).MatchString(got) {
		t.Errorf("ObjectKey = %q", got)
	}
	if got := ObjectKey(true, "x.p-d", time.Now()); !regexp.MustCompile(`^pub/.*\.bin$`).MatchString(got) {
		t.Errorf("ObjectKey with an unusual extension = %q, want a .bin key", got)
	}
	// Planned keys never contain ".." (wire-core §7.7 refuses such keys with 2200), whatever dots
	// the filename has; extensions are kept up to 32 characters.
	ext32, ext33 := "."+strings.Repeat("a", 32), "."+strings.Repeat("a", 33)
	for _, tt := range []struct{ filename, wantExt string }{
		{"x..pdf", ".pdf"}, {"x..", ".bin"}, {"...", ".bin"}, {"a.", ".bin"}, {".hidden", ".hidden"},
		{"x.." + "pdf.", ".bin"}, {"x" + ext32, ext32}, {"x" + ext33, ".bin"},
	} {
		name, err := SanitizeFilename(tt.filename)
		if err != nil {
			t.Fatalf("SanitizeFilename(%q): %v", tt.filename, err)
		}
		for _, public := range []bool{false, true} {
			got := ObjectKey(public, name, time.Now())
			if !backend.ValidKey(got) || !strings.HasSuffix(got, tt.wantExt) || strings.Contains(got, "..") {
				t.Errorf("ObjectKey(%v, %q) = %q, want a valid key ending in %s", public, name, got, tt.wantExt)
			}
		}
	}
}

// TestParamsValidation covers the 1400 rules of the params (spec §8.2).
func TestParamsValidation(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return string(make([]rune, n)) }
	rows := []struct {
		name string
		v    rpc.Validator
		ok   bool
	}{
		{"init valid", &InitUploadParams{Filename: "a", Size: 1}, true},
		{"init no filename", &InitUploadParams{Size: 1}, false},
		{"init filename 256", &InitUploadParams{Filename: long(256), Size: 1}, false},
		{"init filename 255", &InitUploadParams{Filename: long(255), Size: 1}, true},
		{"init size 0", &InitUploadParams{Filename: "a"}, false},
		{"init contentType 128", &InitUploadParams{Filename: "a", Size: 1, ContentType: long(128)}, false},
		{"part valid", &UploadPartParams{ClaimID: "c", PartNumber: 1}, true},
		{"part no claim", &UploadPartParams{PartNumber: 1}, false},
		{"part number 0", &UploadPartParams{ClaimID: "c"}, false},
		{"part number -1", &UploadPartParams{ClaimID: "c", PartNumber: -1}, false},
		{"claim no id", &ClaimParams{}, false},
		{"resolve none", &ResolveParams{}, false},
		{"resolve 200", &ResolveParams{Keys: make200("k")}, true},
		{"resolve 201", &ResolveParams{Keys: append(make200("k"), "k")}, false},
		{"resolve empty key", &ResolveParams{Keys: []string{"a", ""}}, false},
	}
	for _, tt := range rows {
		err := tt.v.Validate()
		if (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if re, isRPC := rpc.AsError(err); err != nil && (!isRPC || re.Code != rpc.CodeBadRequest) {
			t.Errorf("%s: Validate() = %v, want a 1400 error", tt.name, err)
		}
	}
}

func make200(k string) []string {
	out := make([]string, 200)
	for i := range out {
		out[i] = k
	}
	return out
}

var _ io.Reader = onlyReader{}
