// Command watermill compares svc's memory transport with Watermill's in-process gochannel
// pub/sub in one run (publish → handler, one subscriber) and prints both rates and their ratio.
// It is a module of its own (go.mod with a replace to the repository root) so Watermill never
// becomes a dependency of svc. Run: cd bench/event/watermill && go run . [-n 1000000]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/event/memory"
)

// tick is the event both sides publish.
type tick struct {
	N int `json:"n"`
}

func (tick) EventType() string { return "svc.bench.tick" }

func main() {
	n := flag.Int("n", 1_000_000, "events per side")
	flag.Parse()
	svcRate, err := runSvc(*n)
	if err != nil {
		log.Fatal(err)
	}
	wmRate, err := runWatermill(*n)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("svc memory transport:  %12.0f events/s\n", svcRate)
	fmt.Printf("watermill gochannel:   %12.0f events/s\n", wmRate)
	fmt.Printf("ratio svc/watermill:   %12.2f\n", svcRate/wmRate)
}

// runSvc publishes n events on the memory transport and waits until the handler saw them all.
func runSvc(n int) (float64, error) {
	cfg := config.Default().Event
	cfg.Transports.Memory.FullPolicy = config.FullPolicyBlock
	cfg.Transports.Memory.QueueSize = 4096
	bus, err := event.New(cfg, event.Deps{Transports: map[string]event.Factory{config.TransportMemory: memory.New}})
	if err != nil {
		return 0, err
	}
	var got atomic.Int64
	done := make(chan struct{})
	if _, err := bus.Subscribe("svc.bench.tick", func(context.Context, *event.Envelope) error {
		if got.Add(1) == int64(n) {
			close(done)
		}
		return nil
	}); err != nil {
		return 0, err
	}
	ctx := context.Background()
	if err := bus.Start(ctx); err != nil {
		return 0, err
	}
	defer func() { _ = bus.Stop(ctx) }()
	start := time.Now()
	for i := range n {
		if err := bus.Publish(ctx, tick{N: i}); err != nil {
			return 0, err
		}
	}
	<-done
	return float64(n) / time.Since(start).Seconds(), nil
}

// runWatermill does the same through gochannel, acking each message in the subscriber.
func runWatermill(n int) (float64, error) {
	ps := gochannel.NewGoChannel(gochannel.Config{OutputChannelBuffer: 4096}, watermill.NopLogger{})
	defer func() { _ = ps.Close() }()
	msgs, err := ps.Subscribe(context.Background(), "svc.bench.tick")
	if err != nil {
		return 0, err
	}
	done := make(chan struct{})
	go func() {
		i := 0
		for m := range msgs {
			m.Ack()
			if i++; i == n {
				close(done)
			}
		}
	}()
	start := time.Now()
	for i := range n {
		m := message.NewMessage(watermill.NewUUID(), []byte(`{"n":`+strconv.Itoa(i)+`}`))
		if err := ps.Publish("svc.bench.tick", m); err != nil {
			return 0, err
		}
	}
	<-done
	return float64(n) / time.Since(start).Seconds(), nil
}
