package main

import (
	"math"
	"testing"
	"time"
)

// TestExplains: a failed answer is excused only by a fault under way on the node that gave it
// (or on a shared service it depends on); an S3 stop only excuses storage operations; a fault
// that missed its recovery deadline stops excusing at the deadline.
func TestExplains(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	kill := &fault{kind: "kill", node: 1, start: at(10), healed: at(12), settled: at(12), recovered: at(13), deadline: 5 * time.Second}
	s3 := &fault{kind: "s3stop", node: -1, start: at(20), healed: at(25), settled: at(25), recovered: at(26), deadline: 12 * time.Second}
	late := &fault{kind: "pause", node: 2, start: at(40), healed: at(45), settled: at(45), recovered: at(70), deadline: 5 * time.Second}
	tests := []struct {
		name string
		f    *fault
		s    sample
		want bool
	}{
		{"target node inside", kill, sample{kind: "auth.login", node: 1, start: at(11), dur: time.Second}, true},
		{"other node inside", kill, sample{kind: "auth.login", node: 0, start: at(11), dur: time.Second}, false},
		{"target node after recovery", kill, sample{kind: "auth.login", node: 1, start: at(13.5), dur: 100 * time.Millisecond}, false},
		{"request spanning the recovery", kill, sample{kind: "auth.login", node: 1, start: at(12.9), dur: time.Second}, true},
		{"s3 stop, storage op", s3, sample{kind: "storage.upload_part", node: 0, start: at(21), dur: time.Second}, true},
		{"s3 stop, other op", s3, sample{kind: "approval.decide", node: 0, start: at(21), dur: time.Second}, false},
		{"late recovery, before the deadline", late, sample{kind: "cron.query", node: 2, start: at(49), dur: time.Second}, true},
		{"late recovery, after the deadline", late, sample{kind: "cron.query", node: 2, start: at(60), dur: time.Second}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.f.explains(tt.s); got != tt.want {
				t.Errorf("explains = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestWindowShare: overlapping windows count once, and the share is of the loaded phase.
func TestWindowShare(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	r := &recorder{began: at(0), ended: at(100), faults: []*fault{
		{kind: "kill", start: at(10), healed: at(15), settled: at(15), recovered: at(20), deadline: time.Minute},
		{kind: "dbrestart", start: at(18), healed: at(25), settled: at(25), recovered: at(30), deadline: time.Minute},
		{kind: "pause", start: at(95), healed: at(99), settled: at(99), recovered: at(110), deadline: time.Minute},
	}}
	if got, want := r.windowShare(), 0.25; math.Abs(got-want) > 1e-9 {
		t.Errorf("windowShare = %v, want %v", got, want)
	}
}

// TestMinimumSample: a check that looked at fewer items than its minimum fails.
func TestMinimumSample(t *testing.T) {
	r := &recorder{}
	c := newCheck("x", 3)
	c.checked = 2
	r.addCheck(*c)
	ok := newCheck("y", 3)
	ok.checked = 3
	r.addCheck(*ok)
	if got := r.violations(); got != 1 {
		t.Errorf("violations = %d, want 1 (x checked 2 of a minimum 3)", got)
	}
}
