package memory

import (
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event/internal/eventtest"
)

// transports are the factories of the tests' buses: memory and tx_memory.
var transports = eventtest.Transports{config.TransportMemory: New, config.TransportTxMemory: NewTx}

// The shared helpers of event/internal/eventtest under the names the tests had in package event.
type (
	testEvent  = eventtest.Event
	otherEvent = eventtest.OtherEvent
)

var (
	defaultConfig = eventtest.DefaultConfig
	newBus        = transports.NewBus
	start         = eventtest.Start
	migratedDB    = eventtest.MigratedDB
	newRecorder   = eventtest.NewRecorder
	eventually    = eventtest.Eventually
)
