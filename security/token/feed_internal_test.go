package token

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestChangeCursor: new seqs are applied once; a seq missing below the newest one is asked for
// again and applied when it appears (a transaction that committed late), until changeGapWait.
func TestChangeCursor(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	c := changeCursor{high: 10}
	steps := []struct {
		name        string
		seqs        []int64
		at          time.Duration
		wantFresh   []int64
		wantMissing []int64
	}{
		{"in order", []int64{11, 12}, 0, []int64{11, 12}, []int64{}},
		{"read again", []int64{12}, 0, nil, []int64{}},
		{"gap", []int64{13, 15, 16}, time.Second, []int64{13, 15, 16}, []int64{14}},
		{"gap filled late", []int64{14, 15, 16}, 2 * time.Second, []int64{14}, []int64{}},
		{"new gap", []int64{18}, 3 * time.Second, []int64{18}, []int64{17}},
		{"gap given up", nil, 3*time.Second + changeGapWait + time.Millisecond, nil, []int64{}},
		{"late after giving up", []int64{17}, 20 * time.Second, nil, []int64{}},
	}
	for _, st := range steps {
		fresh := c.observe(st.seqs, t0.Add(st.at))
		if diff := cmp.Diff(st.wantFresh, fresh); diff != "" {
			t.Errorf("%s: fresh (-want +got):\n%s", st.name, diff)
		}
		if diff := cmp.Diff(st.wantMissing, c.missing()); diff != "" {
			t.Errorf("%s: missing (-want +got):\n%s", st.name, diff)
		}
	}
}
