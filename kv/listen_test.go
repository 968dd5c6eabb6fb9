package kv_test

import (
	"context"
	"testing"
	"time"

	"github.com/svc-framework/svc/kv"
	"github.com/svc-framework/svc/svctest"
)

// TestListen: messages published on the channel reach fn in order; cancelling the context ends
// Listen with nil.
func TestListen(t *testing.T) {
	client := svctest.Redis(t)
	channel := svctest.UniquePrefix(t) + "listen"
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 4)
	done := make(chan error, 1)
	go func() { done <- kv.Listen(ctx, client, channel, func(p string) { got <- p }) }()
	svctest.Eventually(t, 5*time.Second, func() bool {
		n, err := client.PubSubNumSub(context.Background(), channel).Result()
		return err == nil && n[channel] == 1
	}, "subscribed")
	for _, m := range []string{"one", "two"} {
		if err := client.Publish(context.Background(), channel, m).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"one", "two"} {
		select {
		case p := <-got:
			if p != want {
				t.Errorf("payload = %q, want %q", p, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %q within 5s", want)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Listen after cancel = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Listen did not return after cancel")
	}
}
