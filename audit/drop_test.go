package audit

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/rpc"
)

// TestDropCountedAndLoggedAtBoundedRate: records that find the queue full are counted in
// svc_audit_records_dropped_total{reason="queue_full"}, never block, and are logged once per
// minute with the number dropped since the last line.
func TestDropCountedAndLoggedAtBoundedRate(t *testing.T) {
	t.Parallel()
	clock := testservice.NewClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	cfg := config.Default()
	cfg.Audit.Enabled, cfg.Audit.QueueSize = true, 1
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	s, err := New(app.Platform{Config: cfg, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Clock: clock.Now, Metrics: reg}, Options{NodeID: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	sink := s.Sink()
	for range 5 {
		sink.Audit(context.Background(), rpc.AuditRecord{Resource: "r", Action: "a"}) // no writer runs: the queue stays full
	}
	clock.Advance(30 * time.Second)
	s.Record(Event{Action: "login_failed"})
	if got := strings.Count(logs.String(), "records dropped"); got != 1 {
		t.Errorf("log lines within a minute = %d, want 1:\n%s", got, logs.String())
	}
	clock.Advance(31 * time.Second)
	s.Record(Event{Action: "login_failed"})
	if got := strings.Count(logs.String(), "records dropped"); got != 2 || !strings.Contains(logs.String(), "dropped=5") {
		t.Errorf("after a minute: %d log lines, want 2, the second counting 5 drops:\n%s", got, logs.String())
	}
	if got := testutil.ToFloat64(s.metrics.dropped.WithLabelValues(dropQueueFull)); got != 6 {
		t.Errorf("svc_audit_records_dropped_total{queue_full} = %v, want 6", got)
	}
	if c := s.Counts(); c.Dropped != 6 || c.Queued != 1 {
		t.Errorf("counts = %+v, want 6 dropped, 1 queued", c)
	}
}
