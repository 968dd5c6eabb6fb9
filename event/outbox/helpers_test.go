package outbox

import (
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event/internal/eventtest"
	"github.com/svc-framework/svc/event/kvstream"
	"github.com/svc-framework/svc/event/memory"
)

// transports are the factories of the tests' buses: the outbox, the memory sink (and
// tx_memory), and the stream sink of the crash test (b).
var transports = eventtest.Transports{config.TransportMemory: memory.New, config.TransportTxMemory: memory.NewTx,
	config.TransportOutbox: New, config.TransportKVStoreStream: kvstream.New}

// The shared helpers of event/internal/eventtest under the names the tests had in package event.
type (
	testEvent = eventtest.Event
)

var (
	newFakeClock  = eventtest.NewFakeClock
	defaultConfig = eventtest.DefaultConfig
	newBus        = transports.NewBus
	recordedBus   = transports.RecordedBus
	start         = eventtest.Start
	startBus      = eventtest.StartBus
	migratedDB    = eventtest.MigratedDB
	eachDB        = eventtest.EachDB
	newRecorder   = eventtest.NewRecorder
	eventually    = eventtest.Eventually
	testRedis     = eventtest.Redis
	streamConfig  = eventtest.StreamConfig
)
