package security

import (
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
)

// TestMetrics: New registers the login counters on Deps.Metrics (issue #32 item 7) with the
// names and help texts docs/operations.md lists and counts the module's own events, while the
// host's sink still receives them; with Deps.Metrics nil no counting sink is added.
func TestMetrics(t *testing.T) {
	for name, reg := range map[string]*prometheus.Registry{"off": nil, "on": prometheus.NewRegistry()} {
		t.Run(name, func(t *testing.T) {
			var host []string
			deps := app.Platform{Config: config.Default(), DB: testservice.OpenDB(t, testservice.DataSource(t, config.SQLite)),
				Logger: slog.New(slog.DiscardHandler), Clock: time.Now}
			if reg != nil {
				deps.Metrics = reg // a nil *Registry in the interface would not be nil
			}
			s, err := New(deps, Options{Events: EventSinkFunc(func(_ context.Context, e Event) { host = append(host, e.Type) })})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			ctx := context.Background()
			for _, typ := range []string{EventLoginSucceeded, EventLoginFailed, EventLoginFailed, EventAccountLocked, EventLogout} {
				s.events.emit(ctx, Event{Type: typ})
			}
			if len(host) != 5 {
				t.Errorf("host sink got %v, want all 5 events", host)
			}
			if reg == nil {
				if _, ok := s.events.sink.(eventSinks); ok {
					t.Errorf("metrics off added a sink: %#v", s.events.sink)
				}
				return
			}
			const want = `# HELP svc_security_lockouts_total Accounts locked by the lockout rule.
# TYPE svc_security_lockouts_total counter
svc_security_lockouts_total 1
# HELP svc_security_logins_total Login attempts by result (success, failure).
# TYPE svc_security_logins_total counter
svc_security_logins_total{result="failure"} 2
svc_security_logins_total{result="success"} 1
`
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
				t.Error(err)
			}
		})
	}
}
