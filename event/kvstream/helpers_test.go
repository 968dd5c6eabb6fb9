package kvstream

import (
	"github.com/svc-framework/svc/event/internal/eventtest"
	_ "github.com/svc-framework/svc/event/memory" // the memory transport (the sinks of the tests)
)

// The shared helpers of event/internal/eventtest under the names the tests had in package event.
type (
	testEvent = eventtest.Event
	recorder  = eventtest.Recorder
)

var (
	newFakeClock  = eventtest.NewFakeClock
	defaultConfig = eventtest.DefaultConfig
	newBus        = eventtest.NewBus
	start         = eventtest.Start
	migratedDB    = eventtest.MigratedDB
	eachDB        = eventtest.EachDB
	newRecorder   = eventtest.NewRecorder
	eventually    = eventtest.Eventually
	recordedBus   = eventtest.RecordedBus
	testRedis     = eventtest.Redis
	streamConfig  = eventtest.StreamConfig
)
