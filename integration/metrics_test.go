package integration

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/internal/testservice"
)

// noBodies is an app.BodyReader New accepts; these tests read no body.
type noBodies struct{}

func (noBodies) ReadBody(http.ResponseWriter, *http.Request, int64, int) ([]byte, func(), error) {
	return nil, func() {}, errors.New("no body in this test")
}

// TestMetrics: New registers the invocation counters on Deps.Metrics (issue #32 item 7) with
// the names, labels and help texts docs/operations.md lists, read from Stats at scrape time.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	deps := app.Platform{Config: config.Default(), DB: testservice.OpenDB(t, testservice.DataSource(t, config.SQLite)),
		Clock: time.Now, Logger: slog.New(slog.DiscardHandler), Metrics: reg}
	s, err := New(deps, app.API{Bodies: noBodies{}}, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	s.Stats().Record("erp", "orders", "outbound", "", 2*time.Second, nil)
	s.Stats().Record("erp", "orders", "outbound", "timeout", time.Second, errors.New("slow"))
	const want = `# HELP svc_integration_invocation_seconds_total Summed duration of the invocations counted by svc_integration_invocations_total.
# TYPE svc_integration_invocation_seconds_total counter
svc_integration_invocation_seconds_total{contract="orders",direction="outbound",system="erp"} 3
# HELP svc_integration_invocations_total Integration invocations on this node by system, contract, direction and failure kind (none = success).
# TYPE svc_integration_invocations_total counter
svc_integration_invocations_total{contract="orders",direction="outbound",failure="none",system="erp"} 1
svc_integration_invocations_total{contract="orders",direction="outbound",failure="timeout",system="erp"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
