package event_test

import (
	"os"
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/event/kvstream"
	"github.com/svc-framework/svc/event/memory"
	"github.com/svc-framework/svc/event/outbox"
)

// TestMain hands the transports' factories to package event's own tests (event.TestTransports):
// the transports import package event, so only this external test file can import them.
func TestMain(m *testing.M) {
	event.TestTransports = map[string]event.Factory{
		config.TransportMemory:        memory.New,
		config.TransportTxMemory:      memory.NewTx,
		config.TransportOutbox:        outbox.New,
		config.TransportKVStoreStream: kvstream.New,
	}
	os.Exit(m.Run())
}
