package security

import (
	"runtime/metrics"
	"testing"
)

func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A released hash whose memory exceeds the rest of the live heap runs a collection; a small
// one against a large live heap does not.
func TestHashReclaim(t *testing.T) {
	big := newHashReclaim(1<<40, 2) // more than any test binary's live heap
	before := gcCycles()
	big.released()
	if gcCycles() == before {
		t.Fatal("released returned without a finished GC cycle after a hash larger than the live heap")
	}
	if big.since != 0 {
		t.Errorf("since = %d after a started cycle, want 0", big.since)
	}

	small := newHashReclaim(1, 2) // one byte per hash: never more than the live heap
	small.released()
	if small.since != 1 {
		t.Errorf("since = %d after one tiny hash, want no cycle and since 1", small.since)
	}
	var nilReclaim *hashReclaim
	nilReclaim.released() // bcrypt hashers have none
}
