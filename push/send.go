package push

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
)

// Send pushes msg from outside a server (the `svc push send` command): it publishes one relay
// frame that every running node delivers to its own connections. A separate process holds no
// sockets, so it needs svc.push.enabled (ErrDisabled) and the key-value store (kv nil:
// ErrRelayRequired); it returns the message's id.
func Send(ctx context.Context, cfg *config.Config, kv *redis.Client, msg Message, targets ...Target) (string, error) {
	if !cfg.Push.Enabled {
		return "", ErrDisabled
	}
	if kv == nil {
		return "", ErrRelayRequired
	}
	if cfg.App.Name == "" {
		return "", ErrAppNameRequired
	}
	if msg.Type == "" {
		return "", ErrTypeRequired
	}
	if err := validate(targets); err != nil {
		return "", err
	}
	now := time.Now()
	if msg.ID == "" {
		msg.ID = newMessageID(now)
	}
	frame, err := msg.encode(now)
	if err != nil {
		return "", err
	}
	f := relayFrame{Kind: relayMessage, Origin: "cli-" + newNodeID(), Envelope: frame, Targets: targets}
	return msg.ID, publishFrame(ctx, kv, Channel(cfg), f)
}
