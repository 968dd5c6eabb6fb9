package memory

import "github.com/svc-framework/svc/event/internal/eventtest"

// The shared helpers of event/internal/eventtest under the names the tests had in package event.
type (
	testEvent  = eventtest.Event
	otherEvent = eventtest.OtherEvent
)

var (
	defaultConfig = eventtest.DefaultConfig
	newBus        = eventtest.NewBus
	start         = eventtest.Start
	migratedDB    = eventtest.MigratedDB
	newRecorder   = eventtest.NewRecorder
	eventually    = eventtest.Eventually
)
