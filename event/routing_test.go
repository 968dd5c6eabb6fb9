package event

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/config"
)

// TestWithTransactionalRoutes: the patterns the modules declare (storage's and approval's here)
// get a transactional route when no rule covers them (the outbox, enabled for it, and its sink),
// and a rule that covers them is never overridden, transactional or not.
func TestWithTransactionalRoutes(t *testing.T) {
	t.Parallel()
	const storagePattern, approvalPattern = "svc.storage.*", "approval.*"
	memoryRule := config.EventRoute{Pattern: "*", Transports: []string{config.TransportMemory}}
	svcRule := config.EventRoute{Pattern: "svc.*", Transports: []string{config.TransportMemory}}
	otherRule := config.EventRoute{Pattern: "shop.*", Transports: []string{config.TransportMemory}}
	storage := config.EventRoute{Pattern: storagePattern, Transports: []string{config.TransportOutbox, config.TransportMemory}}
	approval := config.EventRoute{Pattern: approvalPattern, Transports: []string{config.TransportOutbox, config.TransportMemory}}
	tests := []struct {
		name       string
		change     func(*config.Event)
		wantRoutes []config.EventRoute
		wantOutbox bool
	}{
		{"default: the outbox to memory", func(*config.Event) {}, []config.EventRoute{storage, approval}, true},
		{"other rules kept first", func(e *config.Event) { e.Routing = []config.EventRoute{otherRule} },
			[]config.EventRoute{otherRule, storage, approval}, true},
		{"the configured sink", func(e *config.Event) {
			e.Transports.Outbox.Enabled = true
			e.Transports.Outbox.Sink = config.TransportKVStoreStream
		}, []config.EventRoute{{Pattern: storagePattern, Transports: []string{config.TransportOutbox, config.TransportKVStoreStream}},
			{Pattern: approvalPattern, Transports: []string{config.TransportOutbox, config.TransportKVStoreStream}}}, true},
		{"a covering rule wins even when not transactional", func(e *config.Event) { e.Routing = []config.EventRoute{memoryRule} },
			[]config.EventRoute{memoryRule}, false},
		{"storage covered, approval added", func(e *config.Event) { e.Routing = []config.EventRoute{svcRule} },
			[]config.EventRoute{svcRule, approval}, true},
		{"the shipped rules: nothing added", func(e *config.Event) {
			e.Transports.Outbox.Enabled = true
			e.Routing = []config.EventRoute{storage, approval}
		}, []config.EventRoute{storage, approval}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := config.Default().Event
			tt.change(&e)
			before := append([]config.EventRoute(nil), e.Routing...)
			got := WithTransactionalRoutes(e, storagePattern, approvalPattern)
			if diff := cmp.Diff(tt.wantRoutes, got.Routing); diff != "" {
				t.Errorf("routing mismatch (-want +got):\n%s", diff)
			}
			if got.Transports.Outbox.Enabled != tt.wantOutbox {
				t.Errorf("outbox.enabled = %v, want %v", got.Transports.Outbox.Enabled, tt.wantOutbox)
			}
			if diff := cmp.Diff(before, e.Routing); diff != "" {
				t.Errorf("WithTransactionalRoutes changed its argument's routing (-before +after):\n%s", diff)
			}
		})
	}
}
