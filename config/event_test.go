package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEventEffective: storage and approval events get a transactional route when no rule
// covers them (the outbox, enabled for it, and its sink), and a rule that covers them is never
// overridden, transactional or not.
func TestEventEffective(t *testing.T) {
	t.Parallel()
	memoryRule := EventRoute{Pattern: "*", Transports: []string{TransportMemory}}
	svcRule := EventRoute{Pattern: "svc.*", Transports: []string{TransportMemory}}
	otherRule := EventRoute{Pattern: "shop.*", Transports: []string{TransportMemory}}
	storage := EventRoute{Pattern: StorageEventPattern, Transports: []string{TransportOutbox, TransportMemory}}
	approval := EventRoute{Pattern: ApprovalEventPattern, Transports: []string{TransportOutbox, TransportMemory}}
	tests := []struct {
		name       string
		change     func(*Event)
		wantRoutes []EventRoute
		wantOutbox bool
	}{
		{"default: the outbox to memory", func(*Event) {}, []EventRoute{storage, approval}, true},
		{"other rules kept first", func(e *Event) { e.Routing = []EventRoute{otherRule} },
			[]EventRoute{otherRule, storage, approval}, true},
		{"the configured sink", func(e *Event) {
			e.Transports.Outbox.Enabled = true
			e.Transports.Outbox.Sink = TransportKVStoreStream
		}, []EventRoute{{Pattern: StorageEventPattern, Transports: []string{TransportOutbox, TransportKVStoreStream}},
			{Pattern: ApprovalEventPattern, Transports: []string{TransportOutbox, TransportKVStoreStream}}}, true},
		{"a covering rule wins even when not transactional", func(e *Event) { e.Routing = []EventRoute{memoryRule} },
			[]EventRoute{memoryRule}, false},
		{"storage covered, approval added", func(e *Event) { e.Routing = []EventRoute{svcRule} },
			[]EventRoute{svcRule, approval}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := Default().Event
			tt.change(&e)
			before := append([]EventRoute(nil), e.Routing...)
			got := e.Effective()
			if diff := cmp.Diff(tt.wantRoutes, got.Routing); diff != "" {
				t.Errorf("routing mismatch (-want +got):\n%s", diff)
			}
			if got.Transports.Outbox.Enabled != tt.wantOutbox {
				t.Errorf("outbox.enabled = %v, want %v", got.Transports.Outbox.Enabled, tt.wantOutbox)
			}
			if diff := cmp.Diff(before, e.Routing); diff != "" {
				t.Errorf("Effective changed its receiver's routing (-before +after):\n%s", diff)
			}
		})
	}
}
