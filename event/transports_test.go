package event_test

// The transports register themselves with the bus from their packages' init; this external test
// file links them into the test binary of package event, whose tests build buses with them.
import (
	_ "github.com/svc-framework/svc/event/kvstream"
	_ "github.com/svc-framework/svc/event/memory"
	_ "github.com/svc-framework/svc/event/outbox"
)
