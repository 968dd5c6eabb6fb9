// Package backendtest is the conformance suite every storage backend passes: the memory,
// filesystem and objstore providers run it from their own tests, and so can a host's backend.
//
//	func TestConformance(t *testing.T) {
//		backendtest.Run(t, func(t *testing.T) backend.Backend { return memory.New(nil) })
//	}
package backendtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/storage/backend"
)

// Run runs every conformance test against fresh backends made by newBackend, which must return
// a started backend that is cleaned up when the test ends.
func Run(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b backend.Backend)
	}{
		{"InvalidKeys", testInvalidKeys},
		{"PutGetStat", testPutGetStat},
		{"PutUnknownSize", testPutUnknownSize},
		{"PutShortBody", testPutShortBody},
		{"GetRange", testGetRange},
		{"Delete", testDelete},
		{"Copy", testCopy},
		{"Multipart", testMultipart},
		{"MultipartUnknownSizeLastPart", testMultipartUnknownSize},
		{"MultipartReplacePart", testMultipartReplacePart},
		{"MultipartSupersedeStalledPart", testMultipartSupersede},
		{"MultipartMissingPart", testMultipartMissingPart},
		{"MultipartShortPart", testMultipartShortPart},
		{"Abort", testAbort},
		{"AbortAllSessionsOfKey", testAbortAll},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newBackend(t)) })
	}
}

// Data returns n deterministic pseudo-random bytes for seed.
func Data(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n - n%8; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// key returns a key unique to the test, shaped like the storage module's keys.
func key(t *testing.T, suffix string) string {
	return "priv/2026/07/10/" + strconv.FormatUint(rand.Uint64(), 16) + suffix
}

func read(t *testing.T, b backend.Backend, k string, rng *backend.Range) ([]byte, backend.Object) {
	t.Helper()
	rc, obj, err := b.Get(ctx(t), k, rng)
	if err != nil {
		t.Fatalf("Get(%s, %v): %v", k, rng, err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", k, err)
	}
	return got, obj
}

func put(t *testing.T, b backend.Backend, k string, data []byte) backend.Object {
	t.Helper()
	obj, err := b.Put(ctx(t), k, bytes.NewReader(data), int64(len(data)), "application/pdf")
	if err != nil {
		t.Fatalf("Put(%s): %v", k, err)
	}
	return obj
}

func testInvalidKeys(t *testing.T, b backend.Backend) {
	for _, k := range []string{"", "/abs/key", "a//b", "a/b/", "../escape", "a/../../b", "a..b", "a/b..pdf", "a/./b", `a\b`, "a\x00b", "a\nb", "a\x7fb"} {
		if _, err := b.Put(ctx(t), k, bytes.NewReader([]byte("x")), 1, ""); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Put(%q) error = %v, want ErrInvalidKey", k, err)
		}
		if _, err := b.Stat(ctx(t), k); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Stat(%q) error = %v, want ErrInvalidKey", k, err)
		}
		if _, _, err := b.Get(ctx(t), k, nil); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Get(%q) error = %v, want ErrInvalidKey", k, err)
		}
		if err := b.Delete(ctx(t), k); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Delete(%q) error = %v, want ErrInvalidKey", k, err)
		}
		if _, err := b.InitMultipart(ctx(t), k, ""); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("InitMultipart(%q) error = %v, want ErrInvalidKey", k, err)
		}
	}
}

func testPutGetStat(t *testing.T, b backend.Backend) {
	k := key(t, ".pdf")
	data := Data(1, 100_000)
	obj := put(t, b, k, data)
	if obj.Key != k || obj.Size != int64(len(data)) || obj.ETag == "" {
		t.Errorf("Put = %+v, want key %s, size %d and an ETag", obj, k, len(data))
	}
	got, gobj := read(t, b, k, nil)
	if !bytes.Equal(got, data) {
		t.Errorf("Get returned %d bytes that differ from the %d put", len(got), len(data))
	}
	st, err := b.Stat(ctx(t), k)
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	if st.Size != obj.Size || st.ETag != obj.ETag || gobj.ETag != obj.ETag {
		t.Errorf("Stat = %+v, Get = %+v, want size %d and ETag %s", st, gobj, obj.Size, obj.ETag)
	}
	if st.LastModified.IsZero() {
		t.Errorf("Stat LastModified is zero")
	}
	if _, err := b.Stat(ctx(t), key(t, ".missing")); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Stat(missing) error = %v, want ErrNotFound", err)
	}
	if _, _, err := b.Get(ctx(t), key(t, ".missing"), nil); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Get(missing) error = %v, want ErrNotFound", err)
	}
}

func testPutUnknownSize(t *testing.T, b backend.Backend) {
	k := key(t, ".bin")
	data := Data(2, 70_001)
	obj, err := b.Put(ctx(t), k, io.MultiReader(bytes.NewReader(data)), -1, "")
	if err != nil {
		t.Fatalf("Put(size -1): %v", err)
	}
	if obj.Size != int64(len(data)) {
		t.Errorf("size = %d, want %d", obj.Size, len(data))
	}
	if got, _ := read(t, b, k, nil); !bytes.Equal(got, data) {
		t.Errorf("content differs after Put with unknown size")
	}
}

func testPutShortBody(t *testing.T, b backend.Backend) {
	k := key(t, ".bin")
	if _, err := b.Put(ctx(t), k, bytes.NewReader(make([]byte, 5)), 10, ""); err == nil {
		t.Fatalf("Put of 5 bytes announced as 10 succeeded")
	}
	if _, err := b.Stat(ctx(t), k); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("after a short Put, Stat error = %v, want ErrNotFound", err)
	}
}

func testGetRange(t *testing.T, b backend.Backend) {
	k := key(t, ".bin")
	data := Data(3, 10_000)
	put(t, b, k, data)
	for _, r := range []backend.Range{{Offset: 0, Length: 1}, {Offset: 0, Length: 10_000}, {Offset: 9_999, Length: 1}, {Offset: 1234, Length: 4321}} {
		got, obj := read(t, b, k, &r)
		if want := data[r.Offset : r.Offset+r.Length]; !bytes.Equal(got, want) {
			t.Errorf("range %+v: got %d bytes that differ from the %d wanted", r, len(got), len(want))
		}
		if obj.Size != int64(len(data)) {
			t.Errorf("range %+v: Object.Size = %d, want the whole size %d", r, obj.Size, len(data))
		}
	}
}

func testDelete(t *testing.T, b backend.Backend) {
	k := key(t, ".bin")
	put(t, b, k, []byte("hello"))
	if err := b.Delete(ctx(t), k); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := b.Stat(ctx(t), k); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Stat after Delete error = %v, want ErrNotFound", err)
	}
	if err := b.Delete(ctx(t), k); err != nil {
		t.Errorf("Delete of a missing object = %v, want nil", err)
	}
}

func testCopy(t *testing.T, b backend.Backend) {
	src, dst := key(t, ".bin"), key(t, ".bin")
	data := Data(4, 12_345)
	put(t, b, src, data)
	obj, err := b.Copy(ctx(t), src, dst)
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	if obj.Key != dst || obj.Size != int64(len(data)) {
		t.Errorf("Copy = %+v, want key %s size %d", obj, dst, len(data))
	}
	if got, _ := read(t, b, dst, nil); !bytes.Equal(got, data) {
		t.Errorf("copied content differs")
	}
	if _, err := b.Copy(ctx(t), key(t, ".missing"), key(t, ".bin")); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Copy(missing) error = %v, want ErrNotFound", err)
	}
}

// plan returns the data of an upload of n full parts plus a short last part.
func plan(b backend.Backend, seed uint64, full int, last int) ([]byte, []int64) {
	ps := b.Info().PartSize
	var sizes []int64
	for range full {
		sizes = append(sizes, ps)
	}
	sizes = append(sizes, int64(last))
	total := int64(0)
	for _, s := range sizes {
		total += s
	}
	return Data(seed, int(total)), sizes
}

func putParts(t *testing.T, b backend.Backend, k, id string, data []byte, sizes []int64) []backend.Part {
	t.Helper()
	parts := make([]backend.Part, len(sizes))
	var wg sync.WaitGroup
	errs := make([]error, len(sizes))
	off := int64(0)
	for i, s := range sizes {
		chunk := data[off : off+s]
		off += s
		wg.Go(func() {
			p, err := b.PutPart(ctx(t), k, id, i+1, bytes.NewReader(chunk), s)
			parts[i], errs[i] = p, err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("PutPart(%d): %v", i+1, err)
		}
		if parts[i].Number != i+1 || parts[i].Size != sizes[i] || parts[i].ETag == "" {
			t.Fatalf("PutPart(%d) = %+v, want number %d, size %d and an ETag", i+1, parts[i], i+1, sizes[i])
		}
	}
	return parts
}

func testMultipart(t *testing.T, b backend.Backend) {
	k := key(t, ".pdf")
	data, sizes := plan(b, 5, 2, 1000)
	id, err := b.InitMultipart(ctx(t), k, "application/pdf")
	if err != nil {
		t.Fatalf("InitMultipart: %v", err)
	}
	parts := putParts(t, b, k, id, data, sizes) // concurrently
	obj, err := b.CompleteMultipart(ctx(t), k, id, parts)
	if err != nil {
		t.Fatalf("CompleteMultipart: %v", err)
	}
	if obj.Size != int64(len(data)) || obj.ETag == "" {
		t.Errorf("CompleteMultipart = %+v, want size %d and an ETag", obj, len(data))
	}
	if got, _ := read(t, b, k, nil); !bytes.Equal(got, data) {
		t.Errorf("assembled object differs from the parts")
	}
	if st, err := b.Stat(ctx(t), k); err != nil || st.ETag != obj.ETag {
		t.Errorf("Stat = %+v, %v; want ETag %s", st, err, obj.ETag)
	}
	if _, err := b.PutPart(ctx(t), k, id, 1, bytes.NewReader([]byte("x")), 1); !errors.Is(err, backend.ErrSessionNotFound) {
		t.Errorf("PutPart after completion error = %v, want ErrSessionNotFound", err)
	}
	// S3 may accept a repeated completion; either answer is allowed, but the object must stay.
	if again, err := b.CompleteMultipart(ctx(t), k, id, parts); err != nil && !errors.Is(err, backend.ErrSessionNotFound) {
		t.Errorf("second CompleteMultipart error = %v, want nil or ErrSessionNotFound", err)
	} else if err == nil && again.Size != obj.Size {
		t.Errorf("second CompleteMultipart = %+v, want the same object of %d bytes", again, obj.Size)
	}
	if got, _ := read(t, b, k, nil); !bytes.Equal(got, data) {
		t.Errorf("object differs after a second completion")
	}
}

func testMultipartUnknownSize(t *testing.T, b backend.Backend) {
	k := key(t, ".bin")
	data, sizes := plan(b, 6, 1, 777)
	id, err := b.InitMultipart(ctx(t), k, "")
	if err != nil {
		t.Fatalf("InitMultipart: %v", err)
	}
	p1, err := b.PutPart(ctx(t), k, id, 1, bytes.NewReader(data[:sizes[0]]), sizes[0])
	if err != nil {
		t.Fatalf("PutPart(1): %v", err)
	}
	p2, err := b.PutPart(ctx(t), k, id, 2, io.MultiReader(bytes.NewReader(data[sizes[0]:])), -1)
	if err != nil {
		t.Fatalf("PutPart(2, size -1): %v", err)
	}
	if p2.Size != sizes[1] {
		t.Errorf("part 2 size = %d, want %d", p2.Size, sizes[1])
	}
	if _, err := b.CompleteMultipart(ctx(t), k, id, []backend.Part{p1, p2}); err != nil {
		t.Fatalf("CompleteMultipart: %v", err)
	}
	if got, _ := read(t, b, k, nil); !bytes.Equal(got, data) {
		t.Errorf("assembled object differs")
	}
}

func testMultipartReplacePart(t *testing.T, b backend.Backend) {
	k := key(t, ".bin")
	data, sizes := plan(b, 7, 1, 500)
	id, err := b.InitMultipart(ctx(t), k, "")
	if err != nil {
		t.Fatalf("InitMultipart: %v", err)
	}
	stale, err := b.PutPart(ctx(t), k, id, 2, bytes.NewReader(Data(99, 500)), 500)
	if err != nil {
		t.Fatalf("PutPart(2, first): %v", err)
	}
	parts := putParts(t, b, k, id, data, sizes) // replaces part 2
	if _, err := b.CompleteMultipart(ctx(t), k, id, []backend.Part{parts[0], stale}); !errors.Is(err, backend.ErrInvalidPart) {
		t.Fatalf("CompleteMultipart with a replaced part's ETag error = %v, want ErrInvalidPart", err)
	}
	if _, err := b.CompleteMultipart(ctx(t), k, id, parts); err != nil {
		t.Fatalf("CompleteMultipart: %v", err)
	}
	if got, _ := read(t, b, k, nil); !bytes.Equal(got, data) {
		t.Errorf("assembled object does not hold the replacing part")
	}
}

// testMultipartSupersede is issue #11's stalled upload: a transfer of part 1 whose body stalls
// mid-part must not hold up the same part sent again, which completes at once; the stalled
// transfer, when its body finally moves, answers ErrSuperseded and cannot overwrite the part.
func testMultipartSupersede(t *testing.T, b backend.Backend) {
	k := key(t, ".bin")
	id, err := b.InitMultipart(ctx(t), k, "")
	if err != nil {
		t.Fatalf("InitMultipart: %v", err)
	}
	const size = 5000
	stale, fresh := Data(1, size), Data(2, size)
	pr, pw := io.Pipe()
	older := make(chan error, 1)
	go func() {
		_, err := b.PutPart(ctx(t), k, id, 1, pr, size)
		older <- err
	}()
	// The pipe hands the bytes over only once the backend reads them: the older transfer is open.
	if _, err := pw.Write(stale[:100]); err != nil {
		t.Fatalf("write the start of the stalled part: %v", err)
	}

	newer := make(chan error, 1)
	var part backend.Part
	go func() {
		var err error
		part, err = b.PutPart(ctx(t), k, id, 1, bytes.NewReader(fresh), size)
		newer <- err
	}()
	select {
	case err := <-newer:
		if err != nil {
			t.Fatalf("PutPart of the re-sent part: %v", err)
		}
	case <-time.After(30 * time.Second): // a failure bound, not a synchronisation
		t.Fatal("the re-sent part waited behind the stalled transfer")
	}

	go func() { // the stalled client wakes up and sends the rest
		_, _ = pw.Write(stale[100:])
		_ = pw.Close()
	}()
	if err := <-older; !errors.Is(err, backend.ErrSuperseded) {
		t.Errorf("stalled transfer error = %v, want ErrSuperseded", err)
	}
	_ = pr.CloseWithError(io.ErrClosedPipe) // unblock the writer if the backend stopped reading
	if _, err := b.CompleteMultipart(ctx(t), k, id, []backend.Part{part}); err != nil {
		t.Fatalf("CompleteMultipart with the re-sent part: %v", err)
	}
	if got, _ := read(t, b, k, nil); !bytes.Equal(got, fresh) {
		t.Errorf("stored part is not the re-sent one")
	}
}

func testMultipartMissingPart(t *testing.T, b backend.Backend) {
	k := key(t, ".bin")
	id, err := b.InitMultipart(ctx(t), k, "")
	if err != nil {
		t.Fatalf("InitMultipart: %v", err)
	}
	t.Cleanup(func() { _ = b.AbortMultipart(context.Background(), k, id) })
	p, err := b.PutPart(ctx(t), k, id, 1, bytes.NewReader([]byte("abc")), 3)
	if err != nil {
		t.Fatalf("PutPart: %v", err)
	}
	missing := backend.Part{Number: 2, ETag: p.ETag, Size: 3}
	if _, err := b.CompleteMultipart(ctx(t), k, id, []backend.Part{missing}); !errors.Is(err, backend.ErrInvalidPart) {
		t.Errorf("CompleteMultipart with a part never written error = %v, want ErrInvalidPart", err)
	}
	if _, err := b.Stat(ctx(t), k); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("after a failed completion Stat error = %v, want ErrNotFound", err)
	}
}

func testMultipartShortPart(t *testing.T, b backend.Backend) {
	k := key(t, ".bin")
	id, err := b.InitMultipart(ctx(t), k, "")
	if err != nil {
		t.Fatalf("InitMultipart: %v", err)
	}
	t.Cleanup(func() { _ = b.AbortMultipart(context.Background(), k, id) })
	if _, err := b.PutPart(ctx(t), k, id, 1, bytes.NewReader([]byte("abc")), 10); err == nil {
		t.Fatalf("PutPart of 3 bytes announced as 10 succeeded")
	}
	if _, err := b.CompleteMultipart(ctx(t), k, id, []backend.Part{{Number: 1, ETag: "x", Size: 10}}); !errors.Is(err, backend.ErrInvalidPart) {
		t.Errorf("CompleteMultipart after a failed part error = %v, want ErrInvalidPart", err)
	}
}

func testAbort(t *testing.T, b backend.Backend) {
	k := key(t, ".bin")
	id, err := b.InitMultipart(ctx(t), k, "")
	if err != nil {
		t.Fatalf("InitMultipart: %v", err)
	}
	if _, err := b.PutPart(ctx(t), k, id, 1, bytes.NewReader([]byte("abc")), 3); err != nil {
		t.Fatalf("PutPart: %v", err)
	}
	if err := b.AbortMultipart(ctx(t), k, id); err != nil {
		t.Fatalf("AbortMultipart: %v", err)
	}
	if _, err := b.PutPart(ctx(t), k, id, 2, bytes.NewReader([]byte("abc")), 3); !errors.Is(err, backend.ErrSessionNotFound) {
		t.Errorf("PutPart after abort error = %v, want ErrSessionNotFound", err)
	}
	if err := b.AbortMultipart(ctx(t), k, id); err != nil {
		t.Errorf("second AbortMultipart = %v, want nil", err)
	}
	if _, err := b.Stat(ctx(t), k); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("after abort Stat error = %v, want ErrNotFound", err)
	}
}

func testAbortAll(t *testing.T, b backend.Backend) {
	k, other := key(t, ".bin"), key(t, ".bin")
	ids := make([]string, 2)
	for i := range ids {
		id, err := b.InitMultipart(ctx(t), k, "")
		if err != nil {
			t.Fatalf("InitMultipart: %v", err)
		}
		ids[i] = id
	}
	keep, err := b.InitMultipart(ctx(t), other, "")
	if err != nil {
		t.Fatalf("InitMultipart(other): %v", err)
	}
	t.Cleanup(func() { _ = b.AbortMultipart(context.Background(), other, keep) })
	if err := b.AbortMultipart(ctx(t), k, ""); err != nil {
		t.Fatalf("AbortMultipart(key, \"\"): %v", err)
	}
	for _, id := range ids {
		if _, err := b.PutPart(ctx(t), k, id, 1, bytes.NewReader([]byte("a")), 1); !errors.Is(err, backend.ErrSessionNotFound) {
			t.Errorf("PutPart on an aborted session error = %v, want ErrSessionNotFound", err)
		}
	}
	if _, err := b.PutPart(ctx(t), other, keep, 1, bytes.NewReader([]byte("a")), 1); err != nil {
		t.Errorf("the session of another key was aborted too: %v", err)
	}
}
