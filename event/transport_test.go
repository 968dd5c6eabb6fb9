package event

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/config"
)

// fakeTransport is a transport built by a test factory, with the workers it was given.
type fakeTransport struct {
	Transport // the memory transport it delegates to (nil: never used)
	workers   []Worker
}

func (f *fakeTransport) Workers() []Worker { return f.workers }

// TestTransportFactories (issue #32 item 2): New builds each transport svc.event enables from
// the factory Deps.Transports gives for its name — no registry — each once, a transport looked
// up by another's factory first; an enabled transport without a factory fails naming the key,
// and a lookup of a transport that is not enabled fails.
func TestTransportFactories(t *testing.T) {
	t.Parallel()
	cfg := defaultConfig()
	cfg.Transports.TxMemory.Enabled = true
	cfg.Transports.Outbox.Enabled = true
	cfg.Transports.Outbox.Sink = config.TransportTxMemory
	calls := map[string]int{}
	var lookupErr error
	fake := func(h Host) (Transport, error) {
		calls[h.Name]++
		if h.Name == config.TransportOutbox { // the outbox looks its sink up, built on demand
			if _, err := h.Lookup(config.TransportTxMemory); err != nil {
				return nil, err
			}
			_, lookupErr = h.Lookup(config.TransportKVStoreStream)
		}
		return &fakeTransport{Transport: memoryFor(t, h)}, nil
	}
	deps := Deps{Transports: map[string]Factory{config.TransportMemory: fake, config.TransportTxMemory: fake,
		config.TransportOutbox: fake}}
	b, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"memory": 1, "tx_memory": 1, "outbox": 1}, calls); diff != "" {
		t.Errorf("factory calls (-want +got):\n%s", diff)
	}
	for _, name := range []string{"memory", "tx_memory", "outbox"} {
		if tr, _ := b.Transport(name); tr == nil {
			t.Errorf("transport %s not built", name)
		} else if _, ok := tr.(*fakeTransport); !ok {
			t.Errorf("transport %s is %T, want the one of Deps.Transports", name, tr)
		}
	}
	if !errors.Is(lookupErr, ErrTransportNotFound) || !strings.Contains(lookupErr.Error(), "kvstore_stream: not enabled") {
		t.Errorf("lookup of a disabled transport = %v, want ErrTransportNotFound (not enabled)", lookupErr)
	}

	delete(deps.Transports, config.TransportTxMemory)
	_, err = New(cfg, deps)
	if !errors.Is(err, ErrTransportNotFound) || !strings.Contains(err.Error(), "svc.event.transports.tx_memory: no factory in event.Deps.Transports") {
		t.Errorf("New without a tx_memory factory = %v, want ErrTransportNotFound naming the key", err)
	}
}

// TestTransportSelfLookup: a factory that looks itself up fails instead of recursing.
func TestTransportSelfLookup(t *testing.T) {
	t.Parallel()
	self := func(h Host) (Transport, error) { return h.Lookup(h.Name) }
	_, err := New(defaultConfig(), Deps{Transports: map[string]Factory{config.TransportMemory: self}})
	if !errors.Is(err, ErrTransportNotFound) || !strings.Contains(err.Error(), "depends on itself") {
		t.Errorf("New = %v, want ErrTransportNotFound (depends on itself)", err)
	}
}

// TestBusWorkers (issue #32 item 3): the bus lists its background jobs for the caller's worker
// runtime — the inbox cleanup and every transport's workers, named <transport>.<job>, in a
// stable order — so the server runs them on app.Workers like every module's.
func TestBusWorkers(t *testing.T) {
	t.Parallel()
	cfg := defaultConfig()
	cfg.Middleware.Inbox = true
	cfg.Transports.TxMemory.Enabled = true
	noop := func(context.Context) error { return nil }
	fake := func(h Host) (Transport, error) {
		var ws []Worker
		if h.Name == config.TransportTxMemory {
			ws = []Worker{{Name: "reaper", Interval: time.Minute, Run: noop}, {Name: "sweep", Run: noop}}
		}
		return &fakeTransport{Transport: memoryFor(t, h), workers: ws}, nil
	}
	b := newBus(t, cfg, Deps{DB: migratedDB(t, config.SQLite),
		Transports: map[string]Factory{config.TransportMemory: fake, config.TransportTxMemory: fake}})
	var names []string
	for _, w := range b.Workers() {
		names = append(names, w.Name)
	}
	if diff := cmp.Diff([]string{"inbox.cleanup", "tx_memory.reaper", "tx_memory.sweep"}, names); diff != "" {
		t.Errorf("Workers (-want +got):\n%s", diff)
	}
	cleanup := b.Workers()[0]
	if err := cleanup.Run(context.Background()); cleanup.Interval != cfg.Inbox.CleanupInterval || err != nil {
		t.Errorf("inbox.cleanup = every %s, run error %v; want inbox.cleanup_interval and a clean run", cleanup.Interval, err)
	}
}

// memoryFor builds a real memory transport for h, whatever its name.
func memoryFor(t *testing.T, h Host) Transport {
	t.Helper()
	tr, err := TestTransports[config.TransportMemory](h)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
