package kv

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ErrSubscriptionClosed: the subscription's channel closed while its context was still live.
var ErrSubscriptionClosed = errors.New("kv: subscription closed")

// Listen subscribes to channel and calls fn with each message's payload, in order, until ctx
// ends (then nil) or the subscription fails. It is the body of the loop workers that follow a
// publish/subscribe channel (security's change feed, push's relay); the worker runner restarts
// them after an error.
func Listen(ctx context.Context, client *redis.Client, channel string, fn func(payload string)) error {
	sub := client.Subscribe(ctx, channel)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("kv: subscribe to %s: %w", channel, err)
	}
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-ch:
			if !ok {
				return fmt.Errorf("%s: %w", channel, ErrSubscriptionClosed)
			}
			fn(msg.Payload)
		}
	}
}
