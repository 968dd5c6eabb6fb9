package security

import (
	"runtime"
	"testing"
	"time"
)

// TestRevokedSetBytesPerFamily (issue #34): a remembered family costs at most 64 bytes, at
// every size from 1 000 to 1 000 000 families, measured from the table's slots and from the Go
// heap (which must not hold the table: it lives in an anonymous mapping).
func TestRevokedSetBytesPerFamily(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var r revokedSet
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	worst := 0.0
	for i := 1; i <= 1_000_000; i++ {
		r.add(newID(), now.Add(time.Hour), now)
		if i >= 1000 && i%997 == 0 {
			worst = max(worst, float64(r.bytes())/float64(r.len()))
		}
	}
	per := float64(r.bytes()) / float64(r.len())
	t.Logf("1 000 000 families: table %d bytes, %.1f bytes/family; worst from 1 000 on %.1f", r.bytes(), per, worst)
	if worst > 64 {
		t.Fatalf("worst %.1f bytes per family, want ≤ 64", worst)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 1<<20 {
		t.Fatalf("the Go heap grew by %d bytes for the set, want the table outside the heap", grown)
	}
}

// TestRevokedSet: membership, expiry, the later expiry winning, ids that are not UUIDs, and
// rebuilds that drop expired entries and shrink the table.
func TestRevokedSet(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var r revokedSet
	ids := make([]string, 5000)
	for i := range ids {
		ids[i] = newID()
		exp := now.Add(time.Hour)
		if i%2 == 1 {
			exp = now.Add(time.Minute)
		}
		r.add(ids[i], exp, now)
	}
	for i, id := range ids {
		if !r.revoked(id, now) {
			t.Fatalf("family %d not revoked", i)
		}
	}
	if r.revoked(newID(), now) || r.revoked("", now) {
		t.Fatal("an unknown family is revoked")
	}
	later := now.Add(2 * time.Minute)
	for i, id := range ids {
		if got := r.revoked(id, later); got != (i%2 == 0) {
			t.Fatalf("family %d revoked = %v after its expiry window", i, got)
		}
	}
	r.add(ids[1], later.Add(time.Hour), later) // revoked again: the later expiry wins
	r.add(ids[0], later, later)                // an earlier expiry does not shorten
	if !r.revoked(ids[1], later) || !r.revoked(ids[0], later.Add(30*time.Minute)) {
		t.Fatal("re-adding a family lost its expiry")
	}
	r.add("not-a-uuid", later.Add(time.Hour), later)
	if !r.revoked("not-a-uuid", later) || r.revoked("not-a-uuid", later.Add(2*time.Hour)) {
		t.Fatal("a non-UUID family id is not remembered until its expiry")
	}
	big := r.bytes()
	r.sweep(later)
	if r.len() != 2501+1 || r.bytes() >= big {
		t.Fatalf("after the sweep: %d families in %d bytes (was %d), want 2502 in a smaller table", r.len(), r.bytes(), big)
	}
	for i, id := range ids {
		if got := r.revoked(id, later); got != (i%2 == 0 || i == 1) {
			t.Fatalf("family %d revoked = %v after the sweep", i, got)
		}
	}
	r.sweep(now.Add(3 * time.Hour))
	if r.len() != 0 || r.bytes() != revokedMinSlots*revokedSlotBytes {
		t.Fatalf("after everything expired: %d families in %d bytes", r.len(), r.bytes())
	}
}

// BenchmarkRevokedSetLookup is the per-request cost of the family check.
func BenchmarkRevokedSetLookup(b *testing.B) {
	now := time.Unix(1_800_000_000, 0)
	var r revokedSet
	for range 100_000 {
		r.add(newID(), now.Add(time.Hour), now)
	}
	id := newID()
	for b.Loop() {
		r.revoked(id, now)
	}
}
