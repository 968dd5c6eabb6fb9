package kvstream

import (
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event/internal/eventtest"
	"github.com/svc-framework/svc/event/memory"
)

// transports are the factories of the tests' buses: the stream and memory.
var transports = eventtest.Transports{config.TransportMemory: memory.New, config.TransportKVStoreStream: New}

// The shared helpers of event/internal/eventtest under the names the tests had in package event.
type (
	testEvent = eventtest.Event
)

var (
	defaultConfig = eventtest.DefaultConfig
	newBus        = transports.NewBus
	start         = eventtest.Start
	startBus      = eventtest.StartBus
	newRecorder   = eventtest.NewRecorder
	eventually    = eventtest.Eventually
	testRedis     = eventtest.Redis
	streamConfig  = eventtest.StreamConfig
)
