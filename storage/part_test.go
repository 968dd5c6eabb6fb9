package storage

import (
	"bytes"
	"encoding/json"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/rpc"
)

// listed returns "number:size" of the recorded parts.
func (u *upload) listed() []string {
	u.e.t.Helper()
	res, err := u.e.svc.listParts(u.e.ctx, u.p, u.init.ClaimID)
	if err != nil {
		u.e.t.Fatalf("list_parts: %v", err)
	}
	out := make([]string, len(res.Parts))
	for i, p := range res.Parts {
		out[i] = itoa(p.PartNumber) + ":" + itoa(int(p.Size))
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// TestUploadPart covers spec §3 row "pending → upload_part → pending" and the upload_part
// failures of wire-core §7.2 in their order.
func TestUploadPart(t *testing.T) {
	eachEnv(t, nil, func(t *testing.T, e *env) {
		ps := int(e.be.Info().PartSize)
		size := int64(2*ps + 100) // parts: ps, ps, 100
		owner := user("u1")
		t.Run("valid parts are recorded with their size, also concurrently", func(t *testing.T) {
			u := e.start(owner, "a.pdf", size)
			var wg sync.WaitGroup
			errs := make([]error, 3)
			for n := 1; n <= 3; n++ {
				wg.Go(func() { _, errs[n-1] = u.send(n, u.part(n)) })
			}
			wg.Wait()
			for n, err := range errs {
				wantErr(t, "upload_part "+itoa(n+1), err, nil)
			}
			if got, want := u.listed(), []string{"1:" + itoa(ps), "2:" + itoa(ps), "3:100"}; !equal(got, want) {
				t.Errorf("list_parts = %v, want %v", got, want)
			}
		})
		t.Run("re-sending a part replaces it", func(t *testing.T) {
			u := e.start(owner, "a.pdf", size)
			res, err := u.send(3, make([]byte, 50))
			wantErr(t, "first part 3", err, nil)
			if res.PartNumber != 3 || res.Size != 50 {
				t.Errorf("upload_part = %+v, want part 3 of 50 bytes", res)
			}
			_, err = u.send(3, u.part(3))
			wantErr(t, "second part 3", err, nil)
			if got := u.listed(); !equal(got, []string{"3:100"}) {
				t.Errorf("list_parts = %v, want [3:100]", got)
			}
		})
		t.Run("part sizes are enforced while streaming", func(t *testing.T) {
			u := e.start(owner, "a.pdf", size)
			_, err := u.send(4, []byte("x"))
			wantErr(t, "part 4 of 3", err, ErrUploadPartNumberOutOfRange)
			_, err = u.send(1, make([]byte, ps+1))
			wantErr(t, "part 1 one byte too large", err, ErrUploadPartTooLarge)
			_, err = u.send(3, make([]byte, ps+1))
			wantErr(t, "last part larger than the part size", err, ErrUploadPartTooLarge)
			_, err = u.send(2, make([]byte, ps-1))
			wantErr(t, "part 2 one byte short", err, ErrUploadPartTooSmall)
			_, err = u.send(3, nil)
			wantErr(t, "empty last part", err, ErrUploadPartTooSmall)
			_, err = e.svc.uploadPart(e.ctx, owner, u.init.ClaimID, 1, bytes.NewReader(make([]byte, ps+1)), int64(ps+1))
			wantErr(t, "known size too large", err, ErrUploadPartTooLarge)
			_, err = e.svc.uploadPart(e.ctx, owner, u.init.ClaimID, 1, bytes.NewReader(make([]byte, 5)), 5)
			wantErr(t, "known size too small", err, ErrUploadPartTooSmall)
			if got := u.listed(); len(got) != 0 {
				t.Errorf("list_parts after rejected parts = %v, want none", got)
			}
		})
		t.Run("a rejected re-send forgets the part it replaced", func(t *testing.T) {
			u := e.start(owner, "a.pdf", size)
			u.sendAll()
			_, err := u.send(1, make([]byte, ps+10))
			wantErr(t, "oversized re-send", err, ErrUploadPartTooLarge)
			if got, want := u.listed(), []string{"2:" + itoa(ps), "3:100"}; !equal(got, want) {
				t.Errorf("list_parts = %v, want %v", got, want)
			}
			_, err = u.complete()
			wantErr(t, "complete without part 1", err, ErrUploadPartsIncomplete)
			_, err = u.send(1, u.part(1))
			wantErr(t, "good re-send", err, nil)
			_, err = u.complete()
			wantErr(t, "complete", err, nil)
			if !bytes.Equal(e.objectBytes(u.init.Key), u.data) {
				t.Errorf("object differs from the data sent")
			}
		})
		t.Run("claim checks in order", func(t *testing.T) {
			u := e.start(owner, "a.pdf", size)
			_, err := e.svc.uploadPart(e.ctx, user("intruder"), u.init.ClaimID, 1, bytes.NewReader(u.part(1)), -1)
			wantErr(t, "another principal's claim", err, rpc.ErrAccessDenied)
			_, err = e.svc.uploadPart(e.ctx, owner, newID(), 1, bytes.NewReader(u.part(1)), -1)
			wantErr(t, "unknown claim", err, rpc.ErrAccessDenied)
			_, err = e.with(shaped{noMultipart: true}).svc.uploadPart(e.ctx, owner, u.init.ClaimID, 1, bytes.NewReader(u.part(1)), -1)
			wantErr(t, "backend without multipart", err, ErrMultipartNotSupported)

			limit := e.svc.cfg.MaxUploadSize
			e.svc.cfg.MaxUploadSize = 10
			_, err = u.send(1, u.part(1))
			e.svc.cfg.MaxUploadSize = limit
			wantErr(t, "claim over the current size limit", err, ErrUploadSizeExceedsLimit)

			noSession := e.start(owner, "b.pdf", size)
			if _, err := e.svc.claims.setUploadID(e.ctx, e.db, noSession.init.ClaimID, ""); err != nil {
				t.Fatal(err)
			}
			_, err = noSession.send(1, noSession.part(1))
			wantErr(t, "claim without a session", err, ErrClaimNotMultipart)

			done := e.start(owner, "c.pdf", 10)
			done.sendAll()
			if _, err := done.complete(); err != nil {
				t.Fatal(err)
			}
			_, err = done.send(1, done.part(1))
			wantErr(t, "uploaded claim", err, ErrClaimNotPending)

			e.clock.Advance(24 * time.Hour)
			_, err = u.send(1, u.part(1))
			wantErr(t, "expired claim", err, ErrClaimExpired)
		})
	})
}

// fileSource is an rpc.FileSource with at most one file part.
type fileSource struct{ file rpc.File }

func (f fileSource) File(field string) (rpc.File, bool, error) {
	if f.file == nil || f.file.Field() != field {
		return nil, false, nil
	}
	return f.file, true, nil
}

type part struct {
	*bytes.Reader
	field string
}

func (p part) Field() string                { return p.field }
func (p part) Filename() string             { return "blob" }
func (p part) Header() textproto.MIMEHeader { return textproto.MIMEHeader{} }
func (p part) Size() int64                  { return -1 }

// TestUploadPartEnvelope covers 2210 and 2211, decided by the handler before the claim is read.
func TestUploadPartEnvelope(t *testing.T) {
	clock := newClock()
	e := newEnv(t, migrated(t, "sqlite"), newBackend(t, "memory", clock.Now), clock, nil, Options{})
	u := e.start(user("u1"), "a.bin", 10)
	params := UploadPartParams{ClaimID: u.init.ClaimID, PartNumber: 1}
	call := rpc.Call{Principal: user("u1")}
	_, err := e.svc.handleUploadPart(e.ctx, call, params)
	wantErr(t, "JSON request", err, ErrUploadRequiresMultipart)
	call.Files = fileSource{file: part{bytes.NewReader(u.data), "other"}}
	_, err = e.svc.handleUploadPart(e.ctx, call, params)
	wantErr(t, "no file part", err, ErrUploadRequiresFile)
	_, err = e.svc.handleUploadPart(e.ctx, rpc.Call{Principal: user("u1")}, UploadPartParams{ClaimID: newID(), PartNumber: 1})
	wantErr(t, "JSON request for an unknown claim", err, ErrUploadRequiresMultipart)
	call.Files = fileSource{file: part{bytes.NewReader(u.data), "file"}}
	res, err := e.svc.handleUploadPart(e.ctx, call, params)
	wantErr(t, "multipart request", err, nil)
	if res.PartNumber != 1 || res.Size != 10 {
		t.Errorf("upload_part = %+v, want part 1 of 10 bytes", res)
	}
}

// TestListParts covers list_parts: ascending parts without ETags, and 1100, 2203, 2204, 2212 in
// the order of wire-core §7.2, never 2205.
func TestListParts(t *testing.T) {
	eachEnv(t, nil, func(t *testing.T, e *env) {
		ps := e.be.Info().PartSize
		owner := user("u1")
		u := e.start(owner, "a.pdf", 2*ps+7)
		for _, n := range []int{3, 1} {
			if _, err := u.send(n, u.part(n)); err != nil {
				t.Fatal(err)
			}
		}
		res, err := e.svc.listParts(e.ctx, owner, u.init.ClaimID)
		wantErr(t, "list_parts", err, nil)
		body, _ := json.Marshal(res)
		if want := `{"parts":[{"partNumber":1,"size":` + itoa(int(ps)) + `},{"partNumber":3,"size":7}]}`; string(body) != want {
			t.Errorf("list_parts = %s, want %s", body, want)
		}
		_, err = e.svc.listParts(e.ctx, user("other"), u.init.ClaimID)
		wantErr(t, "another principal", err, rpc.ErrAccessDenied)
		_, err = e.svc.listParts(e.ctx, owner, "no-such-claim")
		wantErr(t, "unknown claim", err, rpc.ErrAccessDenied)
		empty := e.start(owner, "b.pdf", 1)
		if res, err := e.svc.listParts(e.ctx, owner, empty.init.ClaimID); err != nil || res.Parts == nil || len(res.Parts) != 0 {
			t.Errorf("list_parts of a new claim = %+v, %v; want an empty list", res, err)
		}
		if _, err := e.svc.claims.setUploadID(e.ctx, e.db, empty.init.ClaimID, ""); err != nil {
			t.Fatal(err)
		}
		_, err = e.svc.listParts(e.ctx, owner, empty.init.ClaimID)
		wantErr(t, "claim without a session", err, ErrClaimNotMultipart)
		// wire-core §7.2: list_parts does not re-check the size cap (no 2205); upload_part and
		// complete_upload do, before 2212.
		bare := e.start(owner, "d.pdf", 10)
		if _, err := e.svc.claims.setUploadID(e.ctx, e.db, bare.init.ClaimID, ""); err != nil {
			t.Fatal(err)
		}
		limit := e.svc.cfg.MaxUploadSize
		e.svc.cfg.MaxUploadSize = 5
		overCap, err := e.svc.listParts(e.ctx, owner, u.init.ClaimID)
		_, bareListErr := e.svc.listParts(e.ctx, owner, bare.init.ClaimID)
		_, barePartErr := bare.send(1, bare.part(1))
		_, bareCompleteErr := bare.complete()
		e.svc.cfg.MaxUploadSize = limit
		wantErr(t, "list_parts over the current size limit", err, nil)
		if len(overCap.Parts) != 2 {
			t.Errorf("list_parts over the size limit = %+v, want parts 1 and 3", overCap.Parts)
		}
		wantErr(t, "list_parts without a session over the size limit", bareListErr, ErrClaimNotMultipart)
		wantErr(t, "upload_part without a session over the size limit", barePartErr, ErrUploadSizeExceedsLimit)
		wantErr(t, "complete_upload without a session over the size limit", bareCompleteErr, ErrUploadSizeExceedsLimit)
		done := e.start(owner, "c.pdf", 5)
		done.sendAll()
		if _, err := done.complete(); err != nil {
			t.Fatal(err)
		}
		_, err = e.svc.listParts(e.ctx, owner, done.init.ClaimID)
		wantErr(t, "uploaded claim", err, ErrClaimNotPending)
		e.clock.Advance(24*time.Hour + time.Second)
		_, err = e.svc.listParts(e.ctx, owner, u.init.ClaimID)
		wantErr(t, "expired claim", err, ErrClaimExpired)
	})
}
