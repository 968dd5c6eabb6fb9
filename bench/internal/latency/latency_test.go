package latency

import (
	"testing"
	"time"
)

func TestMillis(t *testing.T) {
	ds := []time.Duration{4 * time.Millisecond, time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond}
	for _, c := range []struct {
		p    float64
		want float64
	}{{0, 1}, {0.5, 3}, {0.99, 4}, {1, 4}} {
		if got := Millis(ds, c.p); got != c.want {
			t.Errorf("Millis(p=%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if ds[0] != 4*time.Millisecond {
		t.Error("Millis sorted its argument")
	}
	if got := Millis(nil, 0.5); got != 0 {
		t.Errorf("Millis(nil) = %v, want 0", got)
	}
}
