package token

import (
	"runtime"
	"testing"
	"time"
)

// TestRevokedSetBytesPerFamily (issues #34, #43): a remembered family costs at most 64 bytes of
// Go heap at every size from 1 000 to 1 000 000 families, measured after a collection every
// 1 000 families up to 10 000 and every 10 000 after that (the map grows table by table
// beyond its first 1 024 slots, so the cost per entry moves smoothly between those points).
func TestRevokedSetBytesPerFamily(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var r revokedSet
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	worst, per := 0.0, 0.0
	for i := 1; i <= 1_000_000; i++ {
		r.add(newID(), now.Add(time.Hour), now)
		if (i <= 10_000 && i%1000 == 0) || i%10_000 == 0 {
			per = float64(int64(heap())-int64(before)) / float64(r.len())
			worst = max(worst, per)
		}
	}
	t.Logf("1 000 000 families: %.1f bytes/family of heap; worst from 1 000 on %.1f", per, worst)
	if worst > 64 {
		t.Fatalf("worst %.1f bytes per family, want ≤ 64", worst)
	}
}

// TestRevokedSet: membership, expiry, the later expiry winning, ids that are not UUIDs, and
// sweeps that drop expired entries.
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
	r.sweep(later)
	if r.len() != 2501+1 {
		t.Fatalf("after the sweep: %d families, want 2502", r.len())
	}
	for i, id := range ids {
		if got := r.revoked(id, later); got != (i%2 == 0 || i == 1) {
			t.Fatalf("family %d revoked = %v after the sweep", i, got)
		}
	}
	r.sweep(now.Add(3 * time.Hour))
	if r.len() != 0 || r.ids != nil || r.other != nil {
		t.Fatalf("after everything expired: %d families, maps %v %v, want none", r.len(), r.ids != nil, r.other != nil)
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
